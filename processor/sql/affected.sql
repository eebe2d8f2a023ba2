-- Conversations touched since the watermarks (the collector's ingest_seq, a monotonic
-- commit sequence): new spans ($1), new log records ($2), new
-- labels ($3, matched by conversation id or trace id).
CREATE OR REPLACE TEMP TABLE affected AS
SELECT DISTINCT k.conversation_id
FROM (SELECT DISTINCT trace_id FROM otlp_spans WHERE ingest_seq > $1) AS s
JOIN trace_keys AS k USING (trace_id)
UNION
SELECT DISTINCT k.conversation_id
FROM (SELECT DISTINCT trace_id FROM otlp_log_records
      WHERE ingest_seq > $2 AND trace_id IS NOT NULL) AS l
JOIN trace_keys AS k USING (trace_id)
UNION
SELECT DISTINCT k.conversation_id
FROM labels AS b
JOIN trace_keys AS k ON b.target = k.conversation_id OR b.target = k.trace_id
WHERE b.created_unix_nano > $3;
