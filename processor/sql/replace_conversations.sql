-- Swap in the rebuilt conversations of the chunk (registered Arrow table new_conversations).
DELETE FROM conversations WHERE conversation_id IN (SELECT conversation_id FROM chunk);
INSERT INTO conversations BY NAME SELECT * FROM new_conversations;
