-- Every value seen on each axis of the stored conversations.
SELECT DISTINCT axis, value
FROM (
    SELECT unnest([
        {'axis': 'tool', 'value': tool},
        {'axis': 'tool_condition', 'value': tool_condition},
        {'axis': 'world_state', 'value': world_state},
        {'axis': 'history', 'value': history},
        {'axis': 'user_stance', 'value': user_stance},
        {'axis': 'policy_rule', 'value': policy_rule}
    ], recursive := true)
    FROM conversations
)
ORDER BY axis, value;
