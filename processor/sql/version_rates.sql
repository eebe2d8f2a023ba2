-- Fail rate per model version, in order of first appearance, and where versions came from.
SELECT model_version, min(start_unix_nano) AS first_seen, count(*) AS conversations,
       count(outcome) AS graded, count(*) FILTER (WHERE outcome = 'fail') AS failed,
       string_agg(DISTINCT model_version_source, ', ') AS sources
FROM conversations
GROUP BY model_version
ORDER BY first_seen;
