-- Up to three real results per tool and status, for the generator's simulated world
-- (from tool_steps.sql).
DELETE FROM tool_exemplars;
INSERT INTO tool_exemplars
SELECT tool, arguments, result, status, conversation_id
FROM (
    SELECT tool, arguments, result, status, conversation_id,
           row_number() OVER (PARTITION BY tool, status ORDER BY conversation_id) AS n
    FROM tool_steps
    WHERE result IS NOT NULL
)
WHERE n <= 3;
