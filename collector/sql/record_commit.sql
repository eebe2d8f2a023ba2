-- One audit row per signal per materializer commit.
INSERT INTO collector_commits (
    committed_unix_nano, signal, requests, received_items, stored_items, duplicate_items,
    rejected_items, payload_bytes, spool_position
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);
