-- The log records tied to spans of the conversations in the temp table chunk, in time
-- order. Some instrumentations (openai-v2, OpenLLMetry) leave time_unix_nano at 0 on their
-- per-message records: those are ordered by when they were observed.
SELECT l.trace_id, l.span_id,
       CASE WHEN l.time_unix_nano = 0 THEN l.observed_time_unix_nano
            ELSE l.time_unix_nano END AS record_time,
       l.event_name, l.body, l.attributes
FROM otlp_log_records AS l
JOIN trace_keys AS k ON k.trace_id = l.trace_id
JOIN chunk AS c ON c.conversation_id = k.conversation_id
ORDER BY record_time, l.observed_time_unix_nano;
