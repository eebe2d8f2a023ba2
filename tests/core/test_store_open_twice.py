"""Opening one DuckDB file twice in one process shares it (DuckDB attaches a file once per
process); the file closes with the last of its stores."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tracemill.errors import StoreError
from tracemill.store import open_store


@pytest.mark.parametrize("row_group_size", [0, 16384])
def test_a_second_open_shares_the_file_until_the_last_close(
        tmp_path: Path, row_group_size: int) -> None:
    path = tmp_path / "store.duckdb"
    first = open_store(path, row_group_size=row_group_size)
    second = open_store(path, row_group_size=row_group_size)
    reader = open_store(path, read_only=True, row_group_size=row_group_size)
    with first.transaction() as cursor:
        cursor.execute("CREATE TABLE shared_probe (n INTEGER)")
        cursor.execute("INSERT INTO shared_probe VALUES (1), (2)")
    assert second.query("SELECT sum(n) FROM shared_probe") == [(3,)]
    first.close()
    first.close()  # a second close does not release the file twice
    assert reader.query("SELECT count(*) FROM shared_probe") == [(2,)]
    with second.transaction() as cursor:
        cursor.execute("INSERT INTO shared_probe VALUES (3)")
    second.close()
    assert reader.query("SELECT count(*) FROM shared_probe") == [(3,)]
    cursor = reader.cursor()
    reader.close()
    with pytest.raises(duckdb.Error):  # the last close closed the file
        cursor.execute("SELECT 1")
    # closed: another process (here: a plain DuckDB connection) may take the file
    plain = duckdb.connect(str(path))
    assert plain.execute("SELECT count(*) FROM shared_probe").fetchall() == [(3,)]
    plain.close()


def test_a_read_only_open_is_not_upgraded_to_writing(tmp_path: Path) -> None:
    path = tmp_path / "store.duckdb"
    open_store(path).close()
    reader = open_store(path, read_only=True)
    with pytest.raises(StoreError, match=r"already has the store .* open read-only"):
        open_store(path)
    reader.close()
    writer = open_store(path)  # free again once the reader closed
    writer.close()
