"""A load generator that remembers what was acknowledged: OTLP/gRPC exports to a collector
that may be killed and restarted, retried the way an exporter retries.

Each request carries ``spans_per_request`` GenAI spans with fresh ids; a request counts as
acknowledged only when the collector answered OK. A failed request (the collector was
killed, or says UNAVAILABLE) is sent again, to wherever :attr:`Loader.target` points by
then, until it is acknowledged or the deadline passes.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub

from tests.support.otlp import genai_span, trace_request


@dataclass
class Loader:
    """Sends ``requests`` exports of ``spans_per_request`` spans from a thread of its own."""

    target: str
    """host:port of the collector's OTLP/gRPC receiver; may be changed while it runs."""
    requests: int
    """How many export requests to send."""
    spans_per_request: int = 100
    """Spans in each."""
    name: str = "load"
    """Conversation id prefix, so two loaders' spans can be told apart."""
    deadline_seconds: float = 240.0
    """Give up retrying a request after this long."""
    acknowledged: set[tuple[str, str]] = field(default_factory=set)
    """(trace id, span id) in hex of every span in an acknowledged request."""
    retries: int = 0
    """Requests sent again after a failure."""
    sent: int = 0
    """Requests acknowledged so far."""
    error: str | None = None
    """Why it gave up (None: it did not)."""
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _prepared: list[tuple[ExportTraceServiceRequest, list[tuple[str, str]]]] = field(
        default_factory=list)

    def prepare(self) -> None:
        """Build every request now (a benchmark times the sending, not the building)."""
        self._prepared = [self._request(index) for index in range(self.requests)]

    def point_at(self, target: str) -> None:
        """Send the following requests (and retries) to ``target``."""
        with self._lock:
            self.target = target

    def start(self) -> None:
        """Begin sending."""
        self._thread = threading.Thread(target=self._run, name=f"loader-{self.name}",
                                        daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait until every request was acknowledged or given up on."""
        assert self._thread is not None
        self._thread.join(timeout)

    def _run(self) -> None:
        started = time.monotonic()
        channels: dict[str, grpc.Channel] = {}
        try:
            for index in range(self.requests):
                request, ids = (self._prepared[index] if self._prepared
                                else self._request(index))
                while True:
                    with self._lock:
                        target = self.target
                    if target not in channels:
                        channels[target] = grpc.insecure_channel(target)
                    try:
                        stub = TraceServiceStub(channels[target])  # type: ignore[no-untyped-call]
                        stub.Export(request, timeout=30)
                        break
                    except grpc.RpcError as exc:
                        if time.monotonic() - started > self.deadline_seconds:
                            self.error = f"request {index} never acknowledged: {exc}"
                            return
                        self.retries += 1
                        time.sleep(0.2)
                self.acknowledged.update(ids)
                self.sent += 1
        finally:
            for channel in channels.values():
                channel.close()

    def _request(self, index: int) -> tuple[ExportTraceServiceRequest, list[tuple[str, str]]]:
        spans = [genai_span(trace_id=os.urandom(16), span_id=os.urandom(8),
                            conversation=f"{self.name}-{index}-{n % 5}")
                 for n in range(self.spans_per_request)]
        ids = [(span.trace_id.hex(), span.span_id.hex()) for span in spans]
        return trace_request(spans, service=self.name), ids
