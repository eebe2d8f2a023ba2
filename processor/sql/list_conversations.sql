-- Conversations for `tracemill conversations`, filtered by outcome ($1: pass, fail,
-- ungraded or NULL), model version ($2), tool ($3), situation ($4) and conversation id
-- ($5), newest first, at most $6.
SELECT c.conversation_id, c.model_version, c.outcome, c.outcome_source, c.reward,
       c.labeled_by, c.first_ask, c.final_reply, c.messages, c.steps, c.tools, c.focal_step,
       c.evaluations, c.errors, c.tool, c.tool_condition, c.world_state, c.history,
       c.user_stance, c.policy_rule, c.trace_ids, c.session_id, c.input_tokens,
       c.output_tokens, c.content_missing, c.start_unix_nano, c.end_unix_nano,
       coalesce((SELECT list(m.situation_id ORDER BY m.situation_id)
                 FROM situation_members AS m
                 WHERE m.conversation_id = c.conversation_id), []) AS situations
FROM conversations AS c
WHERE ($1 IS NULL OR ($1 = 'ungraded' AND c.outcome IS NULL) OR c.outcome = $1)
  AND ($2 IS NULL OR c.model_version = $2)
  AND ($3 IS NULL OR c.tool = $3)
  AND ($4 IS NULL OR c.conversation_id IN (
        SELECT conversation_id FROM situation_members WHERE situation_id = $4))
  AND ($5 IS NULL OR c.conversation_id = $5)
ORDER BY c.start_unix_nano DESC, c.conversation_id
LIMIT $6;
