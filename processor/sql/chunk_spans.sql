-- Reads the table otlp_spans, not the view `spans`: by row id (see chunk_plan.sql).
-- The spans of chunk $chunk (chunk_plan.sql), which lie in rows $first to $last, in no
-- particular order (the reader orders each conversation's few spans by time: sorting the
-- chunk here, attributes and all, cost a third of reading it).
SELECT c.conversation_id, s.trace_id, s.span_id, s.parent_span_id, s.name, s.operation,
       s.start_time_unix_nano, s.end_time_unix_nano, s.status_code, s.status_message,
       s.error_type, s.attributes, s.events, s.input_tokens, s.output_tokens, s.agent_name,
       s.agent_version, s.service_version, s.request_model, s.response_model, s.tool_name,
       s.tool_call_id
FROM otlp_spans AS s
JOIN span_chunks AS c ON c.span_row = s.rowid
WHERE c.chunk = $chunk AND s.rowid BETWEEN $first AND $last;
