-- Store one situation's side ($1 key, $2 label, $3 side, $4 reason, $5 seed, $6 share, $7 when).
INSERT INTO splits (situation_key, label, side, reason, seed, held_out_share, assigned_unix_nano)
VALUES ($1, $2, $3, $4, $5, $6, $7);
