-- Up to $1 member conversations of each situation for the report, its own first (outside
-- the situations it was judged without), failing ones of the latest period first, with
-- what a reader needs to pick one: version, outcome, first ask.
SELECT m.situation_id, c.conversation_id, c.model_version, c.outcome,
       left(c.first_ask, 300) AS first_ask
FROM situation_members AS m
JOIN conversations AS c USING (conversation_id)
QUALIFY row_number() OVER (
    PARTITION BY m.situation_id
    ORDER BY coalesce(m.own, true) DESC, m.period = 'latest' IS NOT TRUE,
             m.failed IS NOT TRUE, c.conversation_id) <= $1
ORDER BY m.situation_id, coalesce(m.own, true) DESC, m.period = 'latest' IS NOT TRUE,
         m.failed IS NOT TRUE, c.conversation_id;
