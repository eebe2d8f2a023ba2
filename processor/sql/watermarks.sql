-- The newest spans, log records and labels in the store (what processing should reach).
SELECT coalesce((SELECT max(ingest_seq) FROM spans), 0),
       coalesce((SELECT max(ingest_seq) FROM log_records), 0),
       coalesce((SELECT max(created_unix_nano) FROM labels), 0);
