-- Stored rollouts, newest run first then plan order, filtered by run ($1), situation ($2:
-- the cell label aimed at, a part of it, or a situation id in the lineage), outcome ($3:
-- pass, fail or ungraded), mutation ($4: fired, not_fired or none); at most $5 rows.
-- NULL parameters do not filter.
SELECT r.rollout_id, r.run_id, r.idx, r.purpose, r.cell, CAST(r.situation AS VARCHAR),
       r.lineage->'mutation'->>'kind' AS mutation_kind,
       r.lineage->'mutation'->>'detail' AS mutation_detail,
       r.mutation_fired, r.graded, r.passed, r.failure_class, r.ended_by,
       len(list_filter(from_json(r.messages, '["JSON"]'), lambda m: m->>'role' = 'user'))
           AS turns
FROM rollouts AS r
JOIN generation_runs AS g USING (run_id)
WHERE ($1 IS NULL OR r.run_id = $1)
  AND ($2 IS NULL OR r.cell = $2 OR contains(r.cell, $2)
       OR r.lineage->'cell'->>'situation_id' = $2)
  AND ($3 IS NULL
       OR ($3 = 'pass' AND r.graded AND r.passed)
       OR ($3 = 'fail' AND r.graded AND NOT r.passed)
       OR ($3 = 'ungraded' AND NOT r.graded))
  AND ($4 IS NULL
       OR ($4 = 'fired' AND r.mutation_fired)
       OR ($4 = 'not_fired' AND NOT r.mutation_fired)
       OR ($4 = 'none' AND r.mutation_fired IS NULL))
ORDER BY g.started_unix_nano DESC, r.run_id, r.idx
LIMIT $5;
