-- One audit row per committed export request.
INSERT INTO collector_requests (
    received_unix_nano, committed_unix_nano, signal, transport, payload_bytes,
    received_items, accepted_items, rejected_items, duplicate_items
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);
