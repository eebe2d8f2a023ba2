-- Every step of every conversation, read from the steps JSON once for tool_schemas.sql
-- and tool_exemplars.sql (each unnesting it as JSON took longer than both queries).
CREATE OR REPLACE TEMP TABLE tool_steps AS
SELECT conversation_id, step.tool, step.arguments, step.result, step.status
FROM (
    SELECT conversation_id,
           unnest(from_json(steps, '[{"tool": "VARCHAR", "arguments": "VARCHAR",
                                      "result": "VARCHAR", "status": "VARCHAR"}]')) AS step
    FROM conversations
);
