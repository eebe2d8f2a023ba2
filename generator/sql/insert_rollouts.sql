-- Store a batch of finished rollouts (registered as rollout_batch); a rollout already
-- stored for the same run and plan index (a resumed run's overlap) is skipped.
INSERT INTO rollouts
SELECT b.* FROM rollout_batch AS b
WHERE NOT EXISTS (SELECT 1 FROM rollouts AS r WHERE r.run_id = b.run_id AND r.idx = b.idx);
