-- Where the materializer has got to in the spool (a global byte offset), and its commits:
-- the newest row. Each commit appends one (collector/sql/record_cursor.sql), so two
-- transactions open at once never write the same row; old ones are pruned.
SELECT position, commits FROM collector_spool_cursor ORDER BY commits DESC LIMIT 1
