-- Real calls per tool: arguments shape sampled facts, successful results shape answers.
SELECT tool, arguments, result, status
FROM tool_exemplars
ORDER BY tool, status <> 'ok', conversation_id;
