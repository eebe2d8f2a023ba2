"""Rows into a real DuckDB store: one row per identity, the first of a batch, once."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from collector.decode import decode_traces
from collector.insert import as_json, first_of_each, insert_rows, insert_statement
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


def test_duplicates_at_the_edges_of_the_batch_tid_range_are_dropped(tmp_path: Path) -> None:
    # the anti-join reads only stored rows within the batch's tid_hi range: a re-delivered
    # span at either end of that range, among new spans beyond the stored ones, is still
    # found; spans outside every stored tid_hi go in
    def ids(high: int) -> tuple[bytes, bytes]:
        return high.to_bytes(8, "big") + b"\x00" * 7 + b"\x01", high.to_bytes(8, "big")

    top = 2**64 - 1  # tid_hi is unsigned: beyond what a signed 64-bit parameter holds
    stored = pa.concat_tables([_rows(f"stored {h}", ids=ids(h)) for h in (10, 20, 30, top)])
    retry = pa.concat_tables([_rows("again 10", ids=ids(10)), _rows("new 5", ids=ids(5)),
                              _rows("new 25", ids=ids(25)), _rows("again 30", ids=ids(30))])
    beyond = pa.concat_tables([_rows("new 40", ids=ids(40)), _rows("again 20", ids=ids(20)),
                               _rows("again top", ids=ids(top))])
    store = open_store(tmp_path / "edges.duckdb")
    cursor = store.cursor()
    statement = insert_statement("traces")
    try:
        for sequence, (batch, expected) in enumerate(((stored, 4), (retry, 2), (beyond, 1)),
                                                     start=1):
            cursor.begin()
            assert insert_rows(cursor, statement, [batch], sequence) == expected
            cursor.commit()
    finally:
        cursor.close()
    assert store.query("SELECT name FROM otlp_spans ORDER BY tid_hi") == [
        ("new 5",), ("stored 10",), ("stored 20",), ("new 25",), ("stored 30",), ("new 40",),
        (f"stored {top}",)]
    store.close()


def test_json_columns_go_in_as_json_and_read_back_the_same(tmp_path: Path) -> None:
    # the rows reach DuckDB typed as JSON (not parsed again on the way in): what is stored
    # is the decoder's text, and JSON functions read it
    batch = _rows("typed", ids=(b"\x05" * 16, b"\x06" * 8))
    statement = insert_statement("traces")
    typed = as_json(batch, statement.json_columns)
    for name in statement.json_columns:
        assert typed.schema.field(name).type.extension_name == "arrow.json", name
        assert typed[name].combine_chunks().storage.to_pylist() == batch[name].to_pylist()
    assert typed.schema.field("name").type == batch.schema.field("name").type
    assert as_json(typed, statement.json_columns).equals(typed)  # typed once only
    store = open_store(tmp_path / "json.duckdb")
    cursor = store.cursor()
    try:
        cursor.begin()
        assert insert_rows(cursor, statement, [batch], 1) == 1
        cursor.commit()
    finally:
        cursor.close()
    stored = store.query(
        "SELECT attributes::VARCHAR, typeof(attributes), "
        "json_extract_string(attributes, '$.\"gen_ai.operation.name\"') FROM otlp_spans")
    assert stored == [(batch["attributes"][0].as_py(), "JSON", "chat")]
    store.close()
