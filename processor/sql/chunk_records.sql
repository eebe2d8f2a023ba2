-- Reads the table otlp_log_records, not the view `log_records`: by row id (see
-- chunk_plan.sql).
-- After chunk_plan.sql: the log records (by row id) and the labels of each chunk's
-- conversations, matched as chunk_logs.sql and chunk_labels.sql read them.
CREATE OR REPLACE TEMP TABLE log_chunks AS
SELECT l.rowid AS log_row, c.chunk
FROM otlp_log_records AS l
JOIN trace_keys AS k ON k.trace_id = l.trace_id
JOIN (SELECT DISTINCT conversation_id, chunk FROM span_chunks) AS c
  ON c.conversation_id = k.conversation_id;

-- Labels match by conversation id or by trace id.
CREATE OR REPLACE TEMP TABLE label_chunks AS
SELECT DISTINCT c.chunk, k.conversation_id, b.passed, b.reward, b.kind, b.labeled_by,
       b.created_unix_nano
FROM labels AS b
JOIN trace_keys AS k ON b.target = k.conversation_id OR b.target = k.trace_id
JOIN (SELECT DISTINCT conversation_id, chunk FROM span_chunks) AS c
  ON c.conversation_id = k.conversation_id;
