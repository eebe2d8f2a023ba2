-- Labels of the conversations in the temp table chunk (by conversation or trace id),
-- newest first.
SELECT DISTINCT k.conversation_id, b.passed, b.reward, b.kind, b.labeled_by,
       b.created_unix_nano
FROM labels AS b
JOIN trace_keys AS k ON b.target = k.conversation_id OR b.target = k.trace_id
JOIN chunk AS c ON c.conversation_id = k.conversation_id
ORDER BY b.created_unix_nano DESC;
