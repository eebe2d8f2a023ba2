-- Counts per single coordinate (axis, value) and period, from the temp table
-- conversation_periods (periods.sql).
WITH coordinates AS (
    SELECT period, outcome, n, unnest([
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
    sum(n) AS conversations,
    coalesce(sum(n) FILTER (WHERE period = 'latest' AND outcome IS NOT NULL), 0)
        AS graded_latest,
    coalesce(sum(n) FILTER (WHERE period = 'latest' AND outcome = 'fail'), 0) AS failed_latest,
    coalesce(sum(n) FILTER (WHERE period = 'previous' AND outcome IS NOT NULL), 0)
        AS graded_previous,
    coalesce(sum(n) FILTER (WHERE period = 'previous' AND outcome = 'fail'), 0)
        AS failed_previous
FROM coordinates
GROUP BY ALL
ORDER BY 1, 2;
