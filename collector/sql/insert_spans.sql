-- New spans from the registered Arrow table incoming_rows (one per identity: trace id,
-- span id, start time; collector/insert.py keeps the first of each), none already
-- stored. $1/$2 are the batch's smallest and largest start time, so the anti-join reads
-- only row groups whose zone maps overlap them. $3 numbers this commit (ingest_seq): a sequence that only grows,
-- which later stages use as their watermark.
INSERT INTO otlp_spans
SELECT i.*, $3 AS ingest_seq FROM incoming_rows AS i
WHERE NOT EXISTS (
    SELECT 1 FROM otlp_spans AS s
    WHERE s.start_time_unix_nano BETWEEN $1 AND $2
      AND s.start_time_unix_nano = i.start_time_unix_nano
      AND s.tid_hi = i.tid_hi AND s.tid_lo = i.tid_lo AND s.sid = i.sid
);
