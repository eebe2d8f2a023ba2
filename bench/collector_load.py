"""Load benchmark for the tracemill collector: OTLP/gRPC GenAI spans in, durable spans out.

The driver (this process) starts a server under test, a load generator in a separate
process, samples the server's CPU and RSS every 0.5 s with psutil, stops the server with
SIGTERM, then counts the spans in its DuckDB file. Each run measures two servers back to
back under the same load, so both see the same machine noise:

* ``baseline``: ``bench/parse_only_server.py``, gRPC transport + ``FromString`` only,
  the ceiling;
* ``collector``: ``python -m tracemill serve``.

Both are started as ``CMD --db PATH --grpc-address 127.0.0.1:0 --http-address
127.0.0.1:0 --ready-file PATH`` and must write ``{"pid": N, "grpc": "HOST:PORT", ...}``
to the ready file once listening, and exit 0 after draining on SIGTERM.

The load: ``--concurrency`` Export calls in flight, each an ``ExportTraceServiceRequest``
of ``--spans-per-request`` realistic GenAI spans (~3 KB: ~20 attributes including a ~2 KB
``gen_ai.input.messages`` JSON string, and two span events). Requests are serialized once,
before timing, into a few templates; for each call the generator stamps a fresh 4-byte
request number into every trace id, span id and parent span id with a single
``bytes.join``, so every span of a run has a unique (trace id, span id) at almost no
CPU cost. On UNAVAILABLE (and other OTLP-retryable codes) the generator backs off, or
waits as long as the server's ``RetryInfo`` asks, and resends the same bytes.

Run ``python bench/collector_load.py --help`` for the options; ``bench/README.md`` says
what is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import os
import random
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

_REPO = Path(__file__).resolve().parent.parent
_EXPORT_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_SAMPLE_INTERVAL_S = 0.5
_WINDOW_S = 5.0
_MB = 1_000_000
_MIB = 1024 * 1024

# Targets from the collector issue.
TARGET_SPANS_PER_S = 20_000.0
TARGET_P99_S = 1.0
TARGET_PEAK_RSS_BYTES = 1024 * _MIB

# OTLP/gRPC: these codes are retryable; RESOURCE_EXHAUSTED only when RetryInfo is given.
_RETRYABLE = {"CANCELLED", "DEADLINE_EXCEEDED", "ABORTED", "OUT_OF_RANGE", "UNAVAILABLE",
              "DATA_LOSS"}
_BACKOFF_INITIAL_S = 0.1
_BACKOFF_MAX_S = 4.0


# --------------------------------------------------------------------------- records


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


@dataclass(frozen=True)
class BenchSettings:
    """The whole benchmark's settings, built once from the command line."""

    duration_s: float
    """Seconds of load per run."""
    runs: int
    """Runs per server."""
    servers: tuple[str, ...]
    """Servers measured in each run, in order (``baseline``, ``collector``)."""
    concurrency: int
    """Export calls in flight."""
    spans_per_request: int
    """Spans per request."""
    spans_per_trace: int
    """Spans per trace id."""
    templates: int
    """Distinct pre-built request bodies."""
    rate: float
    """Offered spans/s; 0 for closed loop."""
    rpc_timeout_s: float
    """Deadline of one Export call."""
    drain_timeout_s: float
    """Retry time allowed after the load window."""
    startup_timeout_s: float
    """Wait for the ready file."""
    shutdown_timeout_s: float
    """Wait for exit after SIGTERM."""
    commands: dict[str, tuple[str, ...]]
    """Server name to the command that starts it (contract flags are appended)."""
    workdir: Path | None
    """Parent of the per-run temporary directories (None: the system's)."""
    seed: int
    """Base seed for span content (run number is added)."""
    json: bool
    """Print JSON instead of the table."""
    check: bool
    """Exit 1 when a target is missed."""


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
    """Latency of each OK Export call (one attempt)."""
    delivery_latencies_s: list[float] = field(default_factory=list)
    """From first send to OK answer, including retries and back-off."""
    acks: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since start, spans acknowledged) per OK answer."""
    avg_span_bytes: float = 0.0
    """Mean serialized bytes per span in the request bodies."""


@dataclass(frozen=True)
class RunResult:
    """One measured run of one server."""

    server: str
    """``baseline`` or ``collector``."""
    run: int
    """1-based run number."""
    spans_per_s: float
    """Acknowledged spans per second."""
    mb_per_s: float
    """Acknowledged request payload, 10^6 bytes per second."""
    p50_s: float
    """Median Export latency (OK calls)."""
    p99_s: float
    """99th percentile Export latency (OK calls)."""
    max_s: float
    """Largest Export latency (OK calls)."""
    delivery_p99_s: float
    """99th percentile first-send-to-ack time, including retries."""
    worst_window_spans_per_s: float
    """Lowest acknowledged spans/s over consecutive 5 s windows of the load."""
    cpu_percent: float
    """Server CPU during the load, % of one core."""
    peak_rss_mib: float
    """Server peak RSS, MiB (load and shutdown)."""
    generator_cpu_percent: float
    """Load generator CPU during the load, % of one core."""
    spans_acked: int
    """Spans acknowledged."""
    spans_stored: int | None
    """``SELECT count(*) FROM spans`` after exit; None for the baseline (no store)."""
    spans_rejected: int
    """Spans rejected via partial_success."""
    spans_failed: int
    """Spans never acknowledged (non-retryable error or drain time out)."""
    unavailable: int
    """UNAVAILABLE answers (backpressure)."""
    other_errors: dict[str, int]
    """Other error answers by code name."""
    retries: int
    """Resends."""
    shutdown_s: float
    """SIGTERM to exit."""
    exit_code: int | None
    """Server exit status (None: had to be killed)."""
    db_mib: float | None
    """Size of the database file(s) after exit, MiB."""
    elapsed_s: float
    """Load window used for the rates."""
    avg_span_bytes: float
    """Mean serialized bytes per span."""


# --------------------------------------------------------------------------- span content

_VOCABULARY = (
    "order refund shipping account password invoice subscription cancel upgrade plan "
    "delivery address warehouse tracking number customer policy exception escalate "
    "manager receipt payment card declined charge duplicate billing cycle discount "
    "coupon expired return label carrier delay damaged item replacement warranty "
    "please could you check whether my the was is not yet still and but because when"
)
_WORDS = tuple(_VOCABULARY.split())
_TOOLS = ("lookup_order", "issue_refund", "update_address", "get_tracking", "search_kb")


def _text(rng: random.Random, n_chars: int) -> str:
    """Return pseudo-English text of about ``n_chars`` characters."""
    out: list[str] = []
    size = 0
    while size < n_chars:
        word = rng.choice(_WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out).capitalize() + "."


def _input_messages(rng: random.Random, n_chars: int) -> str:
    """A GenAI semconv ``gen_ai.input.messages`` JSON string of about ``n_chars``."""
    call_id = f"call_{rng.getrandbits(64):016x}"
    tool = rng.choice(_TOOLS)
    part = max(n_chars // 5, 40)
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": _text(rng, part)}]},
        {"role": "user", "parts": [{"type": "text", "content": _text(rng, part)}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": tool,
                                         "arguments": {"order_id": f"A{rng.randrange(10**6)}"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id,
                                    "response": _text(rng, part)}]},
        {"role": "user", "parts": [{"type": "text", "content": _text(rng, part)}]},
    ]
    return json.dumps(messages)


def _span_bytes_template(
    rng: random.Random, spans: int, spans_per_trace: int
) -> tuple[bytes, list[bytes]]:
    """Serialize one request of ``spans`` GenAI spans with random sentinel ids.

    Returns the body and the list of id values (each trace id and span id, once) so
    that the caller can find where ids sit in the body.
    """
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    def kv(key: str, value: str | int | float | list[str]) -> KeyValue:
        if isinstance(value, str):
            return KeyValue(key=key, value=AnyValue(string_value=value))
        if isinstance(value, bool):
            return KeyValue(key=key, value=AnyValue(bool_value=value))
        if isinstance(value, int):
            return KeyValue(key=key, value=AnyValue(int_value=value))
        if isinstance(value, float):
            return KeyValue(key=key, value=AnyValue(double_value=value))
        arr = ArrayValue(values=[AnyValue(string_value=v) for v in value])
        return KeyValue(key=key, value=AnyValue(array_value=arr))

    seen: set[bytes] = set()

    def fresh_id(n: int) -> bytes:
        while True:
            value = rng.randbytes(n)
            # Non-zero after the first 4 bytes are overwritten; unique in the body.
            if value[4:].strip(b"\0") and value not in seen:
                seen.add(value)
                return value

    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend([
        kv("service.name", "support-agent"),
        kv("service.version", "2.14.1"),
        kv("deployment.environment.name", "production"),
        kv("host.name", f"agent-{rng.randrange(100):02d}"),
        kv("telemetry.sdk.name", "opentelemetry"),
        kv("telemetry.sdk.language", "python"),
        kv("telemetry.sdk.version", "1.45.2"),
    ])
    ss = rs.scope_spans.add()
    ss.scope.name = "opentelemetry.instrumentation.openai_v2"
    ss.scope.version = "2.4b0"

    ids: list[bytes] = []
    now = time.time_ns()
    trace_id = root_id = b""
    conversation = ""
    for i in range(spans):
        if i % spans_per_trace == 0:
            trace_id, root_id = fresh_id(16), fresh_id(8)
            conversation = f"conv-{rng.getrandbits(64):016x}"
            ids += [trace_id, root_id]
            span_id, parent = root_id, b""
        else:
            span_id, parent = fresh_id(8), root_id
            ids.append(span_id)
        model = rng.choice(("gpt-4o-2024-08-06", "gpt-4.1-mini", "claude-sonnet-4"))
        in_tok, out_tok = rng.randrange(200, 4000), rng.randrange(10, 600)
        start = now - rng.randrange(10**9, 60 * 10**9)
        end = start + rng.randrange(2 * 10**8, 8 * 10**9)
        op = "invoke_agent" if not parent else "chat"
        finish = rng.choice(("stop", "tool_calls"))
        span = Span(
            trace_id=trace_id, span_id=span_id, parent_span_id=parent,
            name=f"{op} {model}" if parent else "invoke_agent support-agent",
            kind=Span.SPAN_KIND_CLIENT if parent else Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=start, end_time_unix_nano=end,
            status=Status(code=Status.STATUS_CODE_OK),
        )
        span.attributes.extend([
            kv("gen_ai.operation.name", op),
            kv("gen_ai.provider.name", "openai"),
            kv("gen_ai.request.model", model),
            kv("gen_ai.response.model", model),
            kv("gen_ai.response.id", f"chatcmpl-{rng.getrandbits(96):024x}"),
            kv("gen_ai.request.temperature", round(rng.random(), 2)),
            kv("gen_ai.request.top_p", 0.95),
            kv("gen_ai.request.max_tokens", 1024),
            kv("gen_ai.usage.input_tokens", in_tok),
            kv("gen_ai.usage.output_tokens", out_tok),
            kv("gen_ai.response.finish_reasons", [finish]),
            kv("gen_ai.conversation.id", conversation),
            kv("gen_ai.agent.name", "support-agent"),
            kv("gen_ai.agent.version", "2.14.1"),
            kv("gen_ai.input.messages", _input_messages(rng, 1800)),
            kv("gen_ai.output.messages", json.dumps([{
                "role": "assistant", "finish_reason": finish,
                "parts": [{"type": "text", "content": _text(rng, 100)}]}])),
            kv("server.address", "api.openai.com"),
            kv("server.port", 443),
            kv("session.id", conversation),
            kv("user.id", f"user-{rng.randrange(10**5)}"),
        ])
        ev = span.events.add(time_unix_nano=end - 1000, name="gen_ai.choice")
        ev.attributes.extend([kv("index", 0), kv("finish_reason", finish)])
        ev = span.events.add(time_unix_nano=end, name="gen_ai.evaluation.result")
        ev.attributes.extend([
            kv("gen_ai.evaluation.name", "helpfulness"),
            kv("gen_ai.evaluation.score.value", round(rng.random(), 3)),
            kv("gen_ai.evaluation.score.label", rng.choice(("pass", "fail"))),
        ])
        ss.spans.append(span)
    return request.SerializeToString(), ids


def _split_at_ids(body: bytes, ids: list[bytes], expected_slots: int) -> list[bytes]:
    """Cut ``body`` at the first 4 bytes of every occurrence of every id.

    ``prefix.join(result)`` then rebuilds the body with each id's first 4 bytes replaced
    by ``prefix``; with a request number as prefix all ids of the request become unique
    across the run, while the remaining id bytes keep them unique within the request.
    """
    offsets: list[int] = []
    for value in ids:
        pos = body.find(value)
        while pos != -1:
            offsets.append(pos)
            pos = body.find(value, pos + 1)
    offsets.sort()
    if len(offsets) != expected_slots:
        raise RuntimeError(f"found {len(offsets)} id slots in the template, expected "
                           f"{expected_slots}: an id value collided with other bytes")
    segments: list[bytes] = []
    prev = 0
    for off in offsets:
        segments.append(body[prev:off])
        prev = off + 4
    segments.append(body[prev:])
    return segments


def build_templates(cfg: LoadConfig) -> tuple[list[list[bytes]], float]:
    """Pre-serialize ``cfg.templates`` request bodies, split for id stamping.

    Returns the segment lists and the mean serialized bytes per span.
    """
    rng = random.Random(cfg.seed)
    n = cfg.spans_per_request
    roots = -(-n // cfg.spans_per_trace)
    # Every span has a trace id and a span id; every non-root span a parent id.
    slots = n + n + (n - roots)
    templates: list[list[bytes]] = []
    total = 0
    for _ in range(cfg.templates):
        body, ids = _span_bytes_template(rng, n, cfg.spans_per_trace)
        templates.append(_split_at_ids(body, ids, slots))
        total += len(body)
    return templates, total / (cfg.templates * n)


# --------------------------------------------------------------------------- load generator


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


async def _generate(cfg: LoadConfig, templates: list[list[bytes]], go_time: float,
                    result: GeneratorResult) -> None:
    """Drive the load against ``cfg.target`` until ``cfg.duration_s`` has passed and
    every in-flight request has been answered (or given up on)."""
    import grpc
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    channel = grpc.aio.insecure_channel(cfg.target, options=[
        ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
        ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
    ])
    export = channel.unary_unary(_EXPORT_METHOD)  # bytes in, bytes out
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
            segments = templates[number % len(templates)]
            await deliver(number.to_bytes(4, "big").join(segments))

    try:
        await asyncio.gather(*(worker() for _ in range(cfg.concurrency)))
    finally:
        await channel.close()
    result.error_codes = dict(codes)
    result.elapsed_s = max(last_answer - go_time, 1e-9)


def _generator_main(cfg: LoadConfig, conn: multiprocessing.connection.Connection) -> None:
    """Entry point of the load-generator process.

    Protocol on ``conn``: send ``"ready"`` once the templates are built, wait for
    ``"go"``, run, send the :class:`GeneratorResult` as a dict.
    """
    templates, avg_span_bytes = build_templates(cfg)
    conn.send("ready")
    if conn.recv() != "go":
        return
    result = GeneratorResult(avg_span_bytes=avg_span_bytes)
    asyncio.run(_generate(cfg, templates, time.perf_counter(), result))
    conn.send(asdict(result))


# --------------------------------------------------------------------------- server under test


class _Sampler(threading.Thread):
    """Samples a process tree's RSS (and the kernel high-water mark) every 0.5 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.peak_rss = 0
        self.samples = 0
        self._stop_event = threading.Event()

    def tree(self) -> list[psutil.Process]:
        """The process and its live descendants."""
        try:
            return [self.proc, *self.proc.children(recursive=True)]
        except psutil.Error:
            return [self.proc]

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the tree so far."""
        total = 0.0
        for p in self.tree():
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system
        return total

    def _sample(self) -> None:
        rss = 0
        for p in self.tree():
            with contextlib.suppress(psutil.Error):
                rss += p.memory_info().rss
        hwm = 0
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
        self.peak_rss = max(self.peak_rss, rss, hwm)
        self.samples += 1

    def run(self) -> None:
        while not self._stop_event.is_set() and self.proc.is_running():
            self._sample()
            self._stop_event.wait(_SAMPLE_INTERVAL_S)

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stop_event.set()
        self.join()


@dataclass
class _Server:
    """A started server under test."""

    popen: subprocess.Popen[bytes]
    pid: int
    grpc: str
    db: Path
    log: Path


def _start_server(cmd: list[str], workdir: Path, timeout_s: float) -> _Server:
    """Start ``cmd`` with the serve contract flags and wait for its ready file."""
    db, ready, log = workdir / "spans.duckdb", workdir / "ready.json", workdir / "server.log"
    argv = [*cmd, "--db", str(db), "--grpc-address", "127.0.0.1:0",
            "--http-address", "127.0.0.1:0", "--ready-file", str(ready)]
    with log.open("wb") as out:
        popen = subprocess.Popen(argv, cwd=_REPO, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError(f"server exited with {popen.returncode} before it was ready: "
                               f"{shlex.join(argv)}\n{_tail(log)}")
        if ready.exists():
            info = json.loads(ready.read_text())
            return _Server(popen, int(info["pid"]), str(info["grpc"]), db, log)
        time.sleep(0.05)
    popen.kill()
    popen.wait()
    raise RuntimeError(f"server wrote no ready file {ready} within {timeout_s:.0f} s: "
                       f"{shlex.join(argv)}\n{_tail(log)}")


def _stop_server(server: _Server, timeout_s: float) -> tuple[float, int | None]:
    """SIGTERM the server and wait; return (seconds to exit, exit code or None if killed)."""
    start = time.perf_counter()
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGTERM)
    try:
        code: int | None = server.popen.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        server.popen.kill()
        server.popen.wait()
        code = None
    return time.perf_counter() - start, code


def _tail(path: Path, lines: int = 20) -> str:
    """Last lines of a log file, for error messages."""
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""


def _count_stored(db: Path) -> int:
    """``SELECT count(*) FROM spans`` on the database file, opened read-only."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT count(*) FROM spans").fetchone()
    return int(row[0]) if row else 0


