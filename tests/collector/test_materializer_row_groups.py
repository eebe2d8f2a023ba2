"""Transactions cut to whole row groups store every span once, and count it once.

When the store's row group is no larger than max_commit_items, the materializer inserts
only whole row groups per transaction (DuckDB then writes them compressed straight to the
file instead of to the write-ahead log, and no checkpoint rewrites them). The rows past
the last whole row group are held back: they lead the next group, and the position
committed is the start of the request they begin in, so a request can be stored across
two commits. These tests cut requests of 37 spans into row groups of 128 rows through the
real spool, decoder and DuckDB file, and check rows, metrics and ``collector_commits``.
"""

from __future__ import annotations

import time
from pathlib import Path

from collector.materializer import DecodePool, Materializer
from collector.metrics import Metrics
from collector.pipeline import spool_folder
from collector.spool import Spool, SpooledRequest
from tests.support.otlp import genai_span, trace_request
from tracemill.store import Store, open_store

_SPANS = 37
"""Spans a request: no multiple of the row group, so cuts fall inside requests."""
_ROW_GROUP = 128
_MAX_ITEMS = 300


def _request(first: int, count: int = _SPANS) -> bytes:
    spans = [genai_span(f"span {n}", trace_id=(n + 1).to_bytes(16, "big"),
                        span_id=(n + 1).to_bytes(8, "big"))
             for n in range(first, first + count)]
    return trace_request(spans).SerializeToString()


def _spool(db: Path, payloads: list[bytes]) -> None:
    spool = Spool(spool_folder(db))
    try:
        spool.append([SpooledRequest("traces", payload, _SPANS, time.time_ns())
                      for payload in payloads])
    finally:
        spool.close()


def _materialize(store: Store, db: Path, *, threaded: bool,
                 drain: float | None = None) -> tuple[Materializer, Metrics]:
    spool = Spool(spool_folder(db))
    metrics = Metrics()
    decoders = DecodePool(0)
    materializer = Materializer(store, spool, metrics, decoders, max_commit_items=_MAX_ITEMS,
                                row_group_rows=_ROW_GROUP)
    try:
        if threaded:
            start = materializer.position
            materializer.start()
            if drain is None:
                assert materializer.flush(60), materializer.failing
            else:  # stop once something is stored
                deadline = time.monotonic() + 60
                while materializer.position == start and time.monotonic() < deadline:
                    time.sleep(0.001)
            materializer.close(drain)
        else:
            materializer.store_all()
    finally:
        decoders.shutdown()
        spool.close()
    return materializer, metrics


def _counts(store: Store) -> tuple[int, int]:
    rows = store.query("SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM otlp_spans")
    return int(rows[0][0]), int(rows[0][1])


def test_transactions_hold_whole_row_groups_and_every_span_is_counted_once(
        tmp_path: Path) -> None:
    db = tmp_path / "rows.duckdb"
    requests = [_request(first) for first in range(0, 40 * _SPANS, _SPANS)]
    requests += [_request(0), _request(20 * _SPANS)]  # re-delivered
    _spool(db, requests)
    store = open_store(db)
    try:
        materializer, metrics = _materialize(store, db, threaded=True)
        unique = 40 * _SPANS
        assert _counts(store) == (unique, unique)
        assert metrics.items("traces", "stored") == unique
        assert metrics.items("traces", "duplicates") == 2 * _SPANS
        commits = store.query(
            "SELECT requests, received_items, stored_items, duplicate_items, spool_position "
            "FROM collector_commits ORDER BY spool_position, committed_unix_nano")
        assert sum(c[0] for c in commits) == len(requests)
        assert sum(c[1] for c in commits) == len(requests) * _SPANS
        assert sum(c[2] for c in commits) == unique
        # every commit but the last offered whole row groups (stored + duplicates)
        assert len(commits) >= 4
        assert all((c[2] + c[3]) % _ROW_GROUP == 0 for c in commits[:-1]), commits
        # some of them ended inside a request: its rest went with the next commit
        assert any((c[2] + c[3]) % _SPANS for c in commits[:-1]), commits
        assert materializer.position == materializer._spool.end
    finally:
        store.close()


def test_a_group_that_fails_after_rows_were_held_back_is_stored_once(tmp_path: Path) -> None:
    # an undecodable request in the group that carries held-back rows fails its insert
    # while the group before (which stored the first rows of a request) commits: the
    # group is read again from the committed position, and the rows of that request the
    # commit stored are skipped, not stored twice and not counted as duplicates
    db = tmp_path / "rows.duckdb"
    garbage = b"\x0a\xff\xff\xff\xff\x0f"
    requests = [_request(first) for first in range(0, 10 * _SPANS, _SPANS)]
    requests.insert(9, garbage)
    requests += [_request(first) for first in range(10 * _SPANS, 30 * _SPANS, _SPANS)]
    _spool(db, requests)
    store = open_store(db)
    try:
        materializer, metrics = _materialize(store, db, threaded=True)
        assert materializer.dead_letters.count == 1
        assert _counts(store) == (30 * _SPANS, 30 * _SPANS)
        assert metrics.items("traces", "duplicates") == 0
        assert store.query("SELECT sum(received_items), sum(stored_items) "
                           "FROM collector_commits") == [(30 * _SPANS, 30 * _SPANS)]
    finally:
        store.close()


def test_a_stop_with_rows_held_back_stores_them_at_the_next_start(tmp_path: Path) -> None:
    # stopped without draining, the rows held back are not stored; the committed position
    # is the start of the request they begin in, so the next start reads that request
    # again and the duplicate lookup drops its rows already stored
    db = tmp_path / "rows.duckdb"
    total = 300 * _SPANS
    _spool(db, [_request(first) for first in range(0, total, _SPANS)])
    store = open_store(db)
    try:
        _materialize(store, db, threaded=True, drain=0.0)
        stored, distinct = _counts(store)
        assert 0 < stored == distinct
        # what was stored is the spool's first spans, the last request partly
        assert store.query("SELECT max(span_id) FROM otlp_spans") == [
            (f"{stored:016x}",)]
        second, metrics = _materialize(store, db, threaded=False)
        assert _counts(store) == (total, total)
        assert metrics.items("traces", "stored") == total - stored
        assert metrics.items("traces", "duplicates") == stored % _SPANS
        assert second.position == second._spool.end
    finally:
        store.close()
