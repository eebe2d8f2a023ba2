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


def test_a_second_open_does_not_store_the_spool_beside_its_collector(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A command-style open (open_configured stores the spool's backlog first) in a process
    whose collector holds the spool: two writers on one spool could store a record twice,
    so it says what the store lacks instead."""
    from collector.pipeline import spool_folder
    from collector.spool import Spool, SpooledRequest, SpoolInUse
    from tests.support.otlp import genai_span, trace_request
    from tracemill.config import Settings
    from tracemill.store import open_configured

    path = tmp_path / "store.duckdb"
    collector_store = open_store(path, row_group_size=16384)
    spool = Spool(spool_folder(path))  # the collector's
    try:
        spool.append([SpooledRequest("traces", trace_request([genai_span("a")])
                                     .SerializeToString(), 1, 1)])
        with pytest.raises(SpoolInUse, match="already open in this process"):
            Spool(spool_folder(path))
        reader = open_configured(Settings(db=path), read_only=True)
        reader.close()
        said = capsys.readouterr().err
        assert "storing them failed" in said and "already open in this process" in said, said
        assert collector_store.query("SELECT count(*) FROM otlp_spans") == [(0,)]
    finally:
        spool.close()
        collector_store.close()
    Spool(spool_folder(path)).close()  # closed: free again
