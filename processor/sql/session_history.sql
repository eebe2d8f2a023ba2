-- The history axis across a session, run after every rebuild.
--
-- A rebuilt row arrives with history placed from its own conversation only and
-- history_within NULL: keep that value first. Then recompute `history` of every row from
-- history_within: a conversation that is `fresh` on its own and shares its session_id
-- with an earlier conversation (by start_unix_nano, then conversation_id) becomes
-- `prior_failure` when one of those earlier conversations failed (outcome 'fail') or had
-- a failed tool step (tool_condition other than success, none or unknown),
-- `prior_partial_action` when one of them left something partly done (world_state
-- 'partially_completed'), else `repeat_visit`. Earlier conversations lie before this one's
-- failure point whatever happened in them, so this reads no later outcome. Every row is recomputed (one window query, cheap), so a late-arriving
-- earlier conversation updates the later ones, and a second run changes nothing. Only
-- session_id is used, not user_id: one person's visits weeks apart are not one episode.
UPDATE conversations SET history_within = history WHERE history_within IS NULL;

UPDATE conversations AS c SET history = s.history
FROM (
    SELECT conversation_id,
        CASE
            WHEN session_id IS NULL OR history_within <> 'fresh' THEN history_within
            WHEN coalesce(bool_or(failed) OVER earlier, false) THEN 'prior_failure'
            WHEN coalesce(bool_or(partial) OVER earlier, false) THEN 'prior_partial_action'
            WHEN count(*) OVER earlier > 0 THEN 'repeat_visit'
            ELSE 'fresh'
        END AS history
    FROM (
        SELECT conversation_id, session_id, start_unix_nano, history_within,
            coalesce(outcome = 'fail', false)
                OR tool_condition NOT IN ('success', 'none', 'unknown') AS failed,
            coalesce(world_state = 'partially_completed', false) AS partial
        FROM conversations
    )
    WINDOW earlier AS (PARTITION BY session_id ORDER BY start_unix_nano, conversation_id
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
) AS s
WHERE c.conversation_id = s.conversation_id AND c.history <> s.history;
