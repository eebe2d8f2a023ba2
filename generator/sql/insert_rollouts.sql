-- Store a batch of finished rollouts (registered as rollout_batch), columns matched by
-- name; a rollout already stored for the same run and plan index (a resumed run's
-- overlap) is skipped.
INSERT INTO rollouts BY NAME
SELECT b.* FROM rollout_batch AS b
WHERE NOT EXISTS (SELECT 1 FROM rollouts AS r WHERE r.run_id = b.run_id AND r.idx = b.idx);
