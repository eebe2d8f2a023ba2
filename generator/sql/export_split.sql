-- The stored split in one row: its seed, share, and situations per side.
SELECT any_value(seed), any_value(held_out_share),
       count(*) FILTER (WHERE side = 'held_out'), count(*) FILTER (WHERE side = 'train'),
       count(*) FILTER (WHERE reason = 'signature')
FROM splits;
