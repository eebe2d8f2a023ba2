-- Where the materializer has got to in the spool (a global byte offset), and its commits.
SELECT position, commits FROM collector_spool_cursor
