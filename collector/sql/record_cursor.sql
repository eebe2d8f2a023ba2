-- The spool position a commit reached and its number, appended in the commit's own
-- transaction (read back by collector/sql/spool_cursor.sql: the row with most commits).
INSERT INTO collector_spool_cursor (position, commits) VALUES (?, ?);
