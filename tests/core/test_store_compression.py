"""The ``db_compression`` setting: a store opened as the commands open it writes its string
columns in zstd at a checkpoint (the collector's fat JSON attributes: less CPU and a
smaller file than DuckDB's dictionary+FSST), and ``auto`` leaves the choice to DuckDB."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemill.config import Settings
from tracemill.store import open_configured

_ROWS = 5_000  # a few row-group segments of strings that dictionary+FSST would take


def _string_compressions(settings: Settings) -> set[str]:
    store = open_configured(settings, store_spool=False)
    try:
        cursor = store.cursor()
        cursor.execute("CREATE TABLE notes (body VARCHAR)")
        cursor.execute(
            "INSERT INTO notes SELECT '{\"role\":\"assistant\",\"content\":\"order ' || i % 50 "
            "|| ' is ' || (CASE WHEN i % 3 = 0 THEN 'shipped' ELSE 'pending' END) || repeat("
            "' and more words about it', 20) || '\"}' FROM range(?) AS t(i)", [_ROWS])
        cursor.execute("CHECKPOINT")
        rows = cursor.execute(
            "SELECT DISTINCT compression FROM pragma_storage_info('notes') "
            "WHERE segment_type = 'VARCHAR'").fetchall()
        stored = cursor.execute("SELECT count(*), count(DISTINCT body) FROM notes").fetchone()
    finally:
        store.close()
    assert stored == (_ROWS, 100)  # what was written reads back
    return {str(row[0]).upper() for row in rows}


def test_the_default_writes_strings_in_zstd(tmp_path: Path) -> None:
    assert Settings().db_compression == "zstd"
    assert _string_compressions(Settings(db=tmp_path / "z.duckdb")) == {"ZSTD"}


def test_auto_leaves_the_choice_to_duckdb(tmp_path: Path) -> None:
    assert "ZSTD" not in _string_compressions(Settings(db=tmp_path / "a.duckdb",
                                                       db_compression="auto"))


def test_an_unknown_compression_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="zstd"):
        Settings(db_compression="lz4")  # type: ignore[arg-type]
