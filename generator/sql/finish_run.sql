-- Store a run's record ($1) and state ($2: finished, or running to stay resumable).
UPDATE generation_runs SET record = $1, state = $2, ended_unix_nano = $3 WHERE run_id = $4;
