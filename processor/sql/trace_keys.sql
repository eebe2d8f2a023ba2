-- Which conversation each trace belongs to: the conversation id of its root span, else of
-- its earliest span that has one, else the trace id itself. A conversation can span many
-- traces (one per model call in hand-written loops, one per run in frameworks).
--
-- Also where the trace's spans lie, in columns the collector's view `spans` publishes: the
-- range of its commits (ingest_seq, which only grows) and of its start times. A chunk of
-- the rebuild reads its spans by these ranges (chunk_plan.sql, chunk_spans.sql): exact
-- filters, which the collector's storage order makes cheap (zone maps), without depending
-- on how it stores them.
CREATE OR REPLACE TEMP TABLE trace_keys AS
SELECT trace_id,
       coalesce(
           first(conversation_id ORDER BY parent_span_id IS NOT NULL, start_time_unix_nano)
               FILTER (WHERE conversation_id IS NOT NULL),
           trace_id) AS conversation_id,
       min(ingest_seq) AS first_seq, max(ingest_seq) AS last_seq,
       min(start_time_unix_nano) AS first_start, max(start_time_unix_nano) AS last_start
FROM spans
GROUP BY trace_id;
