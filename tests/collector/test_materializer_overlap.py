"""Group N commits while group N+1 is inserted, and nothing is stored twice or lost.

The materializer commits one group on a second thread while it inserts the next
(collector/materializer.py). The next group's anti-join cannot see the rows of the one
still committing, so a request re-delivered across the two groups must be dropped from
the committing group's identities kept in memory; these tests put such re-deliveries on
both sides of group boundaries, through the real spool, decoder and DuckDB file.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import pytest

from collector.metrics import Metrics
from collector.pipeline import Pipeline, spool_folder
from collector.spool import Spool, SpooledRequest
from tests.support.otlp import genai_span, trace_request
from tracemill.config import Settings
from tracemill.store import Store, open_store

_SPANS = 50
"""Spans a request; max_commit_items is two requests, so a group is two requests."""


def _request(*ranges: range) -> bytes:
    spans = [genai_span(f"span {n}", trace_id=(n + 1).to_bytes(16, "big"),
                        span_id=(n + 1).to_bytes(8, "big"))
             for numbers in ranges for n in numbers]
    return trace_request(spans).SerializeToString()


def _spans(first: int, count: int = _SPANS) -> range:
    return range(first, first + count)


def _store_with_thread(tmp_path: Path, requests: list[bytes]) -> tuple[Store, Pipeline]:
    """Spool every request first, then let the materializer thread store them all (so
    it always has a next group to insert while one commits)."""
    settings = Settings(db=tmp_path / "overlap.duckdb", decode_workers=0,
                        max_commit_items=2 * _SPANS)
    store = open_store(settings.db)
    pipeline = Pipeline(settings, store, Metrics())
    pipeline.writer.start()
    for payload in requests:
        pipeline.intake.export_blocking("traces", payload, "file")
    pipeline.writer.close()
    pipeline.decoders.warm_up()
    pipeline.materializer.start()
    assert pipeline.materializer.flush(60)
    pipeline.materializer.close(None)
    pipeline.decoders.shutdown()
    pipeline.spool.close()
    return store, pipeline


def test_a_group_that_fails_while_the_one_before_commits_is_stored_again_once(
        tmp_path: Path) -> None:
    # an undecodable request (moved to the dead letters) fails the insert of the group it
    # is in while the group before commits: that commit stands, the failed group is
    # rolled back and stored again without it, re-deliveries still dropped once
    garbage = b"\x0a\xff\xff\xff\xff\x0f"  # not an ExportTraceServiceRequest
    spool = Spool(spool_folder(tmp_path / "overlap.duckdb"))
    spool.append([SpooledRequest("traces", payload, _SPANS, time.time_ns()) for payload in (
        _request(_spans(0)), _request(_spans(50)),   # group 1
        _request(_spans(0)), garbage,                 # group 2: fails, then again without it
        _request(_spans(100)), _request(_spans(50)),  # group 3
        _request(_spans(150)))])                      # group 4
    spool.close()
    store, pipeline = _store_with_thread(tmp_path, [])
    try:
        assert store.query(
            "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM otlp_spans") == [
            (200, 200)]
        assert pipeline.materializer.dead_letters.count == 1
        assert pipeline.metrics.items("traces", "duplicates") == 100
        assert pipeline.materializer.overlapped_commits >= 1
    finally:
        store.close()


def test_a_request_delivered_again_in_the_next_group_is_stored_once(tmp_path: Path) -> None:
    # groups of two requests (100 spans): [0-49, 50-99] [0-49 again, 100-149]
    # [25-74 again with 275-299 new, 150-174] [175-224, 100-149 again] [225-274]
    requests = [_request(_spans(0)), _request(_spans(50)), _request(_spans(0)),
                _request(_spans(100)), _request(_spans(25), _spans(275, 25)),
                _request(_spans(150, 25)), _request(_spans(175)), _request(_spans(100)),
                _request(_spans(225))]
    offered = 7 * _SPANS + 75 + 25
    store, pipeline = _store_with_thread(tmp_path, requests)
    try:
        stored, distinct = store.query(
            "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM otlp_spans")[0]
        assert stored == distinct == 300
        metrics = pipeline.metrics
        assert metrics.items("traces", "stored") == 300
        assert metrics.items("traces", "duplicates") == offered - 300
        assert store.query("SELECT sum(stored_items), sum(duplicate_items) "
                           "FROM collector_commits") == [(300, offered - 300)]
        # the overlap happened: otherwise this test would not cover it
        assert pipeline.materializer.overlapped_commits >= 2
        # commit numbers only grow and the cursor holds the last one
        commits = store.query("SELECT count(*) FROM collector_commits")[0][0]
        assert store.query("SELECT position, commits FROM collector_spool_cursor "
                           "ORDER BY commits DESC LIMIT 1") == [
            (pipeline.spool.end, commits)]
        assert store.query("SELECT max(ingest_seq) FROM otlp_spans") == [(commits,)]
    finally:
        store.close()


def test_every_group_re_delivered_in_the_next_is_stored_once(tmp_path: Path) -> None:
    # each request is sent twice in a row: with groups of two requests, one group holds
    # a request and its retry, the next the retry of the one before, and so on
    requests = [body for first in range(0, 1000, _SPANS) for body in (_request(_spans(first)),) * 3]
    store, pipeline = _store_with_thread(tmp_path, requests)
    try:
        assert store.query(
            "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM otlp_spans") == [
            (1000, 1000)]
        assert pipeline.metrics.items("traces", "duplicates") == 2000
        assert pipeline.materializer.overlapped_commits >= 10
    finally:
        store.close()


def test_cursor_rows_are_pruned_and_an_old_single_row_cursor_still_reads(
        tmp_path: Path) -> None:
    requests = [_request(_spans(first)) for first in range(0, 150 * _SPANS, _SPANS)]
    store, _ = _store_with_thread(tmp_path, requests)
    try:
        commits = store.query("SELECT count(*) FROM collector_commits")[0][0]
        assert commits >= 70  # past one prune (every 64 commits)
        rows = store.query("SELECT count(*) FROM collector_spool_cursor")[0][0]
        assert rows < 64
        assert store.query("SELECT count(*) FROM otlp_spans") == [(150 * _SPANS,)]
    finally:
        store.close()
    # a store written before the cursor was append-only holds exactly one row, updated
    # in place; the collector reads it and appends after it
    old = duckdb.connect(str(tmp_path / "overlap.duckdb"))
    ((position,),) = old.execute("SELECT max(position) FROM collector_spool_cursor").fetchall()
    old.execute("DELETE FROM collector_spool_cursor")
    old.execute("INSERT INTO collector_spool_cursor VALUES (?, 500)", [position])
    old.close()
    again, _ = _store_with_thread(tmp_path, [_request(_spans(10_000))])
    try:
        assert again.query("SELECT count(*) FROM otlp_spans") == [(150 * _SPANS + _SPANS,)]
        assert again.query("SELECT max(ingest_seq) FROM otlp_spans") == [(501,)]
    finally:
        again.close()


def test_a_spool_segment_that_cannot_be_deleted_does_not_stop_storing(
        tmp_path: Path) -> None:
    # Deleting a stored segment fails once (EACCES, EROFS: the one seam replaced here),
    # right after a commit that had the next group's transaction open beside it: the
    # rows are stored, so storing must go on, and the open transaction must not be left
    # behind on its cursor (every later group would fail "transaction is aborted").
    settings = Settings(db=tmp_path / "overlap.duckdb", decode_workers=0,
                        max_commit_items=2 * _SPANS)
    store = open_store(settings.db)
    pipeline = Pipeline(settings, store, Metrics())
    release = pipeline.spool.release_before
    calls = 0

    def release_failing_once(position: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise PermissionError(13, "Permission denied", "00000000000000000000.seg")
        release(position)

    pipeline.spool.release_before = release_failing_once  # type: ignore[method-assign]
    pipeline.writer.start()
    for first in range(0, 2000, _SPANS):
        pipeline.intake.export_blocking("traces", _request(_spans(first)), "file")
    pipeline.writer.close()
    pipeline.materializer.start()
    try:
        assert pipeline.materializer.flush(60), pipeline.materializer.failing
        assert pipeline.materializer.overlapped_commits >= 1
        assert calls > 2
    finally:
        pipeline.materializer.close(5)
        pipeline.decoders.shutdown()
        pipeline.spool.close()
    assert store.query(
        "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM otlp_spans") == [
        (2000, 2000)]


class _CommitFailingOnce:
    """A DuckDB cursor whose first COMMIT on the commit thread fails like a full disk
    (the one seam replaced: DuckDB's own commit; everything else is the real cursor)."""

    failed = False

    def __init__(self, cursor: duckdb.DuckDBPyConnection) -> None:
        self._cursor = cursor

    def __getattr__(self, name: str) -> object:
        return getattr(self._cursor, name)

    def commit(self) -> object:
        if not _CommitFailingOnce.failed and \
                threading.current_thread().name.startswith("tracemill-commit"):
            _CommitFailingOnce.failed = True
            self._cursor.rollback()
            raise duckdb.IOException("could not write to file: No space left on device")
        return self._cursor.commit()


def test_a_commit_that_fails_while_the_next_group_is_open_stores_both_again_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # group N's COMMIT fails on the commit thread while N+1 is inserted beside it: N+1
    # relied on N's rows (its duplicate check skipped N's keys), so both are rolled back
    # and stored again from the committed position, nothing lost and nothing twice
    _CommitFailingOnce.failed = False
    settings = Settings(db=tmp_path / "overlap.duckdb", decode_workers=0,
                        max_commit_items=2 * _SPANS)
    store = open_store(settings.db)
    real_cursor = store.cursor
    monkeypatch.setattr(store, "cursor", lambda: _CommitFailingOnce(real_cursor()))
    pipeline = Pipeline(settings, store, Metrics())
    pipeline.writer.start()
    requests = [_request(_spans(first)) for first in range(0, 1000, _SPANS)]
    requests += [_request(_spans(0)), _request(_spans(500))]  # re-delivered
    for payload in requests:
        pipeline.intake.export_blocking("traces", payload, "file")
    pipeline.writer.close()
    pipeline.materializer.start()
    try:
        assert pipeline.materializer.flush(60), pipeline.materializer.failing
    finally:
        pipeline.materializer.close(5)
        pipeline.decoders.shutdown()
        pipeline.spool.close()
    monkeypatch.undo()
    assert _CommitFailingOnce.failed
    assert pipeline.materializer.overlapped_commits >= 1
    assert store.query(
        "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM otlp_spans") == [
        (1000, 1000)]
    assert pipeline.metrics.items("traces", "stored") == 1000
    assert pipeline.metrics.items("traces", "duplicates") == 2 * _SPANS
