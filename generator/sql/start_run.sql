-- Record a new run as running, with its configuration and its whole plan.
INSERT INTO generation_runs (run_id, fingerprint, seed, state, config, plan, plan_body,
                             started_unix_nano)
VALUES ($1, $2, $3, 'running', $4, $5, $6, $7);
