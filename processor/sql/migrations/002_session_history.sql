-- The history axis across a session (processor/sql/session_history.sql): the value
-- placed from the conversation alone is kept here, so the session post-pass can always
-- recompute `history` from it, whatever order a session's conversations arrive in.
-- NULL on a freshly built row until the post-pass copies `history` into it.
ALTER TABLE conversations ADD COLUMN history_within VARCHAR;
