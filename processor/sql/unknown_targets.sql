-- Label targets ($1: a list) that name no stored conversation, trace or rollout yet.
SELECT t.target
FROM unnest($1::VARCHAR[]) AS t(target)
WHERE NOT EXISTS (SELECT 1 FROM conversations AS c
                  WHERE c.conversation_id = t.target OR list_contains(c.trace_ids, t.target))
  AND NOT EXISTS (SELECT 1 FROM rollouts AS r WHERE r.rollout_id = t.target)
ORDER BY 1;
