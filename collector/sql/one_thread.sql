-- The collector's DuckDB runs each statement on the thread that issues it. Its inserts and
-- commits already run side by side on two threads of their own (collector/materializer.py);
-- DuckDB's worker threads on top of that cost ~30 % more CPU per stored fat span (scanning
-- the Arrow batches in parallel, then putting the rows back in order: 29 -> 21 CPU-us a
-- span for insert and commit, bench/collector_cpu.py, "insert"). A global setting: the
-- queries of the same process (the /stats document) run on one thread too.
SET threads = 1;
