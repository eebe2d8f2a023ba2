-- New log records from the registered Arrow table incoming_rows (one per identity: content
-- hash, time; collector/insert.py keeps the first of each), none already stored; $1/$2
-- bound the batch's times (cast to the column's UBIGINT, so they filter the column itself)
-- so the anti-join reads only overlapping row groups; $3 numbers this commit (ingest_seq).
INSERT INTO otlp_log_records
SELECT i.*, $3 AS ingest_seq FROM incoming_rows AS i
WHERE NOT EXISTS (
    SELECT 1 FROM otlp_log_records AS s
    WHERE s.time_unix_nano BETWEEN $1::UBIGINT AND $2::UBIGINT
      AND s.time_unix_nano = i.time_unix_nano
      AND s.key_hi = i.key_hi AND s.key_lo = i.key_lo
);
