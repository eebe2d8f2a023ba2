-- Reads the collector's table otlp_spans, not its published view `spans`: chunks are
-- planned and read by row id (zone maps), and a view has no row id.
-- Plan the rebuild of the affected conversations in chunks of $1 conversations: the temp
-- table span_chunks holds each span of an affected conversation by its row id (stable
-- inside the transaction) with its conversation and chunk. Conversations are numbered in
-- the order of their first stored span, so the spans of a chunk lie in a narrow range of
-- rows and chunk_spans.sql reads only that range (zone maps on the row id), where a join
-- on trace ids alone read the whole table again for every chunk.
CREATE OR REPLACE TEMP TABLE span_chunks AS
WITH spans AS (
    SELECT s.rowid AS span_row, k.conversation_id
    FROM otlp_spans AS s
    JOIN (SELECT trace_id, conversation_id FROM trace_keys
          WHERE conversation_id IN (SELECT conversation_id FROM affected)) AS k
      ON k.trace_id = s.trace_id
),
numbered AS (
    SELECT conversation_id,
           (row_number() OVER (ORDER BY min(span_row), conversation_id) - 1) // $1 AS chunk
    FROM spans
    GROUP BY conversation_id
)
SELECT span_row, conversation_id, chunk FROM spans JOIN numbered USING (conversation_id);
