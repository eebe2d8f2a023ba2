-- How each generation run answered and graded its rollouts, so that `tracemill eval` runs
-- the held-out tasks the same way: its world, grader, judge, rubric digest and threshold.
SELECT run_id, coalesce(config->>'world', 'simulated'), config->>'grader', config->>'judge',
       config->>'rubric', coalesce(TRY_CAST(config->>'pass_threshold' AS DOUBLE), 0.5)
FROM generation_runs
ORDER BY run_id;
