"""The intake: the one path every export takes, whatever its transport.

admit (byte budget and spool backlog) → check (parse, ids) → spool with group fsync →
answer. The gRPC and HTTP receivers and ``tracemill ingest`` all call :class:`Intake`, so
they share limits, validation and metrics. Rows appear in the store shortly after, when
the materializer has stored the spooled request.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future

from collector.decode import RequestCheck, Signal, check_request
from collector.errors import Backpressure, InvalidRequest
from collector.metrics import Metrics
from collector.spool import SpooledRequest
from collector.writer import SpoolWriter, WriteResult


class Intake:
    """Admits, checks and spools export requests."""

    def __init__(self, writer: SpoolWriter, metrics: Metrics) -> None:
        self._writer = writer
        self._metrics = metrics

    async def export(self, signal: Signal, payload: bytes, transport: str) -> WriteResult:
        """Make one request durable; raises InvalidRequest, Backpressure or WriteFailed."""
        future = self._start(signal, payload, transport)
        # shield: a client that gives up must not cancel a write already under way.
        result = await asyncio.shield(asyncio.wrap_future(future))
        self._metrics.add_request(signal, transport, "ok")
        return result

    def export_blocking(self, signal: Signal, payload: bytes, transport: str) -> WriteResult:
        """:meth:`export` for callers without an event loop; waits out back-pressure."""
        while True:
            try:
                future = self._start(signal, payload, transport)
                break
            except Backpressure:
                time.sleep(0.05)
        result = future.result()
        self._metrics.add_request(signal, transport, "ok")
        return result

    def _start(self, signal: Signal, payload: bytes, transport: str) -> Future[WriteResult]:
        received_at = time.time_ns()
        try:
            self._writer.admit(len(payload))
        except Backpressure:
            self._metrics.add_request(signal, transport, "backpressure")
            raise
        try:
            check: RequestCheck = check_request(signal, payload)
        except BaseException as exc:
            self._writer.release(len(payload))
            outcome = "invalid" if isinstance(exc, InvalidRequest) else "error"
            self._metrics.add_request(signal, transport, outcome)
            raise
        self._metrics.add_items(signal, "received", check.received)
        self._metrics.add_items(signal, "rejected", check.rejected)
        result = WriteResult(check.received - check.rejected, check.rejected,
                             check.rejection_message())
        request = SpooledRequest(signal, payload, check.received, received_at)
        future = self._writer.submit(request, result)

        def finished(done: Future[WriteResult]) -> None:
            self._writer.release(len(payload))
            if done.exception() is None:
                self._metrics.add_items(signal, "accepted", result.accepted)

        future.add_done_callback(finished)
        return future
