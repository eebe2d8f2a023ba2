-- Runs started at or after $1 (the run a scheduled job is working on), newest first.
SELECT run_id FROM generation_runs WHERE started_unix_nano >= $1 ORDER BY started_unix_nano DESC;
