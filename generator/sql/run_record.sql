-- The stored record of one run ($1).
SELECT record FROM generation_runs WHERE run_id = $1;
