-- The spans of the conversations in the temp table chunk, in time order.
SELECT k.conversation_id, s.trace_id, s.span_id, s.parent_span_id, s.name, s.operation,
       s.start_time_unix_nano, s.end_time_unix_nano, s.status_code, s.status_message,
       s.error_type, s.attributes, s.events, s.input_tokens, s.output_tokens, s.agent_name,
       s.agent_version, s.service_version, s.request_model, s.response_model, s.tool_name,
       s.tool_call_id
FROM otlp_spans AS s
JOIN trace_keys AS k ON k.trace_id = s.trace_id
JOIN chunk AS c ON c.conversation_id = k.conversation_id
ORDER BY k.conversation_id, s.start_time_unix_nano, s.end_time_unix_nano;
