-- Tool schemas observed in the arguments of every step ($1: now), rebuilt from the
-- conversations table (through tool_steps.sql).
DELETE FROM tool_schemas WHERE source = 'observed';
INSERT INTO tool_schemas
SELECT tool, json_group_structure(TRY_CAST(arguments AS JSON)) AS schema,
       'observed', count(*), $1
FROM tool_steps
WHERE tool IS NOT NULL
GROUP BY 1;
