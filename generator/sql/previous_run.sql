-- A stored run ($1): its fingerprint, state, whole plan and last invocation's budget.
SELECT fingerprint, state, plan_body, CAST(record->'budget' AS VARCHAR)
FROM generation_runs WHERE run_id = $1;
