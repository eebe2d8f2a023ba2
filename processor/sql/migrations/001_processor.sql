-- The processor's tables: conversations with their outcome and six coordinates, labels
-- attached later, tool schemas and exemplars for the generator, and the failure map.

-- One row per conversation (rebuilt whenever new spans of it arrive).
CREATE TABLE conversations (
    conversation_id VARCHAR NOT NULL,
    trace_ids VARCHAR[] NOT NULL,
    session_id VARCHAR,
    user_id VARCHAR,
    first_ask VARCHAR,
    user_turns VARCHAR[] NOT NULL,
    assistant_turns VARCHAR[] NOT NULL,
    final_reply VARCHAR,
    steps JSON NOT NULL,
    errors VARCHAR[] NOT NULL,
    input_tokens BIGINT,
    output_tokens BIGINT,
    agent_name VARCHAR,
    model_version VARCHAR,
    model_version_source VARCHAR,
    content_missing BOOLEAN NOT NULL,
    start_unix_nano UBIGINT NOT NULL,
    end_unix_nano UBIGINT NOT NULL,
    outcome VARCHAR,            -- 'pass', 'fail' or NULL (ungraded)
    reward DOUBLE,              -- the score behind the outcome, when numeric
    outcome_source VARCHAR,     -- which attribute, evaluation or label decided it
    labeled_by VARCHAR,         -- who made that label (evaluator, judge, person)
    evaluations JSON NOT NULL,  -- every evaluation result read: [{name, score, label, ...}]
    failure_class VARCHAR,
    tool VARCHAR NOT NULL,
    tool_condition VARCHAR NOT NULL,
    world_state VARCHAR NOT NULL,
    history VARCHAR NOT NULL,
    user_stance VARCHAR NOT NULL,
    policy_rule VARCHAR NOT NULL,
    score_attributes VARCHAR[] NOT NULL,  -- score-like attributes present but not read
    processed_unix_nano UBIGINT NOT NULL
);

-- Outcomes attached after the fact (`tracemill label FILE`); they win over attributes.
CREATE TABLE labels (
    target VARCHAR NOT NULL,       -- a conversation id or a trace id
    passed BOOLEAN,
    reward DOUBLE,
    kind VARCHAR NOT NULL,         -- human | program | model
    labeled_by VARCHAR NOT NULL,
    note VARCHAR,
    source_file VARCHAR,
    created_unix_nano UBIGINT NOT NULL
);

-- Tool schemas inferred from traces, and real results, for the generator.
CREATE TABLE tool_schemas (
    tool VARCHAR NOT NULL,
    schema JSON NOT NULL,
    source VARCHAR NOT NULL,       -- definitions (offered to the model) or observed (arguments)
    calls BIGINT NOT NULL,
    updated_unix_nano UBIGINT NOT NULL
);
CREATE TABLE tool_exemplars (
    tool VARCHAR NOT NULL,
    arguments VARCHAR,
    result VARCHAR,
    status VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL
);

-- The failure map as of the last `tracemill process`: one row per cell (a pair of
-- coordinates on two different axes, axis_a < axis_b) with its status.
CREATE TABLE failure_map (
    axis_a VARCHAR NOT NULL, value_a VARCHAR NOT NULL,
    axis_b VARCHAR NOT NULL, value_b VARCHAR NOT NULL,
    latest_version VARCHAR, previous_version VARCHAR,
    conversations BIGINT NOT NULL,
    graded_latest BIGINT NOT NULL, failed_latest BIGINT NOT NULL,
    graded_previous BIGINT NOT NULL, failed_previous BIGINT NOT NULL,
    fail_rate_latest DOUBLE, low_latest DOUBLE, high_latest DOUBLE,
    fail_rate_previous DOUBLE, low_previous DOUBLE, high_previous DOUBLE,
    diff_low DOUBLE, diff_high DOUBLE, p_value DOUBLE,
    status VARCHAR NOT NULL,
    low_support BOOLEAN NOT NULL,
    priority DOUBLE NOT NULL,
    budget_share DOUBLE NOT NULL,
    computed_unix_nano UBIGINT NOT NULL
);

-- How far processing has read: the largest ingest_seq of spans and log records, and the
-- newest label, already folded into conversations; and the options they were built with
-- (other options rebuild everything).
CREATE TABLE processor_state (
    spans_watermark UBIGINT NOT NULL,
    logs_watermark UBIGINT NOT NULL,
    labels_watermark UBIGINT NOT NULL,
    options VARCHAR NOT NULL
);
INSERT INTO processor_state VALUES (0, 0, 0, '');
