"""The collector's DuckDB runs statements on the calling thread (``one_thread.sql``)."""

from __future__ import annotations

from pathlib import Path

from collector.metrics import Metrics
from collector.pipeline import Pipeline
from tracemill.config import Settings
from tracemill.store import open_store


def test_a_pipeline_sets_its_file_store_to_one_duckdb_thread(tmp_path: Path) -> None:
    db = tmp_path / "threads.duckdb"
    store = open_store(db)
    try:
        store.query("SET threads = 2")
        pipeline = Pipeline(Settings(db=db), store, Metrics())
        try:
            assert store.query("SELECT current_setting('threads')") == [(1,)]
        finally:
            pipeline.decoders.shutdown()
            pipeline.spool.close()
    finally:
        store.close()
