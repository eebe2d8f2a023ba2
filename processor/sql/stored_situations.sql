-- The stored situations (all, or the one named $1), as processing last computed them.
-- processor/map_records.py orders them worst first.
SELECT situation_id, label, coordinates, latest_version, previous_version, conversations,
       graded_latest, failed_latest, graded_previous, failed_previous,
       low_latest, high_latest, low_previous, high_previous,
       baseline_latest, baseline_previous, diff_low, diff_high, p_value, compared, status,
       reason, low_support, priority, budget_share, cells, computed_unix_nano,
       coalesce(judged_without, '[]') AS judged_without
FROM situations
WHERE $1 IS NULL OR situation_id = $1;
