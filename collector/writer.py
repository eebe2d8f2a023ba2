"""The spool writer: admits requests within a byte budget and group-commits them to the spool.

Receivers call :meth:`SpoolWriter.admit` (Backpressure when the in-memory queue or the
spool backlog is over its limit), then :meth:`SpoolWriter.submit`; the returned future
resolves once the request is fsync'd in the spool, which is when the export is
acknowledged. One thread appends everything queued at that moment with one fsync, so
concurrent requests share the cost of durability.
"""

from __future__ import annotations

import errno
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from collector.errors import Backpressure, WriteFailed
from collector.metrics import Metrics
from collector.spool import Spool, SpooledRequest

log = logging.getLogger("tracemill.collector.writer")


@dataclass(frozen=True)
class WriteResult:
    """What the collector answers for one durable request."""

    accepted: int
    """Items acknowledged (durable; a re-delivered item is stored once)."""
    rejected: int
    """Items refused for unusable content (never stored)."""
    message: str
    """Explanation for partial_success ('' when nothing was rejected)."""


@dataclass
class _Pending:
    request: SpooledRequest
    result: WriteResult
    future: Future[WriteResult]


_STOP = object()


class SpoolWriter:
    """Group-commits admitted requests to the spool from one thread."""

    def __init__(self, spool: Spool, metrics: Metrics, *, max_queue_bytes: int,
                 max_backlog_bytes: int, retry_after: int,
                 backlog: Callable[[], int]) -> None:
        self._spool = spool
        self._metrics = metrics
        self._max_queue_bytes = max_queue_bytes
        self._max_backlog_bytes = max_backlog_bytes
        self._retry_after = retry_after
        self._backlog = backlog
        self._queued_bytes = 0
        self._budget_lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Pending | object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="tracemill-spool", daemon=True)
        self._accepting = True
        self._started = False
        self._failing: str | None = None
        self._failures = 0
        metrics.queue_capacity = max_queue_bytes

    def start(self) -> None:
        """Start the commit thread."""
        self._started = True
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
        backlog = self._backlog()
        with self._budget_lock:
            if not self._accepting:
                raise Backpressure("the collector is shutting down; retry against another "
                                   "instance or after it restarts", self._retry_after)
            if self._queued_bytes and self._queued_bytes + nbytes > self._max_queue_bytes:
                raise Backpressure(
                    f"the write queue is full ({self._queued_bytes} of "
                    f"{self._max_queue_bytes} bytes waiting); retry after "
                    f"{self._retry_after}s", self._retry_after)
            if backlog > self._max_backlog_bytes:
                raise Backpressure(
                    f"{backlog} bytes of acknowledged requests are waiting to be stored "
                    f"(limit {self._max_backlog_bytes}); retry after {self._retry_after}s",
                    self._retry_after)
            self._queued_bytes += nbytes
            self._metrics.queue_bytes = self._queued_bytes

    def release(self, nbytes: int) -> None:
        """Return ``nbytes`` to the budget once a request is durable or abandoned."""
        with self._budget_lock:
            self._queued_bytes -= nbytes
            self._metrics.queue_bytes = self._queued_bytes

    def submit(self, request: SpooledRequest, result: WriteResult) -> Future[WriteResult]:
        """Queue a request; the future resolves with ``result`` once it is durable."""
        future: Future[WriteResult] = Future()
        self._queue.put(_Pending(request, result, future))
        return future

    def close(self) -> None:
        """Stop admitting, write everything queued, and stop the thread."""
        with self._budget_lock:
            self._accepting = False
        self._queue.put(_STOP)
        if self._thread.is_alive():
            self._thread.join()

    @property
    def failing(self) -> str | None:
        """The spool error while appends keep failing (None when the last one succeeded)."""
        return self._failing

    @property
    def dead(self) -> bool:
        """Whether the commit thread was started and has died (it should never)."""
        return self._started and not self._thread.is_alive() and self._accepting

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is _STOP:
                break
            assert isinstance(first, _Pending)
            group = [first]
            while True:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stopping = True
                    break
                assert isinstance(nxt, _Pending)
                group.append(nxt)
            self._write(group)

    def _write(self, group: list[_Pending]) -> None:
        started = time.perf_counter()
        try:
            self._spool.append([pending.request for pending in group])
        except Exception as exc:  # this thread must outlive any one error
            self._failed(group, exc)
            return
        if self._failing is not None:
            log.warning("spool writes succeed again", extra={"fields": {
                "failed_groups": self._failures, "error": self._failing}})
            self._failing = None
            self._failures = 0
        self._metrics.observe_commit(time.perf_counter() - started)
        for pending in group:
            pending.future.set_result(pending.result)

    def _failed(self, group: list[_Pending], exc: Exception) -> None:
        if isinstance(exc, OSError):
            cause = exc.strerror or str(exc)
            if exc.errno == errno.ENOSPC:
                cause = f"the disk holding {self._spool.folder} is full ({cause})"
        else:
            cause = f"{type(exc).__name__}: {exc}"
        if self._failing is None:
            # logged once per episode: the first error is the one that explains the rest
            log.error("spool write failed; answering UNAVAILABLE until it succeeds again",
                      exc_info=not isinstance(exc, OSError),
                      extra={"fields": {"error": cause, "folder": str(self._spool.folder)}})
            self._failing = cause
        self._failures += 1
        for pending in group:
            pending.future.set_exception(WriteFailed(
                f"the collector could not write its spool: {cause}; nothing of this "
                f"request was kept, retry after {self._retry_after}s", self._retry_after))
