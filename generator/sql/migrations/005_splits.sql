-- Held-out sets (`tracemill split`): the side of each situation, stored so that the split
-- is stable: a rollout that arrives later joins the side its situation already has.

-- One row per situation: its side and why it went there.
CREATE TABLE splits (
    situation_key VARCHAR NOT NULL PRIMARY KEY,  -- md5 of the label and world signature
    label VARCHAR NOT NULL,         -- the cell (or the explored axes) and world signature
    side VARCHAR NOT NULL,          -- train | held_out
    reason VARCHAR NOT NULL,        -- signature (first of a fault/behaviour) | fill | train
    seed BIGINT NOT NULL,           -- the split's seed
    held_out_share DOUBLE NOT NULL, -- the share of situations asked for
    assigned_unix_nano UBIGINT NOT NULL
);

-- Each rollout's situation: the cell it aimed at (or, when exploring, its six axis values)
-- and its world signature (mutation kind, world state, the faults scheduled), never its
-- prompt text, so paraphrases of one situation share a key. fault and behaviour make the
-- (fault, behaviour) signature the split covers first.
CREATE VIEW rollout_situations AS
SELECT rollout_id,
       md5(label) AS situation_key,
       label,
       fault,
       CASE WHEN NOT graded THEN 'ungraded'
            WHEN passed THEN 'passed'
            ELSE coalesce(failure_class, 'failed') END AS behaviour
FROM (
    SELECT r.rollout_id, r.graded, r.passed, r.failure_class,
           coalesce(r.cell, 'explore ' || CAST(r.situation AS VARCHAR))
             || ' | ' || coalesce(r.lineage->'mutation'->>'kind', '-')
             || ' | ' || coalesce(r.lineage->'mutation'->>'world_state', '-')
             || ' | ' || coalesce(array_to_string(faults, ','), '') AS label,
           coalesce(nullif(array_to_string(faults, ','), ''), 'no_fault') AS fault
    FROM (
        SELECT *, list_sort(list_distinct(list_transform(
                   from_json(coalesce(lineage->'mutation'->'faults', '[]'), '["JSON"]'),
                   lambda f: (f->>'tool') || ':' || (f->>'condition')))) AS faults
        FROM rollouts
    ) AS r
) AS s;
