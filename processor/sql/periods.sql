-- How many conversations share each combination of period, outcome and six coordinates,
-- for cell_counts.sql (grouping first keeps its unnest small).
-- $1 is the mode: 'versions' compares model version $2 (latest) with $3 (previous);
-- 'halves' compares conversations starting at or after $4 with those before (one version).
CREATE OR REPLACE TEMP TABLE conversation_periods AS
SELECT outcome, history, policy_rule, tool, tool_condition, user_stance, world_state,
    count(*) AS n,
    CASE
        WHEN $1 = 'versions' AND model_version IS NOT DISTINCT FROM $2 THEN 'latest'
        WHEN $1 = 'versions' AND model_version IS NOT DISTINCT FROM $3 THEN 'previous'
        WHEN $1 = 'halves' AND start_unix_nano >= $4 THEN 'latest'
        WHEN $1 = 'halves' THEN 'previous'
    END AS period
FROM conversations
GROUP BY ALL;
