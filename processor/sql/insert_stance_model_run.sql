-- What one model pass did (processor/stance_model.py).
INSERT INTO stance_model_runs
    (run_unix_nano, model, missing, asked, unparseable, failed, error)
VALUES (?, ?, ?, ?, ?, ?, ?);
