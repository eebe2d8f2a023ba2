"""The ``db_row_group_size`` setting: a DuckDB file is attached with that many rows per row
group, so a transaction that fills whole row groups goes compressed straight to the file
and leaves the write-ahead log nearly empty (nothing for a checkpoint to write again); 0
opens the file as DuckDB does by default. Either way the store opens, locks and reads
the same."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from tracemill.config import Settings
from tracemill.store import open_configured

_ROWS = 4 * 16_384  # four whole row groups of the default setting, half of DuckDB's own


def _write_one_transaction(settings: Settings) -> tuple[int, list[int]]:
    """(bytes in the write-ahead log after one committed transaction of _ROWS rows,
    rows per row group of the table once checkpointed)."""
    store = open_configured(settings, store_spool=False)
    try:
        with store.transaction(schema=True) as cursor:
            cursor.execute("CREATE TABLE notes (id BIGINT, body VARCHAR)")
        with store.transaction() as cursor:
            cursor.execute(
                "INSERT INTO notes SELECT i, 'a note about order ' || i || repeat(' and more', "
                "12) FROM range(?) AS t(i)", [_ROWS])
        wal = Path(f"{settings.db}.wal")
        logged = wal.stat().st_size if wal.exists() else 0
        store.checkpoint()
        groups = [count for (count,) in store.query(
            "SELECT max(count) FROM pragma_storage_info('notes') WHERE column_name = 'id' "
            "GROUP BY row_group_id ORDER BY row_group_id")]
        assert store.query("SELECT count(*), sum(id) FROM notes") == [
            (_ROWS, _ROWS * (_ROWS - 1) // 2)]
    finally:
        store.close()
    return logged, groups


def test_whole_row_groups_go_to_the_file_not_the_log(tmp_path: Path) -> None:
    assert Settings().db_row_group_size == 16_384
    logged, groups = _write_one_transaction(Settings(db=tmp_path / "rg.duckdb"))
    plain_logged, plain_groups = _write_one_transaction(
        Settings(db=tmp_path / "plain.duckdb", db_row_group_size=0))
    assert groups == [16_384] * 4
    assert plain_groups == [_ROWS]  # one partial row group of DuckDB's 122,880
    # the rows themselves went to the log only without the setting
    assert plain_logged > 2_000_000, plain_logged
    assert logged < plain_logged / 20, (logged, plain_logged)


def test_an_attached_file_opens_read_only_and_with_quotes_in_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "it's here"
    folder.mkdir()
    settings = Settings(db=folder / "s.duckdb")
    open_configured(settings, store_spool=False).close()
    store = open_configured(settings, store_spool=False, read_only=True)
    try:
        assert store.query("SELECT count(*) > 0 FROM tracemill_migrations") == [(True,)]
        cursor = store.cursor()  # each cursor works in the file, not in memory
        assert cursor.execute("SELECT count(*) > 0 FROM tracemill_migrations").fetchall() \
            == [(True,)]
        with pytest.raises(duckdb.Error, match=r"read-only|read only"):
            cursor.execute("CREATE TABLE written (i INTEGER)")
        cursor.close()
    finally:
        store.close()


def test_a_second_process_is_told_who_holds_the_file(tmp_path: Path) -> None:
    db = tmp_path / "held.duckdb"
    store = open_configured(Settings(db=db), store_spool=False)
    try:
        opener = textwrap.dedent(f"""
            from tracemill.config import Settings
            from tracemill.errors import StoreLockedError
            from tracemill.store import open_configured
            try:
                open_configured(Settings(db={str(db)!r}), store_spool=False)
            except StoreLockedError as locked:
                print(locked.pid)
        """)
        done = subprocess.run([sys.executable, "-c", opener], capture_output=True, text=True,
                              timeout=120, check=True)
    finally:
        store.close()
    assert done.stdout.strip() == str(os.getpid()), done.stderr


@pytest.mark.parametrize("size", [1_000, 3_000])
def test_a_row_group_size_duckdb_refuses_is_named_before_opening(size: int) -> None:
    with pytest.raises(ValueError, match="multiple of 2,048"):
        Settings(db_row_group_size=size)
