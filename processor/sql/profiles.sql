-- Conversations that share period, outcome and every coordinate are interchangeable for
-- counting: one *profile* per such combination, with how many conversations it holds
-- (far fewer profiles than conversations, so the situation search stays cheap). Grouped
-- on the axis columns first (conversation_axes, coordinates.sql), then unpivoted: a
-- profile's coordinates are the same (axis, value) rows as conversation_coordinates.
-- Needs conversation_periods (periods.sql).
CREATE OR REPLACE TEMP TABLE coordinate_profiles AS
WITH grouped AS (
    SELECT p.period, p.failed, a.* EXCLUDE (conversation_id), count(*) AS n
    FROM conversation_axes a
    JOIN conversation_periods p USING (conversation_id)
    GROUP BY ALL
),
numbered AS (
    SELECT row_number() OVER () AS g, * FROM grouped
),
listed AS (
    SELECT g, period, failed, n,
           list({'axis': axis, 'value': value} ORDER BY axis) AS coordinates
    FROM (
        UNPIVOT numbered
        ON COLUMNS(* EXCLUDE (g, period, failed, n))
        INTO NAME axis VALUE value
    )
    GROUP BY g, period, failed, n
)
SELECT (row_number() OVER (ORDER BY period, failed, coordinates) - 1)::INTEGER AS profile,
       period, failed, coordinates, n
FROM listed;
