-- Every value seen on each axis of the stored conversations (from the coordinates view,
-- processor/sql/coordinates.sql).
SELECT DISTINCT axis, value
FROM conversation_coordinates
ORDER BY axis, value;
