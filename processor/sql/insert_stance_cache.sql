-- One model answer (processor/stance_model.py).
INSERT INTO stance_cache
    (conversation_id, ask_hash, model, stance, answer, pattern_stance, asked_unix_nano)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING;
