-- Up to three real results per tool and status, for the generator's simulated world.
DELETE FROM tool_exemplars;
INSERT INTO tool_exemplars
SELECT tool, arguments, result, status, conversation_id
FROM (
    SELECT step->>'tool' AS tool, step->>'arguments' AS arguments, step->>'result' AS result,
           step->>'status' AS status, conversation_id,
           row_number() OVER (PARTITION BY step->>'tool', step->>'status'
                              ORDER BY conversation_id) AS n
    FROM (SELECT conversation_id, unnest(from_json(steps, '["JSON"]')) AS step
          FROM conversations)
    WHERE step->>'result' IS NOT NULL
)
WHERE n <= 3;
