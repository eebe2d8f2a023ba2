"""Rebuilding in chunks, in worker processes, gives the rows one chunk in one process gives.

A store holds the synthetic production stream (tests/support/synthetic.py) stored in three
parts, with conversations whose content travels in log records (``gen_ai.user.message``,
``gen_ai.choice``) stored between the parts, and labels on some conversations (by
conversation id and by trace id). :func:`processor.run.process` runs on two copies: one
with a single chunk in this process, one with chunks of 37 conversations built by two
worker processes. Each chunk reads only the commits and start times its spans lie in,
through the collector's views, so spans, log records and labels must each reach the chunk
of their conversation; the two tables must be equal.
"""

from __future__ import annotations

import gc
import shutil
import weakref
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from collector.decode import Signal
from processor.labels import LabelRow, store_labels
from processor.rebuild import _write
from processor.run import ProcessOptions, process
from tests.support.otlp import kv
from tests.support.pipeline import store_signals
from tests.support.synthetic import SyntheticStream, production_stream
from tracemill.store import Store, open_store

LOGGED = 12
"""Conversations whose messages are log records."""


def _logged_conversation(number: int) -> tuple[bytes, bytes]:
    """A chat span without content and the log records that carry its messages."""
    trace_id = (0xA0 + number).to_bytes(16, "big")
    span_id = (0xB0 + number).to_bytes(8, "big")
    start = 1_760_000_000_000_000_000 + number * 1_000_000_000
    span = Span(trace_id=trace_id, span_id=span_id, name="chat gpt-4o",
                kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=start,
                end_time_unix_nano=start + 500_000_000)
    span.attributes.extend([kv("gen_ai.operation.name", "chat"),
                            kv("gen_ai.request.model", "gpt-4o"),
                            kv("gen_ai.conversation.id", f"logged-{number}")])
    traces = ExportTraceServiceRequest()
    resource_spans = traces.resource_spans.add()
    resource_spans.resource.attributes.append(kv("service.name", "support-bot"))
    resource_spans.scope_spans.add().spans.append(span)
    logs = ExportLogsServiceRequest()
    resource_logs = logs.resource_logs.add()
    resource_logs.resource.attributes.append(kv("service.name", "support-bot"))
    scope_logs = resource_logs.scope_logs.add()
    bodies: list[tuple[str, dict[str, object]]] = [
        ("gen_ai.user.message", {"content": f"where is order {number}?"}),
        ("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant",
                                       "content": f"order {number} ships today"}})]
    for offset, (name, body) in enumerate(bodies):
        record = scope_logs.log_records.add()
        record.time_unix_nano = start + offset
        record.event_name = name
        record.trace_id = trace_id
        record.span_id = span_id
        _put(record.body, body)
    return traces.SerializeToString(), logs.SerializeToString()


