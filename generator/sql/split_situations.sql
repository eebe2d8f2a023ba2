-- Per situation: its label, its rollouts, and its distinct (fault, behaviour) signatures
-- counted on rollouts whose mutation did not fail to fire (those do not show the situation).
SELECT s.situation_key, any_value(s.label) AS label, count(*) AS rollouts,
       list_sort(list_distinct(list(s.fault || ' / ' || s.behaviour)
                 FILTER (WHERE r.mutation_fired IS DISTINCT FROM false))) AS signatures
FROM rollout_situations AS s JOIN rollouts AS r USING (rollout_id)
GROUP BY s.situation_key
ORDER BY s.situation_key;
