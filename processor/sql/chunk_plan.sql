-- Plan the rebuild of the affected conversations in chunks of $1 conversations: the temp
-- table trace_chunks holds each trace of an affected conversation with its conversation,
-- its chunk, and where its spans lie (trace_keys.sql: commit and start-time ranges).
--
-- Only the collector's published view `spans` is read (through trace_keys), never its
-- table: the collector may store spans as it likes. Conversations are numbered in the
-- order of their first commit, then first start time, so the spans of a chunk lie in a
-- narrow range of ingest_seq (the collector numbers its commits; it only grows) and of
-- start times, and chunk_spans.sql reads only those ranges (zone maps), where a join on
-- trace ids alone read the whole table again for every chunk.
CREATE OR REPLACE TEMP TABLE trace_chunks AS
WITH traces AS (
    SELECT trace_id, conversation_id, first_seq, last_seq, first_start, last_start
    FROM trace_keys
    WHERE conversation_id IN (SELECT conversation_id FROM affected)
),
numbered AS (
    SELECT conversation_id,
           (row_number() OVER (ORDER BY min(first_seq), min(first_start), conversation_id)
            - 1) // $1 AS chunk
    FROM traces
    GROUP BY conversation_id
)
SELECT trace_id, conversation_id, chunk, first_seq, last_seq, first_start, last_start
FROM traces JOIN numbered USING (conversation_id);
