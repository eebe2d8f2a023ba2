-- The identities of the registered Arrow table incoming_keys (content hash, time) already
-- stored; $1/$2 bound the batch's times (cast to the column's UBIGINT, so they filter the
-- column itself) so only overlapping row groups are read. A semi join built from the
-- batch's keys (see collector/sql/stored_spans.sql).
SELECT s.key_hi, s.key_lo, s.time_unix_nano
FROM otlp_log_records AS s SEMI JOIN incoming_keys AS i
  ON s.time_unix_nano = i.time_unix_nano AND s.key_hi = i.key_hi AND s.key_lo = i.key_lo
WHERE s.time_unix_nano BETWEEN $1::UBIGINT AND $2::UBIGINT;
