"""The intake: the one path every export takes, whatever its transport.

admit (byte budget and spool backlog) → check (parse, ids) → spool with group fsync →
answer. The gRPC and HTTP receivers and ``tracemill ingest`` all call :class:`Intake`, so
they share limits, validation, metrics and the log lines of refused requests (counts,
peer and reason; never payloads, span names or tokens). Rows appear in the store shortly after, when
the materializer has stored the spooled request.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from concurrent.futures import Future

from collector.checks import (
    NOTHING_REFUSED,
    RequestCheck,
    Signal,
    check_request,
    without_refused,
)
from collector.errors import Backpressure, InvalidRequest, WriteFailed
from collector.metrics import Metrics
from collector.spool import SpooledRequest
from collector.writer import SpoolWriter, WriteResult

log = logging.getLogger("tracemill.collector.intake")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


class Intake:
    """Admits, checks and spools export requests."""

    def __init__(self, writer: SpoolWriter, metrics: Metrics) -> None:
        self._writer = writer
        self._metrics = metrics

    async def export(self, signal: Signal, payload: bytes, transport: str, *,
                     peer: str = "", refused: RequestCheck = NOTHING_REFUSED) -> WriteResult:
        """Make one request durable; raises InvalidRequest, Backpressure or WriteFailed.

        ``peer`` names the client in logs; ``refused`` counts items the transport left out
        before encoding ``payload`` (OTLP/JSON fields protobuf cannot take).
        """
        future = self._start(signal, payload, transport, peer, refused)
        # shield: a client that gives up must not cancel a write already under way.
        try:
            result = await asyncio.shield(asyncio.wrap_future(future))
        except WriteFailed:
            self._metrics.add_request(signal, transport, "unavailable")
            raise
        self._finished(signal, transport, peer, result)
        return result

    def export_blocking(self, signal: Signal, payload: bytes, transport: str, *,
                        peer: str = "", refused: RequestCheck = NOTHING_REFUSED) -> WriteResult:
        """:meth:`export` for callers without an event loop; waits out back-pressure."""
        while True:
            try:
                future = self._start(signal, payload, transport, peer, refused)
                break
            except Backpressure:
                time.sleep(0.05)
        try:
            result = future.result()
        except WriteFailed:
            self._metrics.add_request(signal, transport, "unavailable")
            raise
        self._finished(signal, transport, peer, result)
        return result

    def refuse_unauthenticated(self, signal: Signal, transport: str, peer: str,
                               token_given: bool) -> None:
        """Count and log a request refused for its token (never logging the token)."""
        self._metrics.add_request(signal, transport, "unauthenticated")
        log.warning("export refused: missing or wrong bearer token", extra={"fields": {
            "signal": signal, "transport": transport, "peer": peer,
            "reason": "wrong token" if token_given else "no token"}})

    def refuse(self, signal: Signal, transport: str, peer: str, outcome: str,
               reason: str) -> None:
        """Count and log a request refused for what it is (malformed, too large, ...)."""
        self._metrics.add_request(signal, transport, outcome)
        log.warning("export refused", extra={"fields": {
            "signal": signal, "transport": transport, "peer": peer, "outcome": outcome,
            "reason": _reason(reason)}})

    def _finished(self, signal: Signal, transport: str, peer: str, result: WriteResult) -> None:
        if not result.rejected:
            self._metrics.add_request(signal, transport, "ok")
            return
        self._metrics.add_request(signal, transport, "partly_rejected")
        log.warning("export partly rejected", extra={"fields": {
            "signal": signal, "transport": transport, "peer": peer,
            "accepted": result.accepted, "rejected": result.rejected,
            "reason": _reason(result.message)}})

    def _start(self, signal: Signal, payload: bytes, transport: str, peer: str,
               refused: RequestCheck) -> Future[WriteResult]:
        received_at = time.time_ns()
        if not refused.received:  # the client's own bytes: a count there is not ours
            payload = without_refused(payload)
        try:
            self._writer.admit(len(payload))
        except Backpressure:
            self._metrics.add_request(signal, transport, "backpressure")
            raise
        try:
            check: RequestCheck = refused.plus(check_request(signal, payload))
        except BaseException as exc:
            self._writer.release(len(payload))
            self.refuse(signal, transport, peer,
                        "invalid" if isinstance(exc, InvalidRequest) else "error", str(exc))
            raise
        self._metrics.add_items(signal, "received", check.received)
        self._metrics.add_items(signal, "rejected", check.rejected)
        result = WriteResult(check.received - check.rejected, check.rejected,
                             check.rejection_message())
        request = SpooledRequest(signal, payload, check.received - refused.received,
                                 received_at)
        future = self._writer.submit(request, result)

        def finished(done: Future[WriteResult]) -> None:
            self._writer.release(len(payload))
            if done.exception() is None:
                self._metrics.add_items(signal, "accepted", result.accepted)

        future.add_done_callback(finished)
        return future


def _reason(message: str) -> str:
    """The first reason of a refusal, without the span name it quotes (that is content)."""
    first = message.split("; ")[0]
    return _QUOTED.sub("'…'", first)[:300]
