"""A real store for the admin API's tests: a production stream through the collector's
real pipeline, processed into conversations and a failure map (built once per session,
copied per test)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from processor.run import ProcessOptions, process
from tests.support.pipeline import store_requests
from tests.support.synthetic import production_stream
from tracemill.store import open_store


@pytest.fixture(scope="session")
def processed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("api") / "production.duckdb"
    store_requests(db, production_stream(seed=5, conversations_per_version=400).requests)
    store = open_store(db)
    try:
        process(store, ProcessOptions())
    finally:
        store.close()
    return db


@pytest.fixture
def db(processed_db: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tracemill.duckdb"
    shutil.copy(processed_db, target)
    return target
