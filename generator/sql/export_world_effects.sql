-- Each rollout's plan index and what its tool calls left in the world: one
-- [tool, effect, record] per answer that created, updated or deleted a record.
SELECT rollout_id, idx,
       list_transform(
           list_filter(from_json(CAST(events AS VARCHAR), '["JSON"]'),
                       lambda e: (e->>'effect') IS NOT NULL),
           lambda e: [e->>'tool', e->>'effect', coalesce(e->>'entity_id', '')])
FROM rollouts
ORDER BY run_id, idx;
