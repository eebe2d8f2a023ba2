-- The generator's tables: one row per generation run, one row per simulated rollout.

-- A run: its configuration, plan summary and (once it ends) its record. A run that is
-- still 'running' after its process died is resumed by the next `tracemill generate`
-- with the same configuration fingerprint (or `--resume RUN_ID`).
CREATE TABLE generation_runs (
    run_id VARCHAR NOT NULL,
    fingerprint VARCHAR NOT NULL,   -- hash of seed, budget, specs, options and the map
    seed BIGINT NOT NULL,
    state VARCHAR NOT NULL,         -- running | finished
    config JSON NOT NULL,           -- specs, budget, options as given
    plan JSON NOT NULL,             -- plan summary: items, shares, pairs planned, notes
    record JSON,                    -- the final run record (spend, coverage, stop reason...)
    started_unix_nano UBIGINT NOT NULL,
    ended_unix_nano UBIGINT
);

-- A rollout, committed as soon as it is graded; (run_id, idx) is its identity, so a
-- resumed run never redoes or double-counts one. rollout_id = run_id || ':' || idx is
-- what `tracemill label` targets for human labels.
CREATE TABLE rollouts (
    rollout_id VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    idx INTEGER NOT NULL,
    purpose VARCHAR NOT NULL,       -- target | explore | guard
    cell VARCHAR,                   -- 'axis=value & axis=value' aimed at (NULL: explore)
    cell_status VARCHAR,
    situation JSON NOT NULL,        -- the six axis values
    seed BIGINT NOT NULL,
    lineage JSON NOT NULL,          -- {cell, source_conversations, mutation}
    persona JSON NOT NULL,
    goal JSON NOT NULL,
    messages JSON NOT NULL,
    events JSON NOT NULL,           -- the world's answers
    ended_by VARCHAR NOT NULL,
    planted VARCHAR[] NOT NULL,     -- mistakes an offline agent planted (truth for checks)
    agent VARCHAR NOT NULL,         -- the agent backend's spec
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost_usd DOUBLE NOT NULL,
    model_calls INTEGER NOT NULL,
    error VARCHAR,
    graded BOOLEAN NOT NULL,
    reward DOUBLE,
    passed BOOLEAN,
    failure_class VARCHAR,
    reason VARCHAR,
    markers VARCHAR[] NOT NULL,
    checks JSON NOT NULL,
    labeled_by VARCHAR,
    duration_s DOUBLE NOT NULL,
    created_unix_nano UBIGINT NOT NULL
);
