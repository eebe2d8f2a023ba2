-- Whether a rollout's planned mutation took effect in its world (a record held in its
-- mutated state was read or acted on, a scheduled fault fired): true, false, or NULL when
-- the mutation needs no effect (reperson, paraphrase, explore without faults) or the world
-- could not apply it (a team's own world, `--world`). A rollout whose mutation did not
-- fire does not show its situation: it stays stored, marked false.
ALTER TABLE rollouts ADD COLUMN mutation_fired BOOLEAN;
