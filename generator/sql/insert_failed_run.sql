-- A scheduled run that failed before it could plan: record it, with its error, so that
-- `tracemill runs` shows the night it did not run and why.
INSERT INTO generation_runs (run_id, fingerprint, seed, state, config, plan, record,
                             started_unix_nano, ended_unix_nano)
VALUES ($1, '-', $2, 'failed', $3, '{}', $4, $5, $6);
