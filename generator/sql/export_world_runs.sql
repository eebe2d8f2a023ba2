-- Each generation run's stored plan (its items rebuild each rollout's world) and the world
-- that answered its tool calls (NULL or 'simulated': tracemill's own, which a verifiers
-- environment can rebuild; anything else is the team's own system, which it cannot).
SELECT run_id, CAST(plan_body AS VARCHAR), coalesce(config->>'world', 'simulated')
FROM generation_runs
ORDER BY run_id;
