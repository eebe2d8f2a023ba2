"""Shared fixtures of the generator's integration tests: a production store with a map.

The store is built once per session, the way production fills it: the synthetic stream
(tests/support/synthetic.py) goes through the real collector pipeline into a real DuckDB
file, and the processor turns it into conversations and a failure map. Each test gets its
own copy of the closed file, so runs never see each other's rollouts.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from processor.run import ProcessOptions, process
from tests.support.pipeline import store_requests
from tests.support.synthetic import production_stream
from tracemill.cli import main
from tracemill.store import open_store

StoreCopy = Callable[[str], Path]
"""Makes a fresh copy of the production store under the test's tmp_path, by file name."""

ReadRollouts = Callable[[Path], list[dict[str, Any]]]
"""Reads every stored rollout of a (closed) store file, ordered by run and plan index."""


@pytest.fixture(scope="session")
def production_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed store holding a production stream, its conversations and failure map."""
    db = tmp_path_factory.mktemp("production") / "production.duckdb"
    stream = production_stream(seed=5, conversations_per_version=400)
    store_requests(db, stream.requests)
    store = open_store(db)
    try:
        process(store, ProcessOptions())
        (cells,) = store.query("SELECT count(*) FROM failure_map WHERE status IN "
                               "('new', 'persistent')")[0]
        assert cells > 0, "the production store must have failing cells to aim at"
    finally:
        store.close()
    return db


@pytest.fixture
def store_copy(production_db: Path, tmp_path: Path) -> StoreCopy:
    """``store_copy("a.duckdb")``: a private copy of the production store."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copy(production_db, target)
        return target

    return copy


@pytest.fixture(scope="session")
def read_rollouts() -> ReadRollouts:
    """Every stored rollout of a closed store, as column -> value mappings."""

    def read(db: Path) -> list[dict[str, Any]]:
        store = open_store(db, read_only=True)
        try:
            cursor = store.cursor()
            try:
                cursor.execute("SELECT * FROM rollouts ORDER BY run_id, idx")
                names = [column[0] for column in cursor.description or ()]
                return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            finally:
                cursor.close()
        finally:
            store.close()

    return read


@dataclass(frozen=True)
class CliResult:
    """What one in-process ``tracemill`` command did."""

    code: int
    """Its exit code."""
    out: str
    """Everything it printed on stdout."""
    err: str
    """Everything it printed on stderr."""

    def json(self) -> Any:
        """Stdout parsed as JSON."""
        return json.loads(self.out)


RunCli = Callable[..., CliResult]
"""``run_cli(["generate", ...], environ={...})``: one command, as a user runs it."""


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """Run ``tracemill`` in-process from an empty folder (no stray tracemill.toml) with
    only the environment the test gives (no model keys leak in from the machine)."""
    monkeypatch.chdir(tmp_path)

    def run(argv: list[str], environ: dict[str, str] | None = None) -> CliResult:
        capsys.readouterr()
        code = main(argv, environ=dict(environ or {}))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
