"""The load generator: runs in its own process and keeps Export calls in flight.

:func:`generator_main` is the process entry point (a ``multiprocessing`` spawn child of
the driver). It builds the request templates before timing starts, waits for ``"go"``,
then keeps ``concurrency`` OTLP/gRPC Export calls in flight with ``grpc.aio`` (closed loop,
or a fixed offered rate). Each call stamps a fresh 4-byte request number into every id of
a pre-built body, so every span of a run is unique, and moves its span and event times so
that the body's latest one is the moment it is sent (``_stamping.py``). Retryable answers
(OTLP's list; RESOURCE_EXHAUSTED only with ``RetryInfo``) resend the same bytes after the server's
``RetryInfo`` delay or an exponential back-off.
"""

from __future__ import annotations

import asyncio
import multiprocessing.connection
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from _spans import build_templates
from _stamping import Stamper

EXPORT_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

# OTLP/gRPC: these codes are retryable; RESOURCE_EXHAUSTED only when RetryInfo is given.
_RETRYABLE = {"CANCELLED", "DEADLINE_EXCEEDED", "ABORTED", "OUT_OF_RANGE", "UNAVAILABLE",
              "DATA_LOSS"}
_BACKOFF_INITIAL_S = 0.1
_BACKOFF_MAX_S = 4.0


@dataclass(frozen=True)
class LoadConfig:
    """What the load generator sends and how."""

    target: str
    """gRPC ``HOST:PORT`` of the server under test."""
    duration_s: float
    """Seconds during which new requests are started."""
    concurrency: int
    """Export calls kept in flight."""
    spans_per_request: int
    """Spans in each ``ExportTraceServiceRequest``."""
    spans_per_trace: int
    """Spans sharing one trace id (first is the root, the others its children)."""
    templates: int
    """Distinct pre-serialized request bodies cycled through (content varies, ids are stamped)."""
    rate: float
    """Offered spans/s; 0 sends as fast as ``concurrency`` allows (closed loop)."""
    rpc_timeout_s: float
    """Deadline of one Export call."""
    drain_timeout_s: float
    """After ``duration_s``, how long in-flight requests may keep retrying (then abandoned)."""
    seed: int
    """Seed for the span content."""


@dataclass
class GeneratorResult:
    """What the load generator observed (sent from its process to the driver)."""

    elapsed_s: float = 0.0
    """From the start signal to the last answer."""
    requests_acked: int = 0
    """Export calls answered OK."""
    spans_acked: int = 0
    """Spans in OK answers minus those the server rejected via ``partial_success``."""
    bytes_acked: int = 0
    """Serialized request bytes of OK answers."""
    spans_rejected: int = 0
    """Spans rejected via ``partial_success.rejected_spans`` (not retried, per OTLP)."""
    spans_failed: int = 0
    """Spans of requests that failed with a non-retryable code or ran out of drain time."""
    retries: int = 0
    """Requests resent after a retryable error."""
    error_codes: dict[str, int] = field(default_factory=dict)
    """Count of error answers by gRPC status code name (UNAVAILABLE is backpressure)."""
    retry_info_seen: int = 0
    """Error answers that carried a ``google.rpc.RetryInfo`` delay."""
    rpc_latencies_s: list[float] = field(default_factory=list)
    """Latency of each Export call answered OK or timed out (one attempt each)."""
    delivery_latencies_s: list[float] = field(default_factory=list)
    """From first send to OK answer, including retries and back-off."""
    acks: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since start, spans acknowledged) per OK answer."""
    avg_span_bytes: float = 0.0
    """Mean serialized bytes per span in the request bodies."""


def _retry_delay(err: object) -> float | None:
    """The delay a ``google.rpc.RetryInfo`` in the error's trailing metadata asks for."""
    from google.rpc import error_details_pb2, status_pb2

    trailing = getattr(err, "trailing_metadata", lambda: None)()
    for key, value in trailing or ():
        if key != "grpc-status-details-bin" or not isinstance(value, bytes):
            continue
        for detail in status_pb2.Status.FromString(value).details:
            if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                info = error_details_pb2.RetryInfo()
                detail.Unpack(info)
                return float(info.retry_delay.seconds + info.retry_delay.nanos / 1e9)
    return None


