"""Fixtures for the DuckLake backend: a real PostgreSQL catalog, a fresh database per test.

These tests need DuckDB 1.5.5 with the DuckLake and PostgreSQL extension wheels
(``tracemill[lake]``) and a running PostgreSQL; ``.ci/lake`` builds that venv, starts
PostgreSQL on a free loopback port and passes it in ``LAKE_TEST_PG`` (libpq
key=value pairs without dbname) and ``LAKE_TEST_PG_BIN`` (the folder of createdb).
Anywhere else they skip, saying so.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tracemill.errors import StoreError
from tracemill.lake import load_extensions

_HOW = "run `bash .ci/lake` (it builds .venv-lake and starts PostgreSQL)"


def _lake_ready() -> str | None:
    """Why the lake cannot be tested here (None: it can)."""
    import duckdb

    connection = duckdb.connect()
    try:
        load_extensions(connection)
    except StoreError as exc:
        return f"the lake extensions do not load in this venv ({exc})"
    finally:
        connection.close()
    if not os.environ.get("LAKE_TEST_PG"):
        return "LAKE_TEST_PG names no running PostgreSQL"
    return None


@pytest.fixture(scope="session")
def postgres() -> str:
    """libpq key=value pairs of the test server (host, port, user), without dbname."""
    why = _lake_ready()
    if why is not None:
        pytest.skip(f"DuckLake tests skipped: {why}; {_HOW}")
    return os.environ["LAKE_TEST_PG"]


def create_database(postgres: str) -> str:
    """A new, empty PostgreSQL database on the test server; returns its name."""
    name = f"tm_{uuid.uuid4().hex[:12]}"
    options = dict(pair.split("=", 1) for pair in postgres.split())
    binary = Path(os.environ.get("LAKE_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
    subprocess.run([str(binary / "createdb"), "-h", options["host"], "-p", options["port"],
                    "-U", options["user"], name], check=True, capture_output=True)
    return name


def lake_url(postgres: str, database: str, data: Path, local: Path) -> str:
    """The store URL of the lake in ``database`` with its files under ``data``."""
    return (f"ducklake:postgres:dbname={database} {postgres} data_path={data} "
            f"local={local}")


def lake_file(path: Path, postgres: str, database: str, data: Path) -> Path:
    """Write a lake file at ``path`` (the URL of the lake in ``database``); returns it."""
    path.write_text(f"ducklake:postgres:dbname={database} {postgres} data_path={data}\n",
                    encoding="utf-8")
    return path


@pytest.fixture
def lake_database(postgres: str) -> str:
    """A fresh PostgreSQL database for one test's lake catalog."""
    return create_database(postgres)


@pytest.fixture
def lake(postgres: str, lake_database: str, tmp_path: Path) -> str:
    """The store URL of a new, empty lake (data in tmp_path/data, local folder tmp_path/local)."""
    return lake_url(postgres, lake_database, tmp_path / "data", tmp_path / "local")
