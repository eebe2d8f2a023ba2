-- Whether the store has the splits table (a store last opened read-only by an older
-- tracemill may not, until a command that writes migrates it).
SELECT count(*) FROM information_schema.tables WHERE table_name = 'splits';
