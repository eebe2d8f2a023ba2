-- What the conversations contain: counts for the trace report.
SELECT
    count(*) AS conversations,
    count(outcome) AS graded,
    count(*) FILTER (WHERE outcome = 'pass') AS passed,
    count(*) FILTER (WHERE outcome = 'fail') AS failed,
    count(*) FILTER (WHERE outcome IS NULL) AS ungraded,
    count(*) FILTER (WHERE reward IS NOT NULL AND reward NOT IN (0, 1)) AS non_binary,
    count(*) FILTER (WHERE content_missing) AS content_missing,
    count(DISTINCT model_version) AS model_versions,
    coalesce(sum(len(trace_ids)), 0) AS traces,
    coalesce(sum(json_array_length(steps)), 0) AS steps
FROM conversations;
