-- One stored schema per tool: definitions offered to the model win over observed ones.
SELECT tool, schema, source
FROM tool_schemas
QUALIFY row_number() OVER (PARTITION BY tool
                           ORDER BY source = 'definitions' DESC, calls DESC, source) = 1
ORDER BY tool;
