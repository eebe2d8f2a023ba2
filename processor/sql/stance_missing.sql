-- Conversations with a captured first ask and no stance_cache entry for this model
-- (processor/stance_model.py). $1: the model spec.
SELECT c.conversation_id, c.first_ask, sha256(c.first_ask) AS ask_hash, c.user_stance
FROM conversations AS c
LEFT JOIN stance_cache AS s
    ON s.conversation_id = c.conversation_id
    AND s.ask_hash = sha256(c.first_ask)
    AND s.model = $1
WHERE c.first_ask IS NOT NULL AND s.conversation_id IS NULL
ORDER BY c.conversation_id;
