-- The period and outcome of every conversation, for the failure map and its situations.
-- $1 is the mode: 'versions' compares model version $2 (latest) with $3 (previous);
-- 'halves' compares conversations starting at or after $4 with those before (one version).
-- period is NULL for conversations of neither compared version; failed is NULL when
-- ungraded.
CREATE OR REPLACE TEMP TABLE conversation_periods AS
SELECT conversation_id,
    CASE
        WHEN $1 = 'versions' AND model_version IS NOT DISTINCT FROM $2 THEN 'latest'
        WHEN $1 = 'versions' AND model_version IS NOT DISTINCT FROM $3 THEN 'previous'
        WHEN $1 = 'halves' AND start_unix_nano >= $4 THEN 'latest'
        WHEN $1 = 'halves' THEN 'previous'
    END AS period,
    CASE outcome WHEN 'fail' THEN true WHEN 'pass' THEN false END AS failed
FROM conversations;
