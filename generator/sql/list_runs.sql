-- Generation runs, newest first, with what their stored rollouts show.
SELECT r.run_id, r.state, r.config->>'agent' AS agent,
       coalesce(r.record->>'stop_reason', '-') AS stop_reason,
       count(o.idx) AS rollouts,
       count(o.idx) FILTER (WHERE o.passed = false) AS failed,
       strftime(make_timestamp(CAST(r.started_unix_nano // 1000 AS BIGINT)), '%Y-%m-%d %H:%M:%S')
FROM generation_runs AS r LEFT JOIN rollouts AS o USING (run_id)
GROUP BY ALL
ORDER BY max(r.started_unix_nano) DESC;
