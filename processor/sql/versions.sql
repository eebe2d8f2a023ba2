-- Model versions in the order they first appeared, with their conversation counts.
SELECT model_version, min(start_unix_nano) AS first_seen, count(*) AS conversations,
       count(outcome) AS graded
FROM conversations
GROUP BY model_version
ORDER BY first_seen, model_version;
