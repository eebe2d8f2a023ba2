-- The stored split: every situation's side.
SELECT situation_key, label, side, reason, seed, held_out_share FROM splits ORDER BY situation_key;