def _put(target: Any, value: object) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            pair = target.kvlist_value.values.add()
            pair.key = key
            _put(pair.value, item)
    elif isinstance(value, int):
        target.int_value = value
    else:
        target.string_value = str(value)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SyntheticStream]:
    stream = production_stream(seed=5, conversations_per_version=400)
    requests: list[tuple[Signal, bytes]] = []
    third = len(stream.requests) // 3
    for part in range(3):
        requests.extend(("traces", request)
                        for request in stream.requests[part * third:(part + 1) * third
                                                       if part < 2 else None])
        for number in range(part * LOGGED // 3, (part + 1) * LOGGED // 3):
            traces, logs = _logged_conversation(number)
            requests.extend((("traces", traces), ("logs", logs)))
    db = tmp_path_factory.mktemp("chunked") / "store.duckdb"
    store_signals(db, requests)
    store = open_store(db)
    try:
        ids = sorted(stream.expected)
        store_labels(store, [LabelRow(target, index % 2 == 0, None, "human", "tester", None)
                             for index, target in enumerate(ids[::97])], Path("labels.csv"))
        trace = store.query("SELECT trace_id FROM spans WHERE conversation_id = ? LIMIT 1",
                            [ids[500]])[0][0]
        store_labels(store, [LabelRow(trace, False, None, "program", "checker", None)],
                     Path("labels.csv"))
    finally:
        store.close()
    return db, stream


def _rows(store: Store) -> list[tuple[Any, ...]]:
    return store.query("SELECT * EXCLUDE (processed_unix_nano) FROM conversations "
                       "ORDER BY conversation_id")


def _processed(db: Path, copy: Path, **arguments: Any) -> list[tuple[Any, ...]]:
    shutil.copy(db, copy)
    store = open_store(copy)
    try:
        result = process(store, ProcessOptions(), **arguments)
        rows = _rows(store)
        assert result.conversations_rebuilt == len(rows)
        assert result.log_records_read == 2 * LOGGED
        return rows
    finally:
        store.close()


def test_chunks_in_workers_equal_one_chunk_here(stored: tuple[Path, SyntheticStream],
                                                tmp_path: Path) -> None:
    db, stream = stored
    whole = _processed(db, tmp_path / "whole.duckdb", workers=1, chunk_size=10_000)
    chunked = _processed(db, tmp_path / "chunked.duckdb", workers=2, chunk_size=37)
    assert len(whole) == stream.conversations + LOGGED
    assert chunked == whole
    by_id = {row[0]: row for row in chunked}
    for number in range(LOGGED):  # content from log records reached each chunk
        row = by_id[f"logged-{number}"]
        assert (row[4], row[7]) == (f"where is order {number}?", f"order {number} ships today")
    sources = [row[20] for row in chunked]
    assert sources.count("label:human") == len(sorted(stream.expected)[::97])
    assert sources.count("label:program") == 1


def test_a_chunk_per_conversation_in_this_process(stored: tuple[Path, SyntheticStream],
                                                  tmp_path: Path) -> None:
    db, _ = stored
    whole = _processed(db, tmp_path / "whole.duckdb", workers=1, chunk_size=10_000)
    few = tmp_path / "few.duckdb"
    shutil.copy(db, few)
    store = open_store(few)
    try:
        # the conversations of log records alone, each a chunk of its own, in this process
        # (the spans deleted leave gaps in what the collector stored)
        store.query("DELETE FROM otlp_spans "
                    "WHERE trace_id NOT IN (SELECT trace_id FROM otlp_log_records)")
        result = process(store, ProcessOptions(), workers=1, chunk_size=1)
        assert result.conversations_rebuilt == LOGGED
        rows = _rows(store)
    finally:
        store.close()
    assert rows == [row for row in whole if row[0].startswith("logged-")]


_MOVED = """
CREATE TABLE moved_spans AS SELECT * EXCLUDE (tid_hi, tid_lo, sid) FROM otlp_spans
ORDER BY hash(trace_id, 7) DESC;
CREATE TABLE moved_log_records AS SELECT * EXCLUDE (key_hi, key_lo) FROM otlp_log_records
ORDER BY hash(trace_id, 7) DESC;
DROP VIEW spans;
DROP VIEW log_records;
DROP TABLE otlp_spans;
DROP TABLE otlp_log_records;
CREATE VIEW spans AS SELECT * FROM moved_spans;
CREATE VIEW log_records AS SELECT * FROM moved_log_records;
"""
"""The collector's tables replaced by others, rows in another order, behind its views."""


def test_only_the_published_views_are_read(stored: tuple[Path, SyntheticStream],
                                           tmp_path: Path) -> None:
    """The collector may store spans and log records as it likes: here its tables are
    replaced by others, in another order, behind the same views ``spans`` and
    ``log_records``; the processor builds the same rows, in chunks and in workers."""
    db, _ = stored
    whole = _processed(db, tmp_path / "whole.duckdb", workers=1, chunk_size=10_000)
    moved = tmp_path / "moved.duckdb"
    shutil.copy(db, moved)
    store = open_store(moved)
    try:
        with store.transaction() as cursor:
            cursor.execute(_MOVED)
        result = process(store, ProcessOptions(), workers=2, chunk_size=37)
        rows = _rows(store)
    finally:
        store.close()
    assert result.log_records_read == 2 * LOGGED
    assert rows == whole


def test_written_rows_are_let_go_before_the_commit(stored: tuple[Path, SyntheticStream],
                                                   tmp_path: Path) -> None:
    """A chunk's rows, once inserted, are freed inside the transaction: a full build that
    held every chunk's Arrow table until it committed grew by all of them (~540 MB on
    1,000,000 spans)."""
    db, _ = stored
    copy = tmp_path / "held.duckdb"
    shutil.copy(db, copy)
    store = open_store(copy)
    try:
        process(store, ProcessOptions(), workers=1)
        with store.transaction() as cursor:
            rows = cursor.sql("SELECT * FROM conversations").to_arrow_table()
            cursor.execute("DELETE FROM conversations")
            assert _write(cursor, rows) == rows.num_rows
            freed = weakref.ref(rows)
            del rows
            gc.collect()
            assert freed() is None
            count = cursor.execute("SELECT count(*) FROM conversations").fetchall()
        assert count[0][0] > 0
    finally:
        store.close()
