"""A materializer that keeps up still commits whole row groups.

Requests arrive one at a time, fewer rows than a row group each; the materializer waits
(a moment, bounded) until a whole row group is spooled, holds back the rows past it, and
lets them lead the rows spooled next. Only the last commit, once nothing more comes, may
hold a partial row group. A flush does not wait. Real spool, decoder and DuckDB file.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from collector.materializer import DecodePool, Materializer
from collector.metrics import Metrics
from collector.pipeline import spool_folder
from collector.spool import Spool, SpooledRequest
from tests.support.otlp import genai_span, kv, trace_request
from tracemill.store import Store, open_store

_SPANS = 37
_ROW_GROUP = 128
_MAX_ITEMS = 300


def _request(first: int) -> SpooledRequest:
    spans = [genai_span(f"span {n}", trace_id=(n + 1).to_bytes(16, "big"),
                        span_id=(n + 1).to_bytes(8, "big"))
             for n in range(first, first + _SPANS)]
    return SpooledRequest("traces", trace_request(spans).SerializeToString(), _SPANS,
                          time.time_ns())


@contextmanager
def _materializer(db: Path, spooled: Sequence[SpooledRequest] = ()
                  ) -> Iterator[tuple[Store, Spool, Materializer]]:
    """A store, its spool (holding ``spooled``) and a materializer cutting transactions to
    row groups of _ROW_GROUP rows, not started; decoders and spool closed afterwards."""
    store = open_store(db)
    spool = Spool(spool_folder(db))
    decoders = DecodePool(0)
    try:
        for request in spooled:
            spool.append([request])
        yield store, spool, Materializer(store, spool, Metrics(), decoders,
                                         max_commit_items=_MAX_ITEMS, row_group_rows=_ROW_GROUP)
    finally:
        decoders.shutdown()
        spool.close()


def _until_stored(materializer: Materializer, spool: Spool, seconds: float = 60) -> float:
    """Wait (no flush) until everything spooled is stored; the seconds it took."""
    started = time.monotonic()
    while materializer.position < spool.end and time.monotonic() - started < seconds:
        time.sleep(0.02)
    assert materializer.position == spool.end, materializer.failing
    return time.monotonic() - started


def test_requests_arriving_one_by_one_are_stored_in_whole_row_groups(tmp_path: Path) -> None:
    requests = 20
    with _materializer(tmp_path / "gather.duckdb") as (store, spool, materializer):
        materializer.start()
        for n in range(requests):
            spool.append([_request(n * _SPANS)])  # as the spool writer would, one by one
            time.sleep(0.02)
        _until_stored(materializer, spool)  # no flush: the last rows wait, then go in
        materializer.close(10)
    stored = [int(row[0]) for row in store.query(
        "SELECT stored_items FROM collector_commits ORDER BY committed_unix_nano")]
    assert sum(stored) == requests * _SPANS
    assert all(items % _ROW_GROUP == 0 for items in stored[:-1]), stored
    assert store.query("SELECT count(*), count(DISTINCT span_id) FROM otlp_spans") == [
        (requests * _SPANS, requests * _SPANS)]
    store.close()


def test_a_flush_does_not_wait_for_a_whole_row_group(tmp_path: Path) -> None:
    with _materializer(tmp_path / "flush.duckdb") as (store, spool, materializer):
        materializer.start()
        spool.append([_request(0)])
        started = time.monotonic()
        assert materializer.flush(30), materializer.failing
        assert time.monotonic() - started < 1.5  # well under the 2 s it may wait otherwise
        materializer.close(10)
    assert store.query("SELECT count(*) FROM otlp_spans") == [(_SPANS,)]
    store.close()


def test_gathering_keeps_the_group_byte_cap_and_does_not_wait_when_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backlog of fat requests (a restart after an outage): a group stops at its byte cap
    (here 100 kB for 512 MiB) instead of growing to a row group, and a full group is
    stored at once, not after the wait for a row group."""
    import collector.materializer as materializer_module

    monkeypatch.setattr(materializer_module, "_MAX_GROUP_BYTES", 100_000)
    requests, spans = 40, 2
    backlog = []
    for n in range(requests):  # ~40 kB each: three fill a group
        fat = [genai_span(f"span {i}", trace_id=(i + 1).to_bytes(16, "big"),
                          span_id=(i + 1).to_bytes(8, "big"))
               for i in range(n * spans, (n + 1) * spans)]
        for span in fat:
            span.attributes.append(kv("gen_ai.input.messages", "x" * 20_000))
        backlog.append(SpooledRequest("traces", trace_request(fat).SerializeToString(), spans,
                                      time.time_ns()))
    with _materializer(tmp_path / "fat.duckdb", backlog) as (store, spool, materializer):
        materializer.start()
        took = _until_stored(materializer, spool)
        materializer.close(10)
    stored = [int(row[0]) for row in store.query("SELECT stored_items FROM collector_commits")]
    assert sum(stored) == requests * spans
    assert max(stored) <= 4 * spans, stored  # the cap, plus at most the request crossing it
    # 14 full groups, none waiting the 2 s for a row group (before: one group of all 40)
    assert took < 14 * 2, took
