-- Conversations, graded and failed per value of each axis.
SELECT axis, value, count(*) AS conversations, count(outcome) AS graded,
       count(*) FILTER (WHERE outcome = 'fail') AS failed
FROM (
    SELECT outcome, unnest([
        {'axis': 'tool', 'value': tool},
        {'axis': 'tool_condition', 'value': tool_condition},
        {'axis': 'world_state', 'value': world_state},
        {'axis': 'history', 'value': history},
        {'axis': 'user_stance', 'value': user_stance},
        {'axis': 'policy_rule', 'value': policy_rule}
    ], recursive := true)
    FROM conversations
)
GROUP BY ALL
ORDER BY axis, conversations DESC, value;
