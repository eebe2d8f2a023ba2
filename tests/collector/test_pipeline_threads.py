"""The collector's DuckDB runs statements on the calling thread by default
(``collector/sql/db_threads.sql``, the setting ``db_threads``); 0 leaves DuckDB's default."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.metrics import Metrics
from collector.pipeline import Pipeline
from tracemill.config import Settings
from tracemill.store import open_store


@pytest.mark.parametrize(("threads", "expected"), [(None, 1), (3, 3), (0, 2)])
def test_a_pipeline_sets_its_file_store_threads(tmp_path: Path, threads: int | None,
                                                expected: int) -> None:
    db = tmp_path / "threads.duckdb"
    store = open_store(db)
    try:
        store.query("SET threads = 2")
        settings = Settings(db=db) if threads is None else Settings(db=db, db_threads=threads)
        pipeline = Pipeline(settings, store, Metrics())
        try:
            assert store.query("SELECT current_setting('threads')") == [(expected,)]
        finally:
            pipeline.decoders.shutdown()
            pipeline.spool.close()
    finally:
        store.close()
