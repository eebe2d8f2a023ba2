-- The held-out tasks: graded held-out rollouts whose mutation did not fail to fire, with
-- their run's stored plan (to rebuild the plan item) and their messages (system prompt).
SELECT r.rollout_id, r.run_id, r.idx, s.label, CAST(g.plan_body AS VARCHAR),
       CAST(r.messages AS VARCHAR)
FROM rollouts AS r
JOIN rollout_situations AS s USING (rollout_id)
JOIN splits AS p USING (situation_key)
JOIN generation_runs AS g USING (run_id)
WHERE p.side = 'held_out' AND r.graded AND r.mutation_fired IS DISTINCT FROM false
  AND g.plan_body IS NOT NULL
ORDER BY r.run_id, r.idx;
