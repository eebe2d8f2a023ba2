-- A scheduled run that raised after it was recorded: mark the runs it started (started at
-- or after $3, still running) failed with its error record ($1) and end time ($2).
UPDATE generation_runs SET state = 'failed', record = $1, ended_unix_nano = $2
WHERE started_unix_nano >= $3 AND state = 'running'
RETURNING run_id;
