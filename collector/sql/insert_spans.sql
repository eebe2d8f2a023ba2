-- New spans from the registered Arrow table incoming_rows (one per identity: trace id,
-- span id, start time; collector/insert.py keeps the first of each), none already
-- stored. $1/$2 are the batch's smallest and largest start time and $4/$5 its smallest
-- and largest tid_hi, so the anti-join reads only row groups whose zone maps overlap
-- both (its build side is the stored rows: without the bounds it would hash every stored
-- span whose start time overlaps the batch). $3 numbers this commit (ingest_seq): a
-- sequence that only grows, which later stages use as their watermark. The bounds are
-- cast to the columns' UBIGINT: a Python int binds as a signed type, and the filter would
-- then be on the column cast to HUGEINT rather than on the column itself.
INSERT INTO otlp_spans
SELECT i.*, $3 AS ingest_seq FROM incoming_rows AS i
WHERE NOT EXISTS (
    SELECT 1 FROM otlp_spans AS s
    WHERE s.start_time_unix_nano BETWEEN $1::UBIGINT AND $2::UBIGINT
      AND s.tid_hi BETWEEN $4::UBIGINT AND $5::UBIGINT
      AND s.start_time_unix_nano = i.start_time_unix_nano
      AND s.tid_hi = i.tid_hi AND s.tid_lo = i.tid_lo AND s.sid = i.sid
);