# --------------------------------------------------------------------------- one run


def _percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def _worst_window(acks: list[tuple[float, int]], duration_s: float) -> float:
    """Lowest spans/s over consecutive whole ``_WINDOW_S`` windows (the whole run if shorter)."""
    window = min(_WINDOW_S, duration_s)
    n = max(1, int(duration_s // window))
    buckets = [0] * n
    for t, spans in acks:
        i = int(t // window)
        if i < n:
            buckets[i] += spans
    return min(buckets) / window


def _receive(conn: multiprocessing.connection.Connection,
             proc: multiprocessing.process.BaseProcess, timeout_s: float, what: str) -> object:
    """Wait for the generator's next message; fail early if its process died."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if conn.poll(0.2):
            return conn.recv()
        if not proc.is_alive():
            raise RuntimeError(f"load generator exited with {proc.exitcode} before {what}")
    raise RuntimeError(f"load generator gave no {what} within {timeout_s:.0f} s")


def run_once(name: str, run: int, settings: BenchSettings) -> RunResult:
    """Start the server, load it from a separate process, stop it, count what it stored."""
    with tempfile.TemporaryDirectory(prefix=f"tracemill-bench-{name}-",
                                     dir=settings.workdir) as tmp:
        workdir = Path(tmp)
        server = _start_server(list(settings.commands[name]), workdir,
                               settings.startup_timeout_s)
        sampler = _Sampler(server.pid)
        sampler.start()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        cfg = LoadConfig(
            target=server.grpc, duration_s=settings.duration_s,
            concurrency=settings.concurrency, spans_per_request=settings.spans_per_request,
            spans_per_trace=settings.spans_per_trace, templates=settings.templates,
            rate=settings.rate, rpc_timeout_s=settings.rpc_timeout_s,
            drain_timeout_s=settings.drain_timeout_s, seed=settings.seed + run,
        )
        gen = ctx.Process(target=_generator_main, args=(cfg, child), name="load-generator")
        gen.start()
        try:
            _receive(parent, gen, 300, "ready message")
            gen_ps = psutil.Process(gen.pid)
            gen_cpu0 = sum(gen_ps.cpu_times()[:2])
            cpu0, t0 = sampler.cpu_seconds(), time.perf_counter()
            parent.send("go")
            budget = (settings.duration_s + settings.drain_timeout_s
                      + settings.rpc_timeout_s + 60)
            message = _receive(parent, gen, budget, "result")
            cpu1, t1 = sampler.cpu_seconds(), time.perf_counter()
            gen_cpu1 = sum(gen_ps.cpu_times()[:2])
            assert isinstance(message, dict)
            gen_result = GeneratorResult(**message)
        finally:
            gen.join(10)
            if gen.is_alive():
                gen.kill()
                gen.join()
            shutdown_s, exit_code = _stop_server(server, settings.shutdown_timeout_s)
            sampler.stop()

        stored: int | None = None
        db_mib: float | None = None
        if name == "collector":
            files = [p for p in workdir.iterdir() if p.name.startswith(server.db.name)]
            db_mib = sum(p.stat().st_size for p in files) / _MIB
            try:
                stored = _count_stored(server.db)
            except Exception as exc:  # any store failure is reported, the run goes on
                print(f"[{name} run {run}] cannot count spans in {server.db}: {exc}",
                      file=sys.stderr)
        if exit_code != 0:
            print(f"[{name} run {run}] server exit code {exit_code}; log tail:\n"
                  f"{_tail(server.log)}", file=sys.stderr)

    window = t1 - t0
    r = gen_result
    codes = dict(r.error_codes)
    unavailable = codes.pop("UNAVAILABLE", 0)
    return RunResult(
        server=name, run=run,
        spans_per_s=r.spans_acked / r.elapsed_s,
        mb_per_s=r.bytes_acked / r.elapsed_s / _MB,
        p50_s=_percentile(r.rpc_latencies_s, 50),
        p99_s=_percentile(r.rpc_latencies_s, 99),
        max_s=max(r.rpc_latencies_s, default=0.0),
        delivery_p99_s=_percentile(r.delivery_latencies_s, 99),
        worst_window_spans_per_s=_worst_window(r.acks, settings.duration_s),
        cpu_percent=100 * (cpu1 - cpu0) / window,
        peak_rss_mib=sampler.peak_rss / _MIB,
        generator_cpu_percent=100 * (gen_cpu1 - gen_cpu0) / window,
        spans_acked=r.spans_acked, spans_stored=stored, spans_rejected=r.spans_rejected,
        spans_failed=r.spans_failed, unavailable=unavailable, other_errors=codes,
        retries=r.retries, shutdown_s=shutdown_s, exit_code=exit_code, db_mib=db_mib,
        elapsed_s=r.elapsed_s, avg_span_bytes=r.avg_span_bytes,
    )


# --------------------------------------------------------------------------- summary


@dataclass(frozen=True)
class ServerSummary:
    """One server's results over all runs: medians of the rates, sums of the counts."""

    runs: int
    """Runs measured."""
    spans_per_s: float
    """Median acknowledged spans/s."""
    mb_per_s: float
    """Median acknowledged payload MB/s."""
    p50_s: float
    """Median of the runs' p50 Export latency."""
    p99_s: float
    """Median of the runs' p99 Export latency."""
    max_s: float
    """Median of the runs' largest Export latency."""
    delivery_p99_s: float
    """Median of the runs' p99 first-send-to-ack time."""
    worst_window_spans_per_s: float
    """Median of the runs' worst 5 s window."""
    cpu_percent: float
    """Median server CPU, % of one core."""
    peak_rss_mib: float
    """Median peak RSS, MiB."""
    generator_cpu_percent: float
    """Median load generator CPU, % of one core."""
    shutdown_s: float
    """Median SIGTERM-to-exit time."""
    spans_acked: int
    """Spans acknowledged, all runs."""
    spans_stored: int | None
    """Spans stored, all runs (None without a store)."""
    spans_rejected: int
    """Spans rejected via partial_success, all runs."""
    spans_failed: int
    """Spans never acknowledged, all runs."""
    unavailable: int
    """UNAVAILABLE answers, all runs."""
    retries: int
    """Resends, all runs."""

    @classmethod
    def of(cls, runs: list[RunResult]) -> ServerSummary:
        """Summarize one server's runs."""

        def med(name: str) -> float:
            return float(statistics.median(getattr(r, name) for r in runs))

        stored = [r.spans_stored for r in runs]
        return cls(
            runs=len(runs), spans_per_s=med("spans_per_s"), mb_per_s=med("mb_per_s"),
            p50_s=med("p50_s"), p99_s=med("p99_s"), max_s=med("max_s"),
            delivery_p99_s=med("delivery_p99_s"),
            worst_window_spans_per_s=med("worst_window_spans_per_s"),
            cpu_percent=med("cpu_percent"), peak_rss_mib=med("peak_rss_mib"),
            generator_cpu_percent=med("generator_cpu_percent"), shutdown_s=med("shutdown_s"),
            spans_acked=sum(r.spans_acked for r in runs),
            spans_stored=None if None in stored else sum(s or 0 for s in stored),
            spans_rejected=sum(r.spans_rejected for r in runs),
            spans_failed=sum(r.spans_failed for r in runs),
            unavailable=sum(r.unavailable for r in runs),
            retries=sum(r.retries for r in runs),
        )


@dataclass(frozen=True)
class Summary:
    """What the benchmark concludes."""

    baseline: ServerSummary | None
    """The parse-only ceiling, if measured."""
    collector: ServerSummary | None
    """The collector, if measured."""
    ratio_to_baseline: float | None
    """Median over runs of collector spans/s divided by the same run's baseline spans/s."""
    targets: dict[str, bool]
    """Target name to met (collector medians; durability over every run)."""


def summarize(results: list[RunResult]) -> Summary:
    """Medians per server, the collector/baseline ratio and the target verdicts."""
    base = [r for r in results if r.server == "baseline"]
    coll = [r for r in results if r.server == "collector"]
    ratio: float | None = None
    pairs = [c.spans_per_s / b.spans_per_s for b, c in zip(base, coll, strict=False)
             if b.spans_per_s > 0]
    if pairs:
        ratio = float(statistics.median(pairs))
    targets: dict[str, bool] = {}
    coll_summary = ServerSummary.of(coll) if coll else None
    if coll_summary:
        targets = {
            f"spans/s >= {TARGET_SPANS_PER_S:,.0f}": (
                coll_summary.spans_per_s >= TARGET_SPANS_PER_S),
            f"p99 <= {TARGET_P99_S * 1e3:.0f} ms": coll_summary.p99_s <= TARGET_P99_S,
            f"peak RSS <= {TARGET_PEAK_RSS_BYTES // _MIB} MiB": (
                coll_summary.peak_rss_mib * _MIB <= TARGET_PEAK_RSS_BYTES),
            "stored >= acked, exit 0 (every run)": all(
                r.spans_stored is not None and r.spans_stored >= r.spans_acked
                and r.exit_code == 0 for r in coll),
        }
    return Summary(
        baseline=ServerSummary.of(base) if base else None,
        collector=coll_summary, ratio_to_baseline=ratio, targets=targets,
    )


def _fmt_run(r: RunResult) -> str:
    stored = "n/a" if r.spans_stored is None else f"{r.spans_stored}"
    return (f"[{r.server} run {r.run}] {r.spans_per_s:,.0f} spans/s  {r.mb_per_s:.1f} MB/s  "
            f"p50 {r.p50_s * 1e3:.0f} ms  p99 {r.p99_s * 1e3:.0f} ms  "
            f"max {r.max_s * 1e3:.0f} ms  cpu {r.cpu_percent:.0f}%  "
            f"rss {r.peak_rss_mib:.0f} MiB  acked {r.spans_acked}  stored {stored}  "
            f"unavailable {r.unavailable}  retries {r.retries}  exit {r.exit_code}")


def format_table(results: list[RunResult], summary: Summary) -> str:
    """The human-readable summary: one column per server, medians over runs."""
    columns = [(n, s) for n, s in (("baseline", summary.baseline),
                                   ("collector", summary.collector)) if s is not None]

    def row(label: str, key: str, fmt: str, scale: float = 1.0) -> str:
        cells = []
        for _, s in columns:
            value = getattr(s, key)
            if value is not None and scale != 1.0:
                value *= scale
            cells.append("n/a" if value is None else format(value, fmt))
        return f"{label:<38}" + "".join(f"{c:>14}" for c in cells)

    lines = [
        f"{'median over runs':<38}" + "".join(f"{n:>14}" for n, _ in columns),
        row("runs", "runs", "d"),
        row("spans/s acknowledged", "spans_per_s", ",.0f"),
        row("MB/s acknowledged (payload)", "mb_per_s", ".1f"),
        row("Export latency p50 (ms)", "p50_s", ".0f", 1e3),
        row("Export latency p99 (ms)", "p99_s", ".0f", 1e3),
        row("Export latency max (ms)", "max_s", ".0f", 1e3),
        row("delivery p99 incl. retries (ms)", "delivery_p99_s", ".0f", 1e3),
        row("worst 5 s window (spans/s)", "worst_window_spans_per_s", ",.0f"),
        row("server CPU avg (% of one core)", "cpu_percent", ".0f"),
        row("server peak RSS (MiB)", "peak_rss_mib", ".0f"),
        row("generator CPU avg (% of one core)", "generator_cpu_percent", ".0f"),
        row("SIGTERM to exit (s)", "shutdown_s", ".1f"),
        "totals over runs",
        row("  spans acknowledged", "spans_acked", "d"),
        row("  spans stored (count(*) FROM spans)", "spans_stored", "d"),
        row("  spans rejected (partial_success)", "spans_rejected", "d"),
        row("  spans never acknowledged", "spans_failed", "d"),
        row("  UNAVAILABLE answers (backpressure)", "unavailable", "d"),
        row("  retries", "retries", "d"),
    ]
    if summary.ratio_to_baseline is not None:
        lines.append(f"{'collector / baseline spans/s':<38}{summary.ratio_to_baseline:>28.2f}")
    if summary.targets:
        lines.append("targets (collector)")
        lines += [f"  {k:<36}{'PASS' if ok else 'FAIL':>28}" for k, ok in summary.targets.items()]
    others = [f"{r.server} run {r.run}: {r.other_errors}" for r in results if r.other_errors]
    if others:
        lines.append("other error codes: " + "; ".join(others))
    return "\n".join(lines)


# --------------------------------------------------------------------------- command line


def _parse_args(argv: list[str] | None) -> BenchSettings:
    """Build the settings from the command line (the only place they come from)."""
    p = argparse.ArgumentParser(
        prog="collector_load.py",
        description="Benchmark the tracemill collector against a parse-only gRPC baseline "
                    "with realistic OTLP GenAI spans; verify that acknowledged spans are stored.",
    )
    p.add_argument("--duration", type=float, default=60.0,
                   help="seconds of load per run (default 60)")
    p.add_argument("--runs", type=int, default=3,
                   help="runs per server; medians are reported (default 3)")
    p.add_argument("--servers", choices=("both", "collector", "baseline"), default="both",
                   help="which servers to measure; each run does baseline, then collector")
    p.add_argument("--concurrency", type=int, default=8,
                   help="Export calls in flight (default 8)")
    p.add_argument("--spans-per-request", type=int, default=512,
                   help="spans per ExportTraceServiceRequest (default 512)")
    p.add_argument("--spans-per-trace", type=int, default=8,
                   help="spans sharing a trace id: one root and its children (default 8)")
    p.add_argument("--templates", type=int, default=8,
                   help="distinct pre-built request bodies cycled through (default 8)")
    p.add_argument("--rate", type=float, default=0.0,
                   help="offered spans/s; 0 = as fast as the server answers (default 0)")
    p.add_argument("--rpc-timeout", type=float, default=10.0,
                   help="deadline of one Export call, s (default 10)")
    p.add_argument("--drain-timeout", type=float, default=60.0,
                   help="after the load, how long in-flight requests may keep retrying, s "
                        "(default 60)")
    p.add_argument("--startup-timeout", type=float, default=120.0,
                   help="how long to wait for the server's ready file, s (default 120)")
    p.add_argument("--shutdown-timeout", type=float, default=120.0,
                   help="how long to wait for exit after SIGTERM before SIGKILL, s "
                        "(default 120)")
    p.add_argument("--collector-cmd",
                   default=f"{shlex.quote(sys.executable)} -m tracemill serve",
                   help="command that starts the collector, run in the repo root; the "
                        "serve-contract flags are appended (default: this Python -m "
                        "tracemill serve)")
    p.add_argument("--baseline-cmd",
                   default=f"{shlex.quote(sys.executable)} "
                           f"{shlex.quote(str(Path(__file__).with_name('parse_only_server.py')))}"
                           " serve",
                   help="command that starts the parse-only baseline server")
    p.add_argument("--workdir", type=Path,
                   help="where per-run temporary directories go (default: the system's)")
    p.add_argument("--seed", type=int, default=1, help="seed for span content (default 1)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (settings, runs, summary) instead of the table")
    p.add_argument("--check", action="store_true",
                   help="exit 1 if the collector misses a target or loses acknowledged spans")
    a = p.parse_args(argv)
    if a.duration <= 0 or a.runs < 1 or a.concurrency < 1 or a.spans_per_trace < 1:
        p.error("--duration must be > 0; --runs, --concurrency, --spans-per-trace >= 1")
    return BenchSettings(
        duration_s=a.duration, runs=a.runs,
        servers=("baseline", "collector") if a.servers == "both" else (a.servers,),
        concurrency=a.concurrency, spans_per_request=a.spans_per_request,
        spans_per_trace=a.spans_per_trace, templates=a.templates, rate=a.rate,
        rpc_timeout_s=a.rpc_timeout, drain_timeout_s=a.drain_timeout,
        startup_timeout_s=a.startup_timeout, shutdown_timeout_s=a.shutdown_timeout,
        commands={"baseline": tuple(shlex.split(a.baseline_cmd)),
                  "collector": tuple(shlex.split(a.collector_cmd))},
        workdir=a.workdir, seed=a.seed, json=a.json, check=a.check,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table (or JSON); return the exit status.

    0: done (targets are reported, not enforced, unless ``--check``); 1: ``--check`` and a
    target missed; 2: a server or the generator could not be run.
    """
    settings = _parse_args(argv)
    results: list[RunResult] = []
    for run in range(1, settings.runs + 1):
        for name in settings.servers:
            print(f"[{name} run {run}] {settings.duration_s:.0f} s of load, "
                  f"concurrency {settings.concurrency} ...", file=sys.stderr, flush=True)
            try:
                result = run_once(name, run, settings)
            except RuntimeError as exc:
                print(f"[{name} run {run}] failed: {exc}", file=sys.stderr)
                return 2
            print(_fmt_run(result), file=sys.stderr, flush=True)
            results.append(result)

    summary = summarize(results)
    span_bytes = statistics.median(r.avg_span_bytes for r in results)
    if settings.json:
        print(json.dumps({"settings": asdict(settings), "avg_span_bytes": span_bytes,
                          "runs": [asdict(r) for r in results], "summary": asdict(summary)},
                         indent=2, default=str))
    else:
        rate = "max" if settings.rate <= 0 else f"{settings.rate:,.0f} spans/s offered"
        print(f"load: {settings.spans_per_request} spans/request, {span_bytes:,.0f} B/span, "
              f"concurrency {settings.concurrency}, rate {rate}, "
              f"{settings.duration_s:.0f} s x {settings.runs} run(s)")
        print(format_table(results, summary))
    if settings.check and not all(summary.targets.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
