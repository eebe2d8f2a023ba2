"""Load benchmark for the tracemill collector: OTLP/gRPC GenAI spans in, rows out.

The driver (this process) starts a server under test in a clean environment, a load
generator in a separate process (``_generator.py``, with span content from ``_spans.py``),
samples the server's process tree with psutil and its ``/metrics`` every 0.5 s
(``_server.py``), waits after the load until every acknowledged span is stored as a row,
stops the server with SIGTERM, then counts the spans in its DuckDB file. Each run measures
two servers back to back under the same load, so both see the same machine noise:

* ``baseline``: ``bench/parse_only_server.py``, gRPC transport + ``FromString`` only,
  the ceiling for acknowledged spans/s;
* ``collector``: ``python -m tracemill serve``.

The collector acknowledges an export once it is fsync'd in its spool and stores the rows
later, in the background; so it has two rates, *acknowledged* and *stored as rows*
(``_report.py`` prints both, and ``bench/README.md`` says what every figure means).

Run ``python bench/collector_load.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import shlex
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psutil
from _generator import GeneratorResult, LoadConfig, generator_main
from _report import (
    MB,
    MIB,
    RunResult,
    format_run,
    format_table,
    percentile,
    summarize,
    worst_window,
)
from _server import (
    SHUTDOWN_DRAIN_SECONDS,
    CpuSplit,
    MetricsSample,
    MetricsSampler,
    ProcessSampler,
    count_stored,
    fetch_metrics,
    metrics_client,
    size_mib,
    start_server,
    stop_server,
    tail,
)


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
    store_timeout_s: float
    """After the load, how long to wait for every accepted span to be stored as rows."""
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


def _machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (all processes, all cores)."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0) - getattr(t, "guest", 0.0) - getattr(
        t, "guest_nice", 0.0)


def _own_cpu() -> float:
    """CPU seconds of this driver process (its samplers) so far."""
    t = psutil.Process().cpu_times()
    return t.user + t.system


def _fetch(client: httpx.Client | None) -> MetricsSample | None:
    """One ``/metrics`` sample now (None without a client or when the read fails)."""
    if client is None:
        return None
    for _ in range(3):
        try:
            return fetch_metrics(client)
        except (httpx.HTTPError, KeyError):
            time.sleep(0.2)
    return None


@dataclass
class _Observed:
    """What the driver saw of the collector's ``/metrics`` and CPU around the load."""

    start: MetricsSample | None = None
    """Just before the load."""
    load_end: MetricsSample | None = None
    """Just after the generator's last answer."""
    drained: MetricsSample | None = None
    """First sample with every accepted span stored (None: not within the timeout)."""
    last: MetricsSample | None = None
    """The last sample before SIGTERM."""
    drain_cpu: tuple[float, float] | None = None
    """Main and child CPU % of one core during the drain (None: no drain)."""


def _wait_stored(metrics: MetricsSampler, procs: ProcessSampler, load_end: MetricsSample,
                 cpu1: dict[int, float], timeout_s: float, seen: _Observed) -> None:
    """After the load: wait until every accepted span is stored, measuring the drain's CPU."""
    t1 = time.perf_counter()
    if load_end.all_stored:
        seen.drained = seen.last = load_end
        return
    seen.drained = metrics.wait_for(lambda s: s.all_stored, timeout_s)
    cpu2, t2 = procs.cpu_snapshot(), time.perf_counter()
    split = procs.cpu_between(cpu1, cpu2)
    seen.drain_cpu = (100 * split.main / (t2 - t1), 100 * split.children / (t2 - t1))
    seen.last = seen.drained or (metrics.samples[-1] if metrics.samples else load_end)


