-- The stored failure map, cells that are not passing first, by priority.
SELECT * FROM failure_map
ORDER BY status = 'passing', priority DESC, axis_a, value_a, axis_b, value_b;
