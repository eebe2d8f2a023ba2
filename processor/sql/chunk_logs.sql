-- Reads the table otlp_log_records, not the view `log_records`: by row id (see
-- chunk_plan.sql).
-- The log records tied to the conversations of chunk $chunk (chunk_records.sql), which
-- lie in rows $first to $last, in time order. Some instrumentations (openai-v2,
-- OpenLLMetry) leave time_unix_nano at 0 on their per-message records: those are ordered
-- by when they were observed.
SELECT l.trace_id, l.span_id,
       CASE WHEN l.time_unix_nano = 0 THEN l.observed_time_unix_nano
            ELSE l.time_unix_nano END AS record_time,
       l.event_name, l.body, l.attributes
FROM otlp_log_records AS l
JOIN log_chunks AS c ON c.log_row = l.rowid
WHERE c.chunk = $chunk AND l.rowid BETWEEN $first AND $last
ORDER BY record_time, l.observed_time_unix_nano;
