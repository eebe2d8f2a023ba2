-- Which conversation each trace belongs to: the conversation id of its root span, else of
-- its earliest span that has one, else the trace id itself. A conversation can span many
-- traces (one per model call in hand-written loops, one per run in frameworks).
CREATE OR REPLACE TEMP TABLE trace_keys AS
SELECT trace_id,
       coalesce(
           first(conversation_id ORDER BY parent_span_id IS NOT NULL, start_time_unix_nano)
               FILTER (WHERE conversation_id IS NOT NULL),
           trace_id) AS conversation_id
FROM spans
GROUP BY trace_id;
