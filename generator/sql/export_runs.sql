-- Each generation run's tool schemas (as planned), agent, seed and system prompt digest.
SELECT run_id, CAST(coalesce(plan_body->'tools', '[]') AS VARCHAR), config->>'agent', seed,
       config->>'grader', config->>'judge'
FROM generation_runs ORDER BY started_unix_nano, run_id;
