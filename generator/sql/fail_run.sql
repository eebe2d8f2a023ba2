-- A run that raised after it was recorded: mark it ($3) failed with its error record ($1)
-- and end time ($2), unless it already ended.
UPDATE generation_runs SET state = 'failed', record = $1, ended_unix_nano = $2
WHERE run_id = $3 AND state = 'running'
RETURNING run_id;
