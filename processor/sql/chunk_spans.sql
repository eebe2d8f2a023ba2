-- The spans of chunk $chunk (chunk_plan.sql), read from the collector's view `spans`:
-- those of the chunk's traces, which lie in commits $first_seq to $last_seq and start
-- between $first_start and $last_start (exact bounds, from the spans themselves; they only
-- let the scan skip the rest). In no particular order (the reader orders each
-- conversation's few spans by time: sorting the chunk here, attributes and all, cost a
-- third of reading it).
SELECT c.conversation_id, s.trace_id, s.span_id, s.parent_span_id, s.name, s.operation,
       s.start_time_unix_nano, s.end_time_unix_nano, s.status_code, s.status_message,
       s.error_type, s.attributes, s.events, s.input_tokens, s.output_tokens, s.agent_name,
       s.agent_version, s.service_version, s.request_model, s.response_model, s.tool_name,
       s.tool_call_id
FROM spans AS s
JOIN trace_chunks AS c ON c.trace_id = s.trace_id
WHERE c.chunk = $chunk
  AND s.ingest_seq BETWEEN $first_seq::UBIGINT AND $last_seq::UBIGINT
  AND s.start_time_unix_nano BETWEEN $first_start::UBIGINT AND $last_start::UBIGINT;
