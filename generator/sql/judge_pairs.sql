-- Pairs (grader's verdict, person's verdict) for measuring graders against human labels.
-- One row per graded rollout that carries a human label; the newest human label of a
-- rollout wins. A label without `passed` counts as passed when its reward reaches the
-- threshold (parameter 1). Rows come grouped by the grader stamp that labeled the rollout.
WITH human AS (
    SELECT target, passed, reward
    FROM labels
    WHERE kind = 'human'
    QUALIFY row_number() OVER (PARTITION BY target ORDER BY created_unix_nano DESC) = 1
)
SELECT r.labeled_by,
       r.passed AS judge_passed,
       coalesce(h.passed, h.reward >= ?) AS human_passed
FROM rollouts AS r
JOIN human AS h ON h.target = r.rollout_id
WHERE r.graded
  AND r.passed IS NOT NULL
  AND r.labeled_by IS NOT NULL
  AND coalesce(h.passed, h.reward >= ?) IS NOT NULL
ORDER BY r.labeled_by, r.rollout_id
