-- Source conversations of every non-passing failure-map cell ($1: most per cell): failing
-- ones first, then the most recent, then by id (so the choice is deterministic).
WITH members AS (
    SELECT m.axis_a, m.value_a, m.axis_b, m.value_b, v.*,
           row_number() OVER (
               PARTITION BY m.axis_a, m.value_a, m.axis_b, m.value_b
               ORDER BY coalesce(v.outcome = 'fail', false) DESC, v.start_unix_nano DESC,
                        v.conversation_id) AS rank
    FROM failure_map m
    JOIN conversations v
      ON (CASE m.axis_a WHEN 'tool' THEN v.tool WHEN 'tool_condition' THEN v.tool_condition
                        WHEN 'world_state' THEN v.world_state WHEN 'history' THEN v.history
                        WHEN 'user_stance' THEN v.user_stance
                        WHEN 'policy_rule' THEN v.policy_rule END) = m.value_a
     AND (m.axis_b = '*'
          OR (CASE m.axis_b WHEN 'tool' THEN v.tool WHEN 'tool_condition' THEN v.tool_condition
                            WHEN 'world_state' THEN v.world_state WHEN 'history' THEN v.history
                            WHEN 'user_stance' THEN v.user_stance
                            WHEN 'policy_rule' THEN v.policy_rule END) = m.value_b)
    WHERE m.status <> 'passing'
)
SELECT axis_a, value_a, axis_b, value_b, conversation_id, first_ask, steps,
       coalesce(outcome = 'fail', false) AS failed, tool, tool_condition, world_state,
       history, user_stance, policy_rule
FROM members
WHERE rank <= $1
ORDER BY axis_a, value_a, axis_b, value_b, rank;
