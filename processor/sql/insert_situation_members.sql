-- Members of every situation: the conversations that match all of its coordinates
-- (a relational division of conversation_coordinates by the registered Arrow table
-- situation_coordinates: situation_id, axis, value, size = its number of coordinates).
-- A member is the situation's own unless it is also a member of a situation it was judged
-- without (the registered Arrow table situation_inside: situation_id, inner_id).
INSERT INTO situation_members (situation_id, conversation_id, period, failed, own)
WITH matched AS (
    SELECT s.situation_id, c.conversation_id
    FROM situation_coordinates s
    JOIN conversation_coordinates c ON c.axis = s.axis AND c.value = s.value
    GROUP BY s.situation_id, c.conversation_id, s.size
    HAVING count(*) = s.size
),
explained AS (
    SELECT DISTINCT i.situation_id, m.conversation_id
    FROM situation_inside i
    JOIN matched m ON m.situation_id = i.inner_id
)
SELECT m.situation_id, m.conversation_id, p.period, p.failed, e.situation_id IS NULL
FROM matched m
JOIN conversation_periods p USING (conversation_id)
LEFT JOIN explained e USING (situation_id, conversation_id);
