-- A dead letter stored by `tracemill dead-letters replay` (in the transaction of its rows).
INSERT INTO collector_replayed_dead_letters (
    spool_position, received_unix_nano, payload_crc32, replayed_unix_nano
) VALUES (?, ?, ?, ?);
