-- Labels attached to one rollout ($1) after it was graded (`tracemill label`), oldest first.
SELECT kind, labeled_by, passed, reward, note,
       strftime(make_timestamp(CAST(created_unix_nano // 1000 AS BIGINT)), '%Y-%m-%d %H:%M:%S')
FROM labels WHERE target = $1
ORDER BY created_unix_nano;
