"""The intake: the one path every export takes, whatever its transport.

admit (byte budget) → decode (off the event loop) → submit to the writer → await commit.
The gRPC and HTTP receivers and ``tracemill ingest`` all call :meth:`Intake.export`, so
they share limits, validation, de-duplication and metrics.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Executor, Future

from collector.decode import DecodedBatch, Signal, decode
from collector.errors import Backpressure, InvalidRequest
from collector.metrics import Metrics
from collector.writer import WriteResult, Writer


class Intake:
    """Admits, decodes and writes export requests."""

    def __init__(self, writer: Writer, metrics: Metrics, executor: Executor | None) -> None:
        self._writer = writer
        self._metrics = metrics
        self._executor = executor

    async def export(self, signal: Signal, payload: bytes, transport: str) -> WriteResult:
        """Store one request; returns after commit. Raises InvalidRequest or Backpressure."""
        self._admit(signal, payload, transport)
        try:
            if self._executor is None:
                batch = self._decode(signal, payload)
            else:
                loop = asyncio.get_running_loop()
                batch = await loop.run_in_executor(self._executor, self._decode, signal, payload)
        except BaseException as exc:
            self._abandon(signal, payload, transport, exc)
            raise
        future = self._submit(batch, transport, len(payload))
        # shield: a client that gives up must not cancel a commit already under way.
        result = await asyncio.shield(asyncio.wrap_future(future))
        self._metrics.add_request(signal, transport, "ok")
        return result

    def export_blocking(self, signal: Signal, payload: bytes, transport: str) -> WriteResult:
        """:meth:`export` for callers without an event loop; waits out back-pressure."""
        while True:
            try:
                self._admit(signal, payload, transport)
                break
            except Backpressure:
                time.sleep(0.05)
        try:
            batch = self._decode(signal, payload)
        except BaseException as exc:
            self._abandon(signal, payload, transport, exc)
            raise
        result = self._submit(batch, transport, len(payload)).result()
        self._metrics.add_request(signal, transport, "ok")
        return result

    def _admit(self, signal: Signal, payload: bytes, transport: str) -> None:
        try:
            self._writer.admit(len(payload))
        except Backpressure:
            self._metrics.add_request(signal, transport, "backpressure")
            raise

    def _abandon(self, signal: Signal, payload: bytes, transport: str,
                 exc: BaseException) -> None:
        self._writer.release(len(payload))
        outcome = "invalid" if isinstance(exc, InvalidRequest) else "error"
        self._metrics.add_request(signal, transport, outcome)

    def _decode(self, signal: Signal, payload: bytes) -> DecodedBatch:
        batch = decode(signal, payload, time.time_ns())
        self._metrics.add_items(signal, "received", batch.received)
        self._metrics.add_items(signal, "rejected", batch.rejected)
        return batch

    def _submit(self, batch: DecodedBatch, transport: str, nbytes: int) -> Future[WriteResult]:
        future = self._writer.submit(batch, transport)
        future.add_done_callback(lambda _: self._writer.release(nbytes))
        return future
