-- Score-like attributes present but not read, with the conversations carrying them.
SELECT attribute, count(*) AS conversations
FROM (SELECT unnest(score_attributes) AS attribute FROM conversations)
GROUP BY attribute
ORDER BY conversations DESC, attribute;
