"""The writer: admits requests within a byte budget and group-commits their rows.

Receivers call :meth:`Writer.admit` before decoding (refusing with Backpressure when the
budget is spent), then :meth:`Writer.submit` with the decoded batch; the returned future
resolves only after the rows are committed, so an acknowledged export is durable. One
thread owns the DuckDB cursor and commits everything queued at that moment in one
transaction, so concurrent requests share one commit.

Duplicates are dropped by the primary keys of otlp_spans and otlp_log_records
(INSERT OR IGNORE); the difference between rows offered and rows inserted is reported
as duplicates.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

import duckdb

from collector.decode import DecodedBatch
from collector.errors import Backpressure, WriteFailed
from collector.metrics import Metrics
from tracemill.store import Store, load_sql

log = logging.getLogger("tracemill.collector.writer")

_TABLES = {"traces": "otlp_spans", "logs": "otlp_log_records"}


@dataclass(frozen=True)
class WriteResult:
    """What became of one request's items once committed."""

    accepted: int
    """Items newly stored."""
    rejected: int
    """Items refused for unusable content (never stored)."""
    duplicates: int
    """Valid items that were already stored (a retried export), not stored again."""
    message: str
    """Explanation for partial_success ('' when nothing was rejected)."""


@dataclass
class _Pending:
    batch: DecodedBatch
    transport: str
    future: Future[WriteResult]


_STOP = object()


class Writer:
    """Group-commits decoded batches to the store from one thread."""

    def __init__(self, store: Store, metrics: Metrics, *, max_queue_bytes: int,
                 max_commit_items: int, retry_after: int) -> None:
        self._store = store
        self._metrics = metrics
        self._max_queue_bytes = max_queue_bytes
        self._max_commit_items = max_commit_items
        self._retry_after = retry_after
        self._queued_bytes = 0
        self._budget_lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Pending | object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="tracemill-writer", daemon=True)
        self._accepting = True
        self._insert_request_sql = load_sql("collector", "insert_request.sql")
        metrics.queue_capacity = max_queue_bytes

    def start(self) -> None:
        """Start the commit thread."""
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the commit thread is alive and accepting work."""
        return self._accepting and self._thread.is_alive()

    def admit(self, nbytes: int) -> None:
        """Reserve ``nbytes`` of the queue budget, or raise Backpressure.

        A request larger than the whole budget is admitted when the queue is empty, so
        that any request within the message size limit can eventually be written.
        """
        with self._budget_lock:
            if not self._accepting:
                raise Backpressure("the collector is shutting down; retry against another "
                                   "instance or after it restarts", self._retry_after)
            if self._queued_bytes and self._queued_bytes + nbytes > self._max_queue_bytes:
                raise Backpressure(
                    f"the write queue is full ({self._queued_bytes} of "
                    f"{self._max_queue_bytes} bytes waiting); retry after "
                    f"{self._retry_after}s",
                    self._retry_after,
                )
            self._queued_bytes += nbytes
            self._metrics.queue_bytes = self._queued_bytes

    def release(self, nbytes: int) -> None:
        """Return ``nbytes`` to the budget once a request is committed or abandoned."""
        with self._budget_lock:
            self._queued_bytes -= nbytes
            self._metrics.queue_bytes = self._queued_bytes

    def submit(self, batch: DecodedBatch, transport: str) -> Future[WriteResult]:
        """Queue a decoded batch; the future resolves after its rows are committed."""
        future: Future[WriteResult] = Future()
        self._queue.put(_Pending(batch, transport, future))
        return future

    def close(self) -> None:
        """Stop admitting, commit everything queued, and stop the thread."""
        with self._budget_lock:
            self._accepting = False
        self._queue.put(_STOP)
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        cursor = self._store.cursor()
        try:
            stopping = False
            while not stopping:
                first = self._queue.get()
                if first is _STOP:
                    break
                assert isinstance(first, _Pending)
                group = [first]
                items = first.batch.rows.num_rows
                while items < self._max_commit_items:
                    try:
                        nxt = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is _STOP:
                        stopping = True
                        break
                    assert isinstance(nxt, _Pending)
                    group.append(nxt)
                    items += nxt.batch.rows.num_rows
                self._commit_group(cursor, group)
        finally:
            cursor.close()

    def _commit_group(self, cursor: duckdb.DuckDBPyConnection, group: list[_Pending]) -> None:
        started = time.perf_counter()
        try:
            results = self._commit(cursor, group)
        except duckdb.Error as exc:
            if len(group) > 1:
                # One bad batch must not fail the others: commit them one by one.
                for pending in group:
                    self._commit_group(cursor, [pending])
                return
            log.error("commit failed", extra={"fields": {"error": str(exc)}})
            group[0].future.set_exception(
                WriteFailed(f"the store could not commit this request ({exc}); retry later")
            )
            return
        self._metrics.observe_commit(time.perf_counter() - started)
        for pending, result in zip(group, results, strict=True):
            signal = pending.batch.signal
            self._metrics.add_items(signal, "accepted", result.accepted)
            self._metrics.add_items(signal, "duplicates", result.duplicates)
            pending.future.set_result(result)

    def _commit(self, cursor: duckdb.DuckDBPyConnection,
                group: list[_Pending]) -> list[WriteResult]:
        results = []
        cursor.begin()
        try:
            committed_at = time.time_ns()
            for pending in group:
                batch = pending.batch
                offered = batch.rows.num_rows
                inserted = 0
                if offered:
                    cursor.register("incoming_rows", batch.rows)
                    try:
                        row = cursor.execute(
                            f"INSERT OR IGNORE INTO {_TABLES[batch.signal]} "  # noqa: S608 - fixed table names
                            "SELECT * FROM incoming_rows"
                        ).fetchone()
                    finally:
                        cursor.unregister("incoming_rows")
                    inserted = int(row[0]) if row else 0
                result = WriteResult(inserted, batch.rejected, offered - inserted,
                                     batch.rejection_message())
                cursor.execute(self._insert_request_sql, [
                    batch.received_unix_nano or committed_at, committed_at, batch.signal,
                    pending.transport, batch.payload_bytes,
                    batch.received, result.accepted, result.rejected, result.duplicates,
                ])
                results.append(result)
            cursor.commit()
        except BaseException:
            cursor.rollback()
            raise
        return results
