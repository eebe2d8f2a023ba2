-- One model answer (processor/stance_model.py). Kept once per (conversation, ask, model)
-- by the anti-join rather than ON CONFLICT: a DuckLake store has no primary keys.
INSERT INTO stance_cache
    (conversation_id, ask_hash, model, stance, answer, pattern_stance, asked_unix_nano)
SELECT n.*
FROM (VALUES (?, ?, ?, ?, ?, ?, ?))
    AS n(conversation_id, ask_hash, model, stance, answer, pattern_stance, asked_unix_nano)
WHERE NOT EXISTS (
    SELECT 1 FROM stance_cache AS c
    WHERE c.conversation_id = n.conversation_id AND c.ask_hash = n.ask_hash
      AND c.model = n.model);