async def _generate(cfg: LoadConfig, templates: list[Stamper], go_time: float,
                    result: GeneratorResult) -> None:
    """Drive the load against ``cfg.target`` until ``cfg.duration_s`` has passed and
    every in-flight request has been answered (or given up on)."""
    import grpc
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    channel = grpc.aio.insecure_channel(cfg.target, options=[
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ])
    export = channel.unary_unary(EXPORT_METHOD)  # bytes in, bytes out
    end_time = go_time + cfg.duration_s
    give_up_time = end_time + cfg.drain_timeout_s
    nspans = cfg.spans_per_request
    next_request = 0
    codes: Counter[str] = Counter()
    last_answer = go_time

    async def deliver(body: bytes) -> None:
        nonlocal last_answer
        first = time.perf_counter()
        attempt = 0
        while True:
            start = time.perf_counter()
            try:
                answer = await export(body, timeout=cfg.rpc_timeout_s)
            except grpc.aio.AioRpcError as err:
                last_answer = time.perf_counter()
                code = err.code().name
                codes[code] += 1
                if code == "DEADLINE_EXCEEDED":
                    # A call that timed out took at least this long: leaving it out of
                    # the latency distribution would flatter a stalling server.
                    result.rpc_latencies_s.append(last_answer - start)
                delay = _retry_delay(err)
                result.retry_info_seen += delay is not None
                retryable = code in _RETRYABLE or (
                    code == "RESOURCE_EXHAUSTED" and delay is not None)
                if delay is None:
                    delay = min(_BACKOFF_INITIAL_S * 2 ** attempt, _BACKOFF_MAX_S)
                    delay *= random.uniform(0.8, 1.2)
                if not retryable or time.perf_counter() + delay > give_up_time:
                    result.spans_failed += nspans
                    return
                result.retries += 1
                attempt += 1
                await asyncio.sleep(delay)
                continue
            now = time.perf_counter()
            last_answer = now
            rejected = 0
            if answer:
                partial = ExportTraceServiceResponse.FromString(answer).partial_success
                rejected = partial.rejected_spans
            result.requests_acked += 1
            result.spans_acked += nspans - rejected
            result.spans_rejected += rejected
            result.bytes_acked += len(body)
            result.rpc_latencies_s.append(now - start)
            result.delivery_latencies_s.append(now - first)
            result.acks.append((now - go_time, nspans - rejected))
            return

    async def worker() -> None:
        nonlocal next_request
        while True:
            number = next_request
            next_request += 1
            if cfg.rate > 0:
                scheduled = go_time + number * nspans / cfg.rate
                if scheduled >= end_time:
                    return
                await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
            elif time.perf_counter() >= end_time:
                return
            template = templates[number % len(templates)]
            await deliver(template.request(number, time.time_ns()))

    try:
        await asyncio.gather(*(worker() for _ in range(cfg.concurrency)))
    finally:
        await channel.close()
    result.error_codes = dict(codes)
    result.elapsed_s = max(last_answer - go_time, 1e-9)


def generator_main(cfg: LoadConfig, conn: multiprocessing.connection.Connection) -> None:
    """Entry point of the load-generator process.

    Protocol on ``conn``: send ``"ready"`` once the templates are built, wait for
    ``"go"``, run, send the :class:`GeneratorResult` as a dict.
    """
    templates, avg_span_bytes = build_templates(cfg.seed, cfg.templates,
                                                cfg.spans_per_request, cfg.spans_per_trace)
    stampers = [Stamper(segments) for segments in templates]
    conn.send("ready")
    if conn.recv() != "go":
        return
    result = GeneratorResult(avg_span_bytes=avg_span_bytes)
    asyncio.run(_generate(cfg, stampers, time.perf_counter(), result))
    conn.send(asdict(result))

