-- What a run record needs of every stored rollout of one run ($1).
SELECT rollout_id, purpose, cell, cell_status, CAST(situation AS VARCHAR), ended_by, planted,
       graded, passed, failure_class, input_tokens, output_tokens, cost_usd, model_calls,
       retries, faults_scheduled, faults_fired,
       list_distinct(list_transform(
           list_filter(from_json(events, '["JSON"]'), lambda e: e->>'status' = 'ok'),
           lambda e: e->>'tool')),
       mutation_fired
FROM rollouts WHERE run_id = $1
ORDER BY idx;
