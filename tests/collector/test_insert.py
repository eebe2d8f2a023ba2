"""Rows into a real DuckDB store: one row per identity, the first of a batch, once."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from collector.decode import decode_traces
from collector.insert import first_of_each, insert_rows, insert_statement
from tests.support.otlp import genai_span, trace_request
from tracemill.store import open_store


def _rows(*names: str, ids: tuple[bytes, bytes]) -> pa.Table:
    spans = [genai_span(name, trace_id=ids[0], span_id=ids[1]) for name in names]
    return decode_traces(trace_request(spans).SerializeToString(), 1).rows


def test_the_first_row_of_an_identity_is_kept_and_stored_once(tmp_path: Path) -> None:
    same = (b"\x01" * 16, b"\x02" * 8)
    other = (b"\x03" * 16, b"\x04" * 8)
    batch = pa.concat_tables([_rows("first", "second", ids=same), _rows("third", ids=other),
                              _rows("fourth", ids=same)])
    assert first_of_each(batch, insert_statement("traces").identity)["name"].to_pylist() == [
        "first", "third"]
    store = open_store(tmp_path / "insert.duckdb")
    cursor = store.cursor()
    statement = insert_statement("traces")
    try:
        for sequence, expected in ((1, 2), (2, 0)):  # the second commit is a retry
            cursor.begin()
            assert insert_rows(cursor, statement, [batch], sequence) == expected
            cursor.commit()
    finally:
        cursor.close()
    assert store.query("SELECT name, ingest_seq FROM otlp_spans ORDER BY name") == [
        ("first", 1), ("third", 1)]
    store.close()
