-- Whether `tracemill dead-letters replay` stored this dead letter already.
SELECT count(*) FROM collector_replayed_dead_letters
WHERE spool_position = ? AND received_unix_nano = ? AND payload_crc32 = ?;
