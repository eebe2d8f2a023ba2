-- After chunk_plan.sql: which chunks have log records, and the commits (ingest_seq) their
-- records lie in, read from the collector's view `log_records`; and the labels of each
-- chunk's conversations, matched as chunk_logs.sql and chunk_labels.sql read them.
CREATE OR REPLACE TEMP TABLE log_chunks AS
SELECT c.chunk, min(l.ingest_seq) AS first_seq, max(l.ingest_seq) AS last_seq
FROM log_records AS l
JOIN trace_chunks AS c ON c.trace_id = l.trace_id
GROUP BY c.chunk;

-- Labels match by conversation id or by trace id.
CREATE OR REPLACE TEMP TABLE label_chunks AS
SELECT DISTINCT c.chunk, k.conversation_id, b.passed, b.reward, b.kind, b.labeled_by,
       b.created_unix_nano
FROM labels AS b
JOIN trace_keys AS k ON b.target = k.conversation_id OR b.target = k.trace_id
JOIN (SELECT DISTINCT conversation_id, chunk FROM trace_chunks) AS c
  ON c.conversation_id = k.conversation_id;
