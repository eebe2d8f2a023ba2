-- Every rollout with what an export needs: its situation and side (NULL: placed by no
-- split yet), its grade and stamps, its transcript, lineage and goal; by run and plan order.
SELECT r.rollout_id, r.run_id, s.situation_key, s.label, p.side, r.graded, r.passed,
       r.reward, r.failure_class, r.labeled_by, r.agent, r.mutation_fired, r.error,
       CAST(r.messages AS VARCHAR), CAST(r.lineage AS VARCHAR), CAST(r.goal AS VARCHAR)
FROM rollouts AS r
JOIN rollout_situations AS s USING (rollout_id)
LEFT JOIN splits AS p USING (situation_key)
ORDER BY r.run_id, r.idx;
