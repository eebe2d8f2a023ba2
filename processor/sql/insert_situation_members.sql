-- Members of every situation: the conversations that match all of its coordinates
-- (a relational division of conversation_coordinates by the registered Arrow table
-- situation_coordinates: situation_id, axis, value, size = its number of coordinates).
INSERT INTO situation_members
SELECT s.situation_id, c.conversation_id, p.period, p.failed
FROM situation_coordinates s
JOIN conversation_coordinates c ON c.axis = s.axis AND c.value = s.value
JOIN conversation_periods p USING (conversation_id)
GROUP BY s.situation_id, c.conversation_id, p.period, p.failed, s.size
HAVING count(*) = s.size;
