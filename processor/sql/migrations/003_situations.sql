-- Situations: what the failure map reports. A situation is the smallest set of
-- coordinates (one to three axis values) that isolates one group of failing conversations;
-- pair cells whose failing members largely coincide collapse into one situation, and a
-- superset whose excess the situations inside it explain is not reported
-- (processor/situations.py documents the rules).

-- Every tool a conversation called, in order of first call (the `tool` axis keeps only the
-- focal tool: where the conversation went wrong), and the index of that focal step in
-- `steps` (NULL when no step went wrong or there were no steps).
ALTER TABLE conversations ADD COLUMN tools VARCHAR[];
ALTER TABLE conversations ADD COLUMN focal_step INTEGER;
-- The ordered exchange in OpenAI chat format, ready for exports and `conversations show`:
-- [{"role": "system"|"user"|"assistant"|"tool", "content": ..., "tool_calls": [{"id",
-- "type": "function", "function": {"name", "arguments"}}], "tool_call_id", "name"}],
-- plus {"role": "evaluation", ...} entries are NOT mixed in (evaluations stay in their column).
ALTER TABLE conversations ADD COLUMN messages JSON;

CREATE TABLE situations (
    situation_id VARCHAR NOT NULL,      -- stable across runs: 's-' || first 10 hex of sha256(label)
    label VARCHAR NOT NULL,             -- 'tool=cancel_pending_order & world_state=already_acted_on'
    coordinates JSON NOT NULL,          -- [{"axis": "tool", "value": "cancel_pending_order"}, ...]
    latest_version VARCHAR,
    previous_version VARCHAR,
    conversations BIGINT NOT NULL,      -- members, all periods
    graded_latest BIGINT NOT NULL,
    failed_latest BIGINT NOT NULL,
    graded_previous BIGINT NOT NULL,
    failed_previous BIGINT NOT NULL,
    fail_rate_latest DOUBLE, low_latest DOUBLE, high_latest DOUBLE,        -- Wilson 95%
    fail_rate_previous DOUBLE, low_previous DOUBLE, high_previous DOUBLE,
    baseline_latest DOUBLE,             -- fail rate of the period's conversations outside it
    baseline_previous DOUBLE,
    diff_low DOUBLE, diff_high DOUBLE,  -- Newcombe 95% interval of the compared difference
    p_value DOUBLE,                     -- Fisher's exact test of that difference
    compared VARCHAR NOT NULL,          -- 'versions' (latest vs previous rate) or
                                        -- 'baseline' (latest vs the rest of latest: no earlier data)
    status VARCHAR NOT NULL,            -- new | persistent | fixed | uncertain
    reason VARCHAR NOT NULL,            -- one sentence: why this status
    low_support BOOLEAN NOT NULL,       -- fewer than the minimum graded in the deciding period
    priority DOUBLE NOT NULL,
    budget_share DOUBLE NOT NULL,
    cells JSON NOT NULL,                -- labels of the pair cells it stands for
    computed_unix_nano UBIGINT NOT NULL
);

-- Members of each situation: conversations matching all its coordinates.
CREATE TABLE situation_members (
    situation_id VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    period VARCHAR,                     -- latest | previous | NULL (neither compared period)
    failed BOOLEAN                      -- NULL when ungraded
);
