-- Swap in rebuilt conversations: the temp table written holds their ids, the registered
-- Arrow table new_conversations their rows.
DELETE FROM conversations WHERE conversation_id IN (SELECT conversation_id FROM written);
INSERT INTO conversations BY NAME SELECT * FROM new_conversations;
