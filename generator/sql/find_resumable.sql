-- The newest unfinished run with a configuration fingerprint ($1).
SELECT run_id FROM generation_runs
WHERE fingerprint = $1 AND state = 'running'
ORDER BY started_unix_nano DESC
LIMIT 1;
