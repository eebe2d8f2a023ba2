-- What `serve`'s status answer counts: processed conversations and recorded runs.
SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM generation_runs);
