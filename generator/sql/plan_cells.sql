-- The failure map's situations (processor/situations.py: every one is new, persistent,
-- uncertain or fixed), the highest priority first (ties by label).
SELECT situation_id, coordinates, status, priority, budget_share, conversations,
       graded_latest, failed_latest, low_support
FROM situations
ORDER BY priority DESC, label;
