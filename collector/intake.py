"""The intake: the one path every export takes, whatever its transport.

admit (byte budget) → decode (off the event loop) → submit to the writer → await commit.
The gRPC and HTTP receivers and ``tracemill ingest`` all call :meth:`Intake.export`, so
they share limits, validation, de-duplication and metrics.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import time
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from collector.decode import DecodedBatch, Signal, decode
from collector.errors import Backpressure, InvalidRequest, WriteFailed
from collector.metrics import Metrics
from collector.writer import Writer, WriteResult

log = logging.getLogger("tracemill.collector.intake")


class DecodePool:
    """Where requests are decoded: worker processes, or one thread of this process.

    Decoding is CPU-bound Python; in worker processes it runs beside the event loop and
    the writer instead of sharing their interpreter lock. A worker that dies is replaced
    and the request it held is answered with a retryable error.
    """

    def __init__(self, processes: int) -> None:
        self._processes = processes
        self._executor = self._new_executor()

    def _new_executor(self) -> ProcessPoolExecutor | ThreadPoolExecutor:
        if self._processes == 0:
            return ThreadPoolExecutor(1, thread_name_prefix="tracemill-decode")
        # spawn, not fork: the gRPC core's threads must not be forked.
        return ProcessPoolExecutor(self._processes, mp_context=multiprocessing.get_context("spawn"))

    def warm_up(self) -> None:
        """Start the workers now rather than on the first request."""
        futures = [self._executor.submit(decode, "traces", b"", 0)
                   for _ in range(max(1, self._processes))]
        for future in futures:
            future.result()

    async def decode(self, signal: Signal, payload: bytes) -> DecodedBatch:
        """Decode one request on a worker."""
        loop = asyncio.get_running_loop()
        executor = self._executor
        try:
            return await loop.run_in_executor(executor, decode, signal, payload, time.time_ns())
        except BrokenProcessPool:
            if executor is self._executor:
                log.error("a decode worker died; starting new workers")
                self._executor = self._new_executor()
            raise WriteFailed("a decode worker died while reading this request; "
                              "retry it") from None

    def shutdown(self) -> None:
        """Stop the workers after the work given to them."""
        self._executor.shutdown(wait=True)


class Intake:
    """Admits, decodes and writes export requests."""

    def __init__(self, writer: Writer, metrics: Metrics, pool: DecodePool | None) -> None:
        self._writer = writer
        self._metrics = metrics
        self._pool = pool

    async def export(self, signal: Signal, payload: bytes, transport: str) -> WriteResult:
        """Store one request; returns after commit. Raises InvalidRequest or Backpressure."""
        self._admit(signal, payload, transport)
        try:
            if self._pool is None:
                batch = decode(signal, payload, time.time_ns())
            else:
                batch = await self._pool.decode(signal, payload)
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
            batch = decode(signal, payload, time.time_ns())
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

    def _submit(self, batch: DecodedBatch, transport: str, nbytes: int) -> Future[WriteResult]:
        self._metrics.add_items(batch.signal, "received", batch.received)
        self._metrics.add_items(batch.signal, "rejected", batch.rejected)
        future = self._writer.submit(batch, transport)
        future.add_done_callback(lambda _: self._writer.release(nbytes))
        return future
