-- New log records from the registered Arrow table incoming_rows: collector/insert.py has
-- already kept one row per identity (content hash, time) and dropped those stored
-- (collector/sql/stored_log_records.sql). $1 numbers this commit (ingest_seq).
INSERT INTO otlp_log_records
SELECT i.*, $1 AS ingest_seq FROM incoming_rows AS i;
