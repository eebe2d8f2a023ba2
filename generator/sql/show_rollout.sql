-- One stored rollout ($1) in full: what was planned, what happened, how it was graded.
SELECT rollout_id, run_id, idx, purpose, cell, cell_status, CAST(situation AS VARCHAR),
       seed, CAST(lineage AS VARCHAR), CAST(persona AS VARCHAR), CAST(goal AS VARCHAR),
       CAST(messages AS VARCHAR), CAST(events AS VARCHAR), ended_by, planted, agent,
       input_tokens, output_tokens, cost_usd, model_calls, error, graded, reward, passed,
       failure_class, reason, markers, CAST(checks AS VARCHAR), labeled_by, mutation_fired
FROM rollouts WHERE rollout_id = $1;
