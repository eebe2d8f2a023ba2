-- Dead letters (<db>.spool/dead-letter.*) that `tracemill dead-letters replay` stored.
-- A letter's row goes in the same transaction as its spans or log records and its
-- collector_commits row; the letter leaves the dead-letter files only afterwards. A replay
-- repeated after a crash between the two finds the letter here and only removes it, so
-- its commit is counted once (collector/dead_letters.py).
CREATE TABLE collector_replayed_dead_letters (
    spool_position UBIGINT NOT NULL,     -- where it ended in the spool it came from
    received_unix_nano UBIGINT NOT NULL, -- when the collector acknowledged it
    payload_crc32 UINTEGER NOT NULL,     -- CRC-32 of its request bytes
    replayed_unix_nano UBIGINT NOT NULL
);
