-- The model's labels onto the conversations whose first ask they were given for
-- (processor/stance_model.py). Rebuilt conversations come back with the pattern result,
-- so this runs after every rebuild; unparseable answers (stance NULL) leave it. $1: model.
UPDATE conversations AS c
SET user_stance = s.stance
FROM stance_cache AS s
WHERE s.conversation_id = c.conversation_id
    AND s.ask_hash = sha256(c.first_ask)
    AND s.model = $1
    AND s.stance IS NOT NULL
    AND c.user_stance IS DISTINCT FROM s.stance;
