-- Conversations touched since the watermarks (the collector's ingest_seq, a monotonic
-- commit sequence): those that traces with new spans ($1) or new log records ($2) now
-- belong to, those whose stored rows list such a trace (a trace can move to another
-- conversation when its root span arrives late), and those with new labels ($3, matched
-- by conversation id or trace id).
CREATE OR REPLACE TEMP TABLE affected AS
WITH new_traces AS (
    SELECT DISTINCT trace_id FROM spans WHERE ingest_seq > $1
    UNION
    SELECT DISTINCT trace_id FROM log_records
    WHERE ingest_seq > $2 AND trace_id IS NOT NULL
)
SELECT k.conversation_id FROM new_traces JOIN trace_keys AS k USING (trace_id)
UNION
SELECT c.conversation_id
FROM (SELECT conversation_id, unnest(trace_ids) AS trace_id FROM conversations) AS c
JOIN new_traces USING (trace_id)
UNION
SELECT k.conversation_id
FROM labels AS b
JOIN trace_keys AS k ON b.target = k.conversation_id OR b.target = k.trace_id
WHERE b.created_unix_nano > $3;
