-- The optional model-based stance pass (processor/stance_model.py, `--stance-model SPEC`).
-- One row per conversation, first ask and model: re-processing never asks a model twice
-- about the same ask. `stance` is NULL when the answer was not one of the seven labels
-- (the pattern result is kept for that conversation, and the answer is not asked again).
CREATE TABLE stance_cache (
    conversation_id VARCHAR NOT NULL,
    ask_hash VARCHAR NOT NULL,          -- sha256 of the first ask, as DuckDB's sha256()
    model VARCHAR NOT NULL,             -- the backend spec: 'openai:gpt-4o-mini'
    stance VARCHAR,                     -- the model's label; NULL: unparseable answer
    answer VARCHAR NOT NULL,            -- what the model said (first 200 characters)
    pattern_stance VARCHAR NOT NULL,    -- what the pattern detector said, for agreement
    asked_unix_nano BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, ask_hash, model)
);

-- What each model pass did: the record that says when a run was degraded.
CREATE TABLE stance_model_runs (
    run_unix_nano BIGINT NOT NULL,
    model VARCHAR NOT NULL,
    missing BIGINT NOT NULL,            -- conversations without a cache entry before the pass
    asked BIGINT NOT NULL,              -- answers received (labels and unparseable ones)
    unparseable BIGINT NOT NULL,        -- answers that were not one of the seven labels
    failed BIGINT NOT NULL,             -- conversations left to the patterns by a failure
    error VARCHAR                       -- why the pass was degraded; NULL when it was not
);
