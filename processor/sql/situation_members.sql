-- Member conversations of every situation (or of the one named $1): failing ones of the
-- latest period first (those are its examples), then the rest of the latest period, then
-- the others; by conversation id within each.
SELECT situation_id, conversation_id, coalesce(failed, false) AS example
FROM situation_members
WHERE $1 IS NULL OR situation_id = $1
ORDER BY situation_id, period = 'latest' IS NOT TRUE, failed IS NOT TRUE, conversation_id;
