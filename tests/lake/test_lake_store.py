"""The lake store: URL, migrations without keys, per-process bookkeeping, the same map.

The URL and migration-text tests run anywhere; the rest need a real PostgreSQL catalog
and the lake venv (see conftest.py) and skip elsewhere, naming ``.ci/lake``.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from processor.map_records import read_cells, read_situations
from processor.run import process
from tests.lake.conftest import lake_file, lake_url
from tests.support.otlp import genai_span, trace_request
from tests.support.pipeline import store_requests
from tests.support.synthetic import scaled_stream
from tracemill.errors import StoreLockedError
from tracemill.lake import LakeError, lake_migration_sql, parse_lake_url
from tracemill.store import COMPONENTS, is_lake, migrations, open_store


def test_the_url_names_catalog_data_and_local_folder() -> None:
    url = parse_lake_url("ducklake:postgres:dbname=tm host=10.0.0.5 port=5433 "
                         "password='s3 cret' data_path=/srv/lake local=/var/lib/tm")
    assert url.attach == "ducklake:postgres:dbname=tm host=10.0.0.5 port=5433 password='s3 cret'"
    assert url.data_path == "/srv/lake"
    assert url.anchor == Path("/var/lib/tm/lake")
    assert "s3 cret" not in url.display()
    # --db travels as a Path, which folds the double slash of an object store URL
    folded = parse_lake_url(str(Path("ducklake:postgres:dbname=tm data_path=s3://bucket/lake")))
    assert folded.data_path == "s3://bucket/lake"
    assert is_lake(Path("ducklake:postgres:dbname=tm")) and not is_lake(Path("t.duckdb"))


@pytest.mark.parametrize(("url", "says"), [
    ("ducklake:sqlite:x.db", "PostgreSQL catalog"),
    ("ducklake:postgres:postgresql://u@h/db", "key=value pairs"),
    ("ducklake:postgres:data_path=/x", "dbname"),
])
def test_a_bad_url_is_explained(url: str, says: str) -> None:
    with pytest.raises(LakeError, match=says):
        parse_lake_url(url)


def test_lake_migrations_keep_every_table_and_drop_every_key() -> None:
    for component in COMPONENTS:
        for migration in migrations(component):
            text = lake_migration_sql(migration.sql)
            assert not re.search(r"PRIMARY\s+KEY|UNIQUE|CREATE\s+INDEX", text, re.IGNORECASE)
            tables = re.findall(r"CREATE TABLE (\w+)", migration.sql)
            assert tables == re.findall(r"CREATE TABLE (\w+)", text)
    splits = next(m for m in migrations("generator") if m.name == "splits")
    assert "situation_key VARCHAR NOT NULL," in lake_migration_sql(splits.sql)


def test_migrations_apply_once_and_each_writer_has_its_own_cursor(
        lake: str, postgres: str, lake_database: str, tmp_path: Path) -> None:
    store = open_store(lake)
    assert store.is_lake
    assert store.schema_versions() == {
        component: migrations(component)[-1].version for component in COMPONENTS}
    assert store.migrate() == []
    store.query("UPDATE collector_spool_cursor SET position = 77")
    store.close()
    other = open_store(lake_url(postgres, lake_database, tmp_path / "data",
                                tmp_path / "other"))
    # a second writer starts its own spool at 0; the first one's position is kept
    assert other.query("SELECT position FROM collector_spool_cursor") == [(0,)]
    other.close()
    again = open_store(lake)
    assert again.query("SELECT position FROM collector_spool_cursor") == [(77,)]
    assert again.query("SELECT count(*) FROM tracemill_migrations") == [
        (sum(len(migrations(component)) for component in COMPONENTS),)]
    again.close()


def test_two_processes_migrating_a_new_lake_at_once_record_each_migration_once(
        postgres: str, lake_database: str, tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def open_one(name: str) -> None:
        try:
            open_store(lake_url(postgres, lake_database, tmp_path / "data",
                                tmp_path / name)).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one, args=(f"p{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    store = open_store(lake_url(postgres, lake_database, tmp_path / "data", tmp_path / "p0"))
    duplicated = store.query("SELECT component, version FROM tracemill_migrations "
                             "GROUP BY ALL HAVING count(*) > 1")
    store.close()
    assert duplicated == []


def test_a_local_folder_serves_one_writer(lake: str) -> None:
    store = open_store(lake)
    try:
        with pytest.raises(StoreLockedError, match=f"process {os.getpid()}.*local="):
            open_store(lake)
        reader = open_store(lake, read_only=True)
        assert reader.query("SELECT position FROM collector_spool_cursor") == [(0,)]
        reader.close()
    finally:
        store.close()


def test_an_unreachable_catalog_is_explained(tmp_path: Path) -> None:
    pytest.importorskip("duckdb_extension_ducklake", reason="needs the lake venv (.ci/lake)")
    url = f"ducklake:postgres:dbname=nothing host=127.0.0.1 port=1 local={tmp_path}/l"
    with pytest.raises(LakeError, match="is PostgreSQL running there"):
        open_store(url)


def test_reading_a_lake_never_made_says_how_to_make_it(lake: str) -> None:
    with pytest.raises(LakeError, match="create it with `tracemill migrate`"):
        open_store(lake, read_only=True)


def test_the_map_on_a_lake_equals_the_map_on_a_file(lake: str, tmp_path: Path) -> None:
    requests = list(scaled_stream(11, 8_000))
    file_db = tmp_path / "single.duckdb"
    store_requests(file_db, requests)
    store_requests(Path(lake), requests)
    answers = []
    for db in (str(file_db), lake):
        store = open_store(db)
        try:
            result = process(store)
            cursor = store.cursor()
            situations = [situation.model_copy(update={"computed_unix_nano": 0})
                          for situation in read_situations(cursor)]
            answers.append((result.conversations_rebuilt, read_cells(cursor), situations,
                            store.query("SELECT count(*), count(DISTINCT (trace_id, span_id)) "
                                        "FROM spans")))
            cursor.close()
        finally:
            store.close()
    on_file, on_lake = answers
    assert on_file[0] > 1000 and on_file[2], "the stream should make conversations and a map"
    assert on_lake == on_file


def test_maintenance_merges_files_and_keeps_the_rows(lake: str) -> None:
    requests = list(scaled_stream(3, 2_000))
    store_requests(Path(lake), requests)
    store = open_store(lake)
    try:
        before = store.query("SELECT count(*), sum(input_tokens) FROM spans")
        files = "SELECT count(*) FROM ducklake_list_files('lake', 'otlp_spans')"
        files_before = store.query(files)[0][0]
        done = store.maintain()
        assert done is not None
        assert store.query("SELECT count(*), sum(input_tokens) FROM spans") == before
        assert store.query(files)[0][0] < files_before
    finally:
        store.close()


def test_a_lagging_collectors_rows_are_processed(
        postgres: str, lake_database: str, tmp_path: Path) -> None:
    """Each collector numbers its own commits; the processor's watermark must still see
    rows a collector with fewer commits stores after the processor last ran."""

    def lake(name: str) -> Path:
        return lake_file(tmp_path / f"{name}.lake", postgres, lake_database, tmp_path / "data")

    for name in ("busy", "quiet"):
        open_store(lake(name)).close()  # both collectors exist before either commits
    for n in range(4):
        store_requests(lake("busy"), [trace_request([genai_span(conversation=f"busy-{n}")])
                                      .SerializeToString()])
    processor = open_store(lake("processor"))
    try:
        process(processor)
        store_requests(lake("quiet"), [trace_request([genai_span(conversation="quiet-0")])
                                       .SerializeToString()])
        process(processor)
        built = {row[0] for row in processor.query("SELECT conversation_id FROM conversations")}
    finally:
        processor.close()
    assert {"busy-0", "busy-3", "quiet-0"} <= built


def test_the_lake_views_keep_the_file_stores_columns(lake: str, tmp_path: Path) -> None:
    columns = []
    for db in (str(tmp_path / "file.duckdb"), lake):
        store = open_store(db)
        try:
            columns.append([store.query(f"SELECT column_name, column_type FROM "  # noqa: S608
                                        f"(DESCRIBE {view})") for view in ("spans", "log_records")])
        finally:
            store.close()
    assert columns[0] == columns[1]
