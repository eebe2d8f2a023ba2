-- The log records tied to spans of the conversations in the temp table chunk.
SELECT l.trace_id, l.span_id, l.time_unix_nano, l.event_name, l.body, l.attributes
FROM otlp_log_records AS l
JOIN trace_keys AS k ON k.trace_id = l.trace_id
JOIN chunk AS c ON c.conversation_id = k.conversation_id
ORDER BY l.time_unix_nano;
