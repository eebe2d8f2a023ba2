-- Counts per cell and period, from the profiles (profiles.sql): pairs of coordinates on
-- two axes (axis_a < axis_b) by a self-join of the profiles' coordinates, and single
-- coordinates (written with '*' as their second axis and value) from the coordinates alone.
WITH coordinate AS (
    SELECT profile, period, failed, n, unnest(coordinates, recursive := true)
    FROM coordinate_profiles
),
cells AS (
    SELECT a.period, a.failed, a.n, a.axis AS axis_a, a.value AS value_a,
           b.axis AS axis_b, b.value AS value_b
    FROM coordinate a
    JOIN coordinate b ON a.profile = b.profile AND a.axis < b.axis
    UNION ALL
    SELECT period, failed, n, axis, value, '*', '*'
    FROM coordinate
)
SELECT axis_a, value_a, axis_b, value_b,
    sum(n) AS conversations,
    coalesce(sum(n) FILTER (WHERE period = 'latest' AND failed IS NOT NULL), 0)
        AS graded_latest,
    coalesce(sum(n) FILTER (WHERE period = 'latest' AND failed), 0) AS failed_latest,
    coalesce(sum(n) FILTER (WHERE period = 'previous' AND failed IS NOT NULL), 0)
        AS graded_previous,
    coalesce(sum(n) FILTER (WHERE period = 'previous' AND failed), 0) AS failed_previous
FROM cells
GROUP BY ALL
ORDER BY 1, 2, 3, 4;
