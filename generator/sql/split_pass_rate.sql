-- Graded rollouts whose mutation did not fail to fire, passed ones, and held-out ones
-- (tasks: each held-out rollout is one task an evaluation replays).
SELECT count(*) FILTER (WHERE r.graded),
       count(*) FILTER (WHERE r.graded AND r.passed),
       count(*) FILTER (WHERE r.graded AND p.side = 'held_out')
FROM rollouts AS r
JOIN rollout_situations AS s USING (rollout_id)
LEFT JOIN splits AS p USING (situation_key)
WHERE r.mutation_fired IS DISTINCT FROM false;
