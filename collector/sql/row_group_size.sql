-- Rows per row group of the store's file: set when it was attached with ROW_GROUP_SIZE,
-- NULL when DuckDB's default applies. The materializer cuts transactions to whole row
-- groups, which DuckDB writes compressed straight to the file instead of to the WAL.
SELECT options['row_group_size']
FROM duckdb_databases()
WHERE database_name = current_database();
