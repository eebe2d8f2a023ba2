-- The collector's DuckDB runs each statement on the thread that issues it. Its inserts and
-- commits already run side by side on two threads of their own (collector/materializer.py);
-- DuckDB's worker threads on top of that cost ~30 % more CPU per stored fat span (scanning
-- the Arrow batches in parallel, then putting the rows back in order: 29 -> 21 CPU-us a
-- span for insert and commit, bench/collector_cpu.py, "insert"). A global setting: the
-- queries of the same process (serve's processing, the /stats document) run with it too.
-- The parameter: the setting db_threads (1 by default; 0 is not run: DuckDB's default).
SET threads = ?;
