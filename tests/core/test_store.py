"""The store: numbered migrations, schema versions, clear errors for unusable files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemill.errors import SchemaError, StoreError
from tracemill.store import COMPONENTS, migrations, open_store


def test_migrations_are_recorded_once(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    store = open_store(db)
    assert store.schema_versions() == {
        component: migrations(component)[-1].version for component in COMPONENTS}
    assert store.migrate() == []
    tables = {row[0] for row in store.query(
        "SELECT table_name FROM information_schema.tables")}
    assert {"otlp_spans", "otlp_log_records", "spans", "log_records",
            "collector_commits", "collector_spool_cursor", "conversations",
            "failure_map"} <= tables
    store.close()
    reopened = open_store(db)
    assert reopened.query("SELECT count(*) FROM tracemill_migrations") == [
        (sum(len(migrations(component)) for component in COMPONENTS),)]
    reopened.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "future.duckdb"
    store = open_store(db)
    store.query("INSERT INTO tracemill_migrations (component, version, name) "
                "VALUES ('collector', 999, 'from_the_future')")
    store.close()
    with pytest.raises(SchemaError, match="newer than this tracemill knows"):
        open_store(db)


def test_a_file_that_is_not_duckdb_is_named(tmp_path: Path) -> None:
    db = tmp_path / "notes.duckdb"
    db.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match="cannot open the store"):
        open_store(db)
    assert db.read_text().startswith("these are my notes")


def test_missing_folder_and_missing_read_only_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "no" / "such" / "t.duckdb")
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "absent.duckdb", read_only=True)
