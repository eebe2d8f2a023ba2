-- The failure map's non-passing cells, the highest priority first (ties in cell order).
SELECT axis_a, value_a, axis_b, value_b, status, priority, budget_share, conversations,
       graded_latest, failed_latest, low_support
FROM failure_map
WHERE status <> 'passing'
ORDER BY priority DESC, axis_a, value_a, axis_b, value_b;
