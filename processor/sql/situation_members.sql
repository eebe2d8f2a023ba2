-- Member conversations of every situation (or of the one named $1), with period and
-- outcome: its own first (outside the situations it was judged without; NULL, stored
-- before that was recorded: own), then failing ones of the latest period first (those are
-- its examples), then the rest of the latest period, then the others; by conversation id
-- within each.
SELECT situation_id, conversation_id, period, failed, coalesce(own, true) AS own,
       coalesce(failed, false) AND coalesce(own, true) AS example
FROM situation_members
WHERE $1 IS NULL OR situation_id = $1
ORDER BY situation_id, coalesce(own, true) DESC, period = 'latest' IS NOT TRUE,
         failed IS NOT TRUE, conversation_id;
