-- The identities of the registered Arrow table incoming_keys (trace id, span id, start
-- time) already stored. $1/$2 are the batch's smallest and largest start time and $3/$4
-- its smallest and largest tid_hi, so only row groups whose zone maps overlap both are
-- read. A semi join: its hash table is built from the batch's keys and the stored rows
-- probe it, so the cost stays flat as the stored spans of the same minutes grow (an
-- anti-join in the INSERT hashed those stored rows, and cost 16 -> 35 CPU-us a fat span
-- from an empty table to 800k stored spans of the same minute). The bounds are cast to
-- the columns' UBIGINT: a Python int binds as a signed type, and the filter would then
-- be on the column cast to HUGEINT rather than on the column itself.
SELECT s.tid_hi, s.tid_lo, s.sid, s.start_time_unix_nano
FROM otlp_spans AS s SEMI JOIN incoming_keys AS i
  ON s.start_time_unix_nano = i.start_time_unix_nano
 AND s.tid_hi = i.tid_hi AND s.tid_lo = i.tid_lo AND s.sid = i.sid
WHERE s.start_time_unix_nano BETWEEN $1::UBIGINT AND $2::UBIGINT
  AND s.tid_hi BETWEEN $3::UBIGINT AND $4::UBIGINT;