def run_once(name: str, run: int, settings: BenchSettings) -> RunResult:
    """Start the server, load it from a separate process, wait until it has stored what it
    acknowledged, stop it, count what it stored."""
    with tempfile.TemporaryDirectory(prefix=f"tracemill-bench-{name}-",
                                     dir=settings.workdir) as tmp:
        workdir = Path(tmp).resolve()
        server = start_server(list(settings.commands[name]), workdir,
                              settings.startup_timeout_s)
        procs = ProcessSampler(server.pid)
        procs.start()
        metrics = MetricsSampler(server.http) if server.http else None
        client = metrics_client(server.http) if server.http else None
        seen = _Observed()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        cfg = LoadConfig(
            target=server.grpc, duration_s=settings.duration_s,
            concurrency=settings.concurrency, spans_per_request=settings.spans_per_request,
            spans_per_trace=settings.spans_per_trace, templates=settings.templates,
            rate=settings.rate, rpc_timeout_s=settings.rpc_timeout_s,
            drain_timeout_s=settings.drain_timeout_s, seed=settings.seed + run,
        )
        gen = ctx.Process(target=generator_main, args=(cfg, child), name="load-generator")
        gen.start()
        try:
            _receive(parent, gen, 300, "ready message")
            gen_ps = psutil.Process(gen.pid)
            gen_cpu0 = sum(gen_ps.cpu_times()[:2])
            seen.start = _fetch(client)
            if metrics:
                metrics.start()
            cpu0, t0 = procs.cpu_snapshot(), time.perf_counter()
            busy0, own0 = _machine_busy(), _own_cpu()
            parent.send("go")
            budget = (settings.duration_s + settings.drain_timeout_s
                      + settings.rpc_timeout_s + 60)
            message = _receive(parent, gen, budget, "result")
            cpu1, t1 = procs.cpu_snapshot(), time.perf_counter()
            gen_cpu1 = sum(gen_ps.cpu_times()[:2])
            busy1, own1 = _machine_busy(), _own_cpu()
            assert isinstance(message, dict)
            gen_result = GeneratorResult(**message)
            seen.load_end = _fetch(client)
            if metrics and seen.load_end:
                print(f"[{name} run {run}] load done; waiting for the spool backlog to be "
                      "stored ...", file=sys.stderr, flush=True)
                _wait_stored(metrics, procs, seen.load_end, cpu1, settings.store_timeout_s,
                             seen)
        finally:
            gen.join(10)
            if gen.is_alive():
                gen.kill()
                gen.join()
            if metrics and metrics.is_alive():
                metrics.stop()
            if client:
                client.close()
            # Not all stored yet: the collector drains for up to SHUTDOWN_DRAIN_SECONDS
            # on SIGTERM, and killing it sooner would leave rows for its next start.
            unstored = seen.load_end is not None and seen.drained is None
            shutdown_s, exit_code = stop_server(server, settings.shutdown_timeout_s + (
                SHUTDOWN_DRAIN_SECONDS if unstored else 0))
            procs.stop()

        stored: int | None = None
        db_mib = spool_mib = None
        if name == "collector":
            db_mib = size_mib([p for p in workdir.iterdir() if p.is_file()
                               and p.name.startswith(server.db.name)])
            spool_mib = size_mib([p for p in workdir.iterdir() if p.is_dir()
                                  and p.name.startswith(server.db.name)])
            try:
                stored = count_stored(server.db)
            except Exception as exc:  # any store failure is reported, the run goes on
                print(f"[{name} run {run}] cannot count spans in {server.db}: {exc}",
                      file=sys.stderr)
        if exit_code != 0:
            print(f"[{name} run {run}] server exit code {exit_code}; log tail:\n"
                  f"{tail(server.log)}", file=sys.stderr)

    cpu = procs.cpu_between(cpu0, cpu1)
    others = (busy1 - busy0) - cpu.total - (gen_cpu1 - gen_cpu0) - (own1 - own0)
    return _result(name, run, settings, gen_result, seen, metrics, others=others,
                   window=t1 - t0, cpu=cpu,
                   gen_cpu=gen_cpu1 - gen_cpu0, peaks=(procs.peak_rss, procs.peak_main_rss),
                   stop=(shutdown_s, exit_code), stored=stored, sizes=(db_mib, spool_mib),
                   t0=t0)


