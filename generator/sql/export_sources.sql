-- The user turns of production conversations ($1: their ids), to decontaminate against.
SELECT conversation_id, user_turns FROM conversations
WHERE list_contains($1, conversation_id) ORDER BY conversation_id;
