-- Drop cursor rows older than the commit before this one ($1 is that commit's number).
-- Only a commit whose number is a multiple of the prune interval runs it, so the commit
-- open beside it never deletes the same rows (that would be a write-write conflict).
DELETE FROM collector_spool_cursor WHERE commits < ?;
