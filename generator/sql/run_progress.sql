-- The stored rollouts of one run ($1): plan index and what each spent.
SELECT idx, input_tokens, output_tokens, cost_usd FROM rollouts WHERE run_id = $1;
