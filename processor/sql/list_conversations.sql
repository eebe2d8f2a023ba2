-- Conversations for `tracemill conversations`, filtered by outcome ($1: pass, fail,
-- ungraded or NULL), model version ($2) and tool ($3), newest first, at most $4.
SELECT conversation_id, model_version, outcome, outcome_source, first_ask, final_reply,
       steps, tool, tool_condition, world_state, history, user_stance, policy_rule,
       trace_ids, input_tokens, output_tokens
FROM conversations
WHERE ($1 IS NULL OR ($1 = 'ungraded' AND outcome IS NULL) OR outcome = $1)
  AND ($2 IS NULL OR model_version = $2)
  AND ($3 IS NULL OR tool = $3)
ORDER BY start_unix_nano DESC
LIMIT $4;
