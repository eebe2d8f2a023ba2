-- Source conversations of every situation ($1: most per situation), from the members the
-- processor stored (situation_members; never derived again here): its own first (outside
-- the situations it was judged without, whose conversations are theirs to seed), failing
-- ones first, then the most recent, then by id (so the choice is deterministic). Each comes with its
-- coordinates from the coordinates view (processor/sql/coordinates.sql).
WITH ranked AS (
    SELECT m.situation_id, m.conversation_id, coalesce(m.failed, false) AS failed,
           row_number() OVER (
               PARTITION BY m.situation_id
               ORDER BY coalesce(m.own, true) DESC, coalesce(m.failed, false) DESC,
                        v.start_unix_nano DESC,
                        m.conversation_id) AS rank
    FROM situation_members m
    JOIN conversations v USING (conversation_id)
),
chosen AS (
    SELECT * FROM ranked WHERE rank <= $1
),
coordinates AS (
    SELECT c.conversation_id, list({'axis': c.axis, 'value': c.value} ORDER BY c.axis)
        AS coordinates
    FROM conversation_coordinates c
    WHERE c.conversation_id IN (SELECT conversation_id FROM chosen)
    GROUP BY c.conversation_id
)
SELECT r.situation_id, r.conversation_id, v.first_ask, v.steps, r.failed, k.coordinates
FROM chosen r
JOIN conversations v USING (conversation_id)
JOIN coordinates k USING (conversation_id)
ORDER BY r.situation_id, r.rank;
