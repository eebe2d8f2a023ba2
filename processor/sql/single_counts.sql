-- Counts per single coordinate (axis, value) and period, from the temp table
-- conversation_periods (periods.sql).
WITH coordinates AS (
    SELECT period, outcome, unnest([
        {'axis': 'history', 'value': history},
        {'axis': 'policy_rule', 'value': policy_rule},
        {'axis': 'tool', 'value': tool},
        {'axis': 'tool_condition', 'value': tool_condition},
        {'axis': 'user_stance', 'value': user_stance},
        {'axis': 'world_state', 'value': world_state}
    ]) AS coordinate
    FROM conversation_periods
)
SELECT
    coordinate.axis, coordinate.value,
    count(*) AS conversations,
    count(outcome) FILTER (WHERE period = 'latest') AS graded_latest,
    count(*) FILTER (WHERE period = 'latest' AND outcome = 'fail') AS failed_latest,
    count(outcome) FILTER (WHERE period = 'previous') AS graded_previous,
    count(*) FILTER (WHERE period = 'previous' AND outcome = 'fail') AS failed_previous
FROM coordinates
GROUP BY ALL
ORDER BY 1, 2;