def _result(name: str, run: int, settings: BenchSettings, r: GeneratorResult,
            seen: _Observed, metrics: MetricsSampler | None, *, others: float, window: float,
            cpu: CpuSplit, gen_cpu: float, peaks: tuple[int, int],
            stop: tuple[float, int | None], stored: int | None,
            sizes: tuple[float | None, float | None], t0: float) -> RunResult:
    """Put one run's observations together."""
    codes = dict(r.error_codes)
    unavailable = codes.pop("UNAVAILABLE", 0)
    start, end, last = seen.start, seen.load_end, seen.last
    stored_load = stored_overall = peak_backlog = drain_s = None
    if start and end and last:
        stored_load = (end.stored - start.stored) / (end.t - start.t)
        stored_overall = (last.stored - start.stored) / max(last.t - start.t, 1e-9)
        samples = [*(metrics.samples if metrics else []), end, last]
        peak_backlog = max(s.backlog_bytes for s in samples) / MB
        drain_s = seen.drained.t - end.t if seen.drained else None
    return RunResult(
        server=name, run=run,
        spans_per_s=r.spans_acked / r.elapsed_s,
        mb_per_s=r.bytes_acked / r.elapsed_s / MB,
        stored_load_spans_per_s=stored_load, stored_overall_spans_per_s=stored_overall,
        peak_backlog_mb=peak_backlog, drain_s=drain_s,
        p50_s=percentile(r.rpc_latencies_s, 50),
        p99_s=percentile(r.rpc_latencies_s, 99),
        max_s=max(r.rpc_latencies_s, default=0.0),
        requests_acked=r.requests_acked,
        delivery_p99_s=percentile(r.delivery_latencies_s, 99),
        worst_window_spans_per_s=worst_window(r.acks, settings.duration_s),
        cpu_percent=100 * cpu.total / window,
        cpu_main_percent=100 * cpu.main / window,
        cpu_children_percent=100 * cpu.children / window,
        drain_cpu_main_percent=seen.drain_cpu[0] if seen.drain_cpu else None,
        drain_cpu_children_percent=seen.drain_cpu[1] if seen.drain_cpu else None,
        peak_rss_mib=peaks[0] / MIB, peak_main_rss_mib=peaks[1] / MIB,
        generator_cpu_percent=100 * gen_cpu / window,
        others_cpu_percent=100 * others / window,
        spans_acked=r.spans_acked,
        spans_accepted=last.accepted if last else None,
        spans_stored_metric=last.stored if last else None,
        spans_duplicates=last.duplicates if last else None,
        spans_stored=stored, spans_rejected=r.spans_rejected,
        spans_failed=r.spans_failed, unavailable=unavailable, other_errors=codes,
        retries=r.retries, retry_info=r.retry_info_seen,
        metrics_errors=metrics.errors if metrics else 0,
        shutdown_s=stop[0], exit_code=stop[1], db_mib=sizes[0], spool_mib=sizes[1],
        elapsed_s=r.elapsed_s, avg_span_bytes=r.avg_span_bytes,
        metrics=[(round(s.t - t0, 3), s.accepted, s.stored, s.backlog_bytes)
                 for s in (metrics.samples if metrics else [])],
    )


def _parse_args(argv: list[str] | None) -> BenchSettings:
    """Build the settings from the command line (the only place they come from)."""
    p = argparse.ArgumentParser(
        prog="collector_load.py",
        description="Benchmark the tracemill collector against a parse-only gRPC baseline "
                    "with realistic OTLP GenAI spans: acknowledged and stored-as-rows rates, "
                    "and that every acknowledged span is stored.",
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
    p.add_argument("--store-timeout", type=float, default=600.0,
                   help="after the load, how long to wait for the collector to store every "
                        "accepted span as rows before SIGTERM, s (default 600)")
    p.add_argument("--startup-timeout", type=float, default=120.0,
                   help="how long to wait for the server's ready file, s (default 120)")
    p.add_argument("--shutdown-timeout", type=float, default=120.0,
                   help="how long to wait for exit after SIGTERM before SIGKILL, s; "
                        f"{SHUTDOWN_DRAIN_SECONDS} s more when --store-timeout was hit "
                        "(default 120)")
    p.add_argument("--collector-cmd",
                   default=f"{shlex.quote(sys.executable)} -m tracemill serve",
                   help="command that starts the collector, e.g. with --decode-workers N; it "
                        "runs in an empty temporary directory (use absolute paths) and the "
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
        store_timeout_s=a.store_timeout,
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
            print(format_run(result), file=sys.stderr, flush=True)
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
        for name in settings.servers:
            print(f"{name}: {shlex.join(settings.commands[name])}")
        print(f"server environment: TRACEMILL_* cleared, TRACEMILL_SHUTDOWN_DRAIN_SECONDS="
              f"{SHUTDOWN_DRAIN_SECONDS}; working directory: an empty temporary one")
        print(format_table(results, summary))
    if settings.check and not all(summary.targets.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
