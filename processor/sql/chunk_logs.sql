-- The log records tied to the traces of chunk $chunk (chunk_plan.sql), read from the
-- collector's view `log_records`; they lie in commits $first_seq to $last_seq
-- (chunk_records.sql). In time order. Some instrumentations (openai-v2, OpenLLMetry)
-- leave time_unix_nano at 0 on their per-message records: those are ordered by when they
-- were observed.
SELECT l.trace_id, l.span_id,
       CASE WHEN l.time_unix_nano = 0 THEN l.observed_time_unix_nano
            ELSE l.time_unix_nano END AS record_time,
       l.event_name, l.body, l.attributes
FROM log_records AS l
JOIN trace_chunks AS c ON c.trace_id = l.trace_id
WHERE c.chunk = $chunk AND l.ingest_seq BETWEEN $first_seq::UBIGINT AND $last_seq::UBIGINT
ORDER BY record_time, l.observed_time_unix_nano;
