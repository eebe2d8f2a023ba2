-- Rows whose key no trace maps to any more (their traces moved to another conversation).
DELETE FROM conversations
WHERE conversation_id NOT IN (SELECT conversation_id FROM trace_keys);
