-- Counts per cell and period, from the temp table conversation_periods (periods.sql):
-- pairs of coordinates on two axes (axis_a < axis_b), and single coordinates written with
-- '*' as their second axis and value.
WITH cells AS (
    SELECT period, outcome, n, unnest([
        {'axis_a': 'history', 'value_a': history, 'axis_b': 'policy_rule', 'value_b': policy_rule},
        {'axis_a': 'history', 'value_a': history, 'axis_b': 'tool', 'value_b': tool},
        {'axis_a': 'history', 'value_a': history, 'axis_b': 'tool_condition', 'value_b': tool_condition},
        {'axis_a': 'history', 'value_a': history, 'axis_b': 'user_stance', 'value_b': user_stance},
        {'axis_a': 'history', 'value_a': history, 'axis_b': 'world_state', 'value_b': world_state},
        {'axis_a': 'policy_rule', 'value_a': policy_rule, 'axis_b': 'tool', 'value_b': tool},
        {'axis_a': 'policy_rule', 'value_a': policy_rule, 'axis_b': 'tool_condition', 'value_b': tool_condition},
        {'axis_a': 'policy_rule', 'value_a': policy_rule, 'axis_b': 'user_stance', 'value_b': user_stance},
        {'axis_a': 'policy_rule', 'value_a': policy_rule, 'axis_b': 'world_state', 'value_b': world_state},
        {'axis_a': 'tool', 'value_a': tool, 'axis_b': 'tool_condition', 'value_b': tool_condition},
        {'axis_a': 'tool', 'value_a': tool, 'axis_b': 'user_stance', 'value_b': user_stance},
        {'axis_a': 'tool', 'value_a': tool, 'axis_b': 'world_state', 'value_b': world_state},
        {'axis_a': 'tool_condition', 'value_a': tool_condition, 'axis_b': 'user_stance', 'value_b': user_stance},
        {'axis_a': 'tool_condition', 'value_a': tool_condition, 'axis_b': 'world_state', 'value_b': world_state},
        {'axis_a': 'user_stance', 'value_a': user_stance, 'axis_b': 'world_state', 'value_b': world_state},
        {'axis_a': 'history', 'value_a': history, 'axis_b': '*', 'value_b': '*'},
        {'axis_a': 'policy_rule', 'value_a': policy_rule, 'axis_b': '*', 'value_b': '*'},
        {'axis_a': 'tool', 'value_a': tool, 'axis_b': '*', 'value_b': '*'},
        {'axis_a': 'tool_condition', 'value_a': tool_condition, 'axis_b': '*', 'value_b': '*'},
        {'axis_a': 'user_stance', 'value_a': user_stance, 'axis_b': '*', 'value_b': '*'},
        {'axis_a': 'world_state', 'value_a': world_state, 'axis_b': '*', 'value_b': '*'}
    ]) AS cell
    FROM conversation_periods
)
SELECT
    cell.axis_a, cell.value_a, cell.axis_b, cell.value_b,
    sum(n) AS conversations,
    coalesce(sum(n) FILTER (WHERE period = 'latest' AND outcome IS NOT NULL), 0)
        AS graded_latest,
    coalesce(sum(n) FILTER (WHERE period = 'latest' AND outcome = 'fail'), 0) AS failed_latest,
    coalesce(sum(n) FILTER (WHERE period = 'previous' AND outcome IS NOT NULL), 0)
        AS graded_previous,
    coalesce(sum(n) FILTER (WHERE period = 'previous' AND outcome = 'fail'), 0)
        AS failed_previous
FROM cells
GROUP BY ALL
ORDER BY 1, 2, 3, 4;
