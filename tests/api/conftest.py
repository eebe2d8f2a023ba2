"""A real store for the admin API's tests: a production stream through the collector's
real pipeline, processed into conversations and a failure map (built once per session,
copied per test); and one with four model versions (v0, v0.5, then v1, v2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from processor.run import ProcessOptions, process
from tests.api.older_stream import older_stream
from tests.support.pipeline import processed_production_store, store_requests
from tests.support.synthetic import production_stream
from tracemill.store import open_store


@pytest.fixture(scope="session")
def processed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return processed_production_store(tmp_path_factory.mktemp("api") / "production.duckdb",
                                      seed=5)


@pytest.fixture
def db(processed_db: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tracemill.duckdb"
    shutil.copy(processed_db, target)
    return target


@pytest.fixture(scope="session")
def four_versions_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two production streams, the older one (v0, v0.5) ending before the other (v1, v2)
    starts: the stored map compares v2 with v1, and ``since`` can name v0 or v0.5."""
    db = tmp_path_factory.mktemp("versions") / "versions.duckdb"
    newer = production_stream(seed=5, conversations_per_version=400).requests
    store_requests(db, [*older_stream(9, ("v0", "v0.5"), newer), *newer])
    store = open_store(db)
    try:
        process(store, ProcessOptions())
    finally:
        store.close()
    return db
