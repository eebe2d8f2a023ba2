-- Tool schemas observed in the arguments of every step, and up to three result exemplars
-- per tool and status, rebuilt from the conversations table.
DELETE FROM tool_schemas WHERE source = 'observed';
INSERT INTO tool_schemas
SELECT step->>'tool' AS tool,
       json_group_structure(TRY_CAST(step->>'arguments' AS JSON)) AS schema,
       'observed', count(*), $1
FROM (SELECT unnest(from_json(steps, '["JSON"]')) AS step FROM conversations)
WHERE step->>'tool' IS NOT NULL
GROUP BY 1;
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
