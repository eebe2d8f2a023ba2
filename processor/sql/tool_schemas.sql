-- Tool schemas observed in the arguments of every step ($1: now), rebuilt from the
-- conversations table.
DELETE FROM tool_schemas WHERE source = 'observed';
INSERT INTO tool_schemas
SELECT step->>'tool' AS tool,
       json_group_structure(TRY_CAST(step->>'arguments' AS JSON)) AS schema,
       'observed', count(*), $1
FROM (SELECT unnest(from_json(steps, '["JSON"]')) AS step FROM conversations)
WHERE step->>'tool' IS NOT NULL
GROUP BY 1;
