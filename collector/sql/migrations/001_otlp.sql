-- The collector's tables: every OTLP span and log record as received, with the fields
-- later stages query promoted to columns.
--
-- Duplicate deliveries are stopped when rows are inserted (collector/sql/insert_*.sql):
-- a span's identity is (trace id, span id, start time), a log record's a 128-bit hash of
-- the record with its resource and scope (key_hi, key_lo) plus its time. Each insert
-- keeps one row per identity from its batch and only those not stored already; the
-- anti-join is limited to the batch's time range, so DuckDB's zone maps skip the row
-- groups of other times and no index has to be kept in memory. A retried export adds
-- nothing and is counted as duplicate.
--
-- Attribute maps (attributes, resource_attributes, scope_attributes, and those inside
-- events and links) are JSON objects whose values keep their OTLP types: strings, int64
-- numbers, doubles (always written with a decimal point or exponent), booleans, arrays,
-- objects for key-value lists, null for an empty value. Values JSON cannot hold are
-- tagged: {"bytesValue": "<base64>"}, {"doubleValue": "NaN" | "Infinity" | "-Infinity"},
-- and {"kvlistValue": [[key, value], ...]} for a key-value list with repeated keys or
-- one that would read as a tag.

CREATE TABLE otlp_spans (
    tid_hi UBIGINT NOT NULL,
    tid_lo UBIGINT NOT NULL,
    sid UBIGINT NOT NULL,
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    parent_span_id VARCHAR,
    trace_state VARCHAR,
    flags UINTEGER NOT NULL,
    name VARCHAR NOT NULL,
    kind UTINYINT NOT NULL,
    start_time_unix_nano UBIGINT NOT NULL,
    end_time_unix_nano UBIGINT NOT NULL,
    status_code UTINYINT NOT NULL,
    status_message VARCHAR,
    attributes JSON NOT NULL,
    dropped_attributes_count UINTEGER NOT NULL,
    events JSON NOT NULL,
    dropped_events_count UINTEGER NOT NULL,
    links JSON NOT NULL,
    dropped_links_count UINTEGER NOT NULL,
    resource_attributes JSON NOT NULL,
    resource_dropped_attributes_count UINTEGER NOT NULL,
    resource_schema_url VARCHAR,
    scope_name VARCHAR,
    scope_version VARCHAR,
    scope_attributes JSON NOT NULL,
    scope_dropped_attributes_count UINTEGER NOT NULL,
    scope_schema_url VARCHAR,
    service_name VARCHAR,
    service_version VARCHAR,
    operation VARCHAR,
    conversation_id VARCHAR,
    agent_name VARCHAR,
    agent_version VARCHAR,
    request_model VARCHAR,
    response_model VARCHAR,
    provider VARCHAR,
    tool_name VARCHAR,
    tool_call_id VARCHAR,
    input_tokens BIGINT,
    output_tokens BIGINT,
    error_type VARCHAR,
    received_unix_nano UBIGINT NOT NULL,
    ingest_seq UBIGINT NOT NULL  -- number of the commit that stored it (only grows)
);

CREATE TABLE otlp_log_records (
    key_hi UBIGINT NOT NULL,
    key_lo UBIGINT NOT NULL,
    time_unix_nano UBIGINT NOT NULL,
    observed_time_unix_nano UBIGINT NOT NULL,
    severity_number INTEGER NOT NULL,
    severity_text VARCHAR,
    event_name VARCHAR,
    body JSON,
    attributes JSON NOT NULL,
    dropped_attributes_count UINTEGER NOT NULL,
    flags UINTEGER NOT NULL,
    trace_id VARCHAR,
    span_id VARCHAR,
    resource_attributes JSON NOT NULL,
    resource_dropped_attributes_count UINTEGER NOT NULL,
    resource_schema_url VARCHAR,
    scope_name VARCHAR,
    scope_version VARCHAR,
    scope_attributes JSON NOT NULL,
    scope_dropped_attributes_count UINTEGER NOT NULL,
    scope_schema_url VARCHAR,
    service_name VARCHAR,
    service_version VARCHAR,
    conversation_id VARCHAR,
    received_unix_nano UBIGINT NOT NULL,
    ingest_seq UBIGINT NOT NULL  -- number of the commit that stored it (only grows)
);

-- One row per signal per materializer commit: the audit trail behind `tracemill stats`.
CREATE TABLE collector_commits (
    committed_unix_nano UBIGINT NOT NULL,
    signal VARCHAR NOT NULL,
    requests UBIGINT NOT NULL,
    received_items UBIGINT NOT NULL,
    stored_items UBIGINT NOT NULL,
    duplicate_items UBIGINT NOT NULL,
    rejected_items UBIGINT NOT NULL,
    payload_bytes UBIGINT NOT NULL,
    spool_position UBIGINT NOT NULL
);

-- How far the spool (<db>.spool/) has been turned into rows, and how many commits did it;
-- updated in the same transaction as the rows, so every spooled request is stored exactly
-- once. `commits` numbers the commits (rows carry it as ingest_seq): it only grows, even
-- when the spool folder is replaced.
CREATE TABLE collector_spool_cursor (position UBIGINT NOT NULL, commits UBIGINT NOT NULL);
INSERT INTO collector_spool_cursor VALUES (0, 0);

-- What users and later stages read: the stored fields without the internal key columns.
CREATE VIEW spans AS
SELECT * EXCLUDE (tid_hi, tid_lo, sid) FROM otlp_spans;

CREATE VIEW log_records AS
SELECT * EXCLUDE (key_hi, key_lo) FROM otlp_log_records;
