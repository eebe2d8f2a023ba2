-- Labels of the conversations of chunk $chunk (chunk_records.sql), newest first.
SELECT conversation_id, passed, reward, kind, labeled_by, created_unix_nano
FROM label_chunks
WHERE chunk = $chunk
ORDER BY created_unix_nano DESC;
