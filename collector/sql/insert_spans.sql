-- New spans from the registered Arrow table incoming_rows: collector/insert.py has already
-- kept one row per identity (trace id, span id, start time) and dropped those stored
-- (collector/sql/stored_spans.sql). $1 numbers this commit (ingest_seq): a sequence that
-- only grows, which later stages use as their watermark.
INSERT INTO otlp_spans
SELECT i.*, $1 AS ingest_seq FROM incoming_rows AS i;
