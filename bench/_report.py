"""Results of the collector benchmark: per-run records, medians over runs, the printed table.

Rates and latencies are summarized as medians over runs, counts as sums. The collector
has two rates: *acknowledged* (the export is durable in the spool, which is when the
client gets OK) and *stored as rows* (the materializer has decoded the spooled request
and committed its rows to DuckDB). The baseline stores nothing, so it has only the first.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, fields

MIB = 1024 * 1024
MB = 1_000_000
WINDOW_S = 5.0

# Targets from the collector issue.
TARGET_SPANS_PER_S = 20_000.0
TARGET_P99_S = 1.0
TARGET_PEAK_RSS_BYTES = 1024 * MIB


@dataclass(frozen=True)
class RunResult:
    """One measured run of one server. ``None``: not applicable to this server (baseline)."""

    server: str
    """``baseline`` or ``collector``."""
    run: int
    """1-based run number."""
    spans_per_s: float
    """Acknowledged spans per second (from go to the last answer)."""
    mb_per_s: float
    """Acknowledged request payload, 10^6 bytes per second."""
    stored_load_spans_per_s: float | None
    """Spans stored as rows per second during the load window (``/metrics``)."""
    stored_overall_spans_per_s: float | None
    """Spans stored as rows divided by load window plus drain time."""
    peak_backlog_mb: float | None
    """Largest sampled spool backlog (acknowledged, not yet rows), 10^6 bytes."""
    drain_s: float | None
    """From the end of the load until every accepted span was stored (None: not within
    ``--store-timeout``, or no ``/metrics``)."""
    p50_s: float
    """Median Export latency (calls answered OK or timed out)."""
    p99_s: float
    """99th percentile Export latency (calls answered OK or timed out)."""
    max_s: float
    """Largest Export latency (calls answered OK or timed out)."""
    requests_acked: int
    """Export calls answered OK (the latency sample size, with timeouts)."""
    delivery_p99_s: float
    """99th percentile first-send-to-ack time, including retries."""
    worst_window_spans_per_s: float
    """Lowest acknowledged spans/s over consecutive 5 s windows of the load."""
    cpu_percent: float
    """Server process tree CPU during the load, % of one core."""
    cpu_main_percent: float
    """Of which the main process."""
    cpu_children_percent: float
    """Of which its child processes (decode workers)."""
    drain_cpu_main_percent: float | None
    """Main process CPU while draining the backlog after the load, % of one core."""
    drain_cpu_children_percent: float | None
    """Child processes' CPU while draining, % of one core."""
    peak_rss_mib: float
    """Server process tree peak RSS, MiB (load, drain and shutdown)."""
    peak_main_rss_mib: float
    """Main process alone, peak RSS, MiB."""
    generator_cpu_percent: float
    """Load generator CPU during the load, % of one core."""
    others_cpu_percent: float
    """CPU used during the load by everything else on the machine, % of one core: the
    machine's busy time minus server, generator and driver. Noise from other work."""
    spans_acked: int
    """Spans acknowledged to the generator."""
    spans_accepted: int | None
    """The collector's ``accepted`` counter at the end of the drain."""
    spans_stored_metric: int | None
    """The collector's ``stored`` counter at the end of the drain."""
    spans_duplicates: int | None
    """The collector's ``duplicates`` counter at the end of the drain."""
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
    retry_info: int
    """Error answers that carried a ``RetryInfo`` delay (which the generator honoured)."""
    metrics_errors: int
    """``/metrics`` reads that failed or timed out."""
    shutdown_s: float
    """SIGTERM to exit."""
    exit_code: int | None
    """Server exit status (None: had to be killed)."""
    db_mib: float | None
    """The DuckDB file and its WAL after exit, MiB."""
    spool_mib: float | None
    """What is left of the spool after exit, MiB."""
    elapsed_s: float
    """Load window used for the acknowledged rate."""
    avg_span_bytes: float
    """Mean serialized bytes per span."""
    metrics: list[tuple[float, int, int, int]] = field(default_factory=list)
    """``/metrics`` samples: (s since go, accepted, stored, backlog bytes); JSON only."""


def _median(values: list[float | None]) -> float | None:
    """Median, or None when any run has no value (a partial median would mislead)."""
    if not values or any(v is None for v in values):
        return None
    return float(statistics.median(v for v in values if v is not None))


def _total(values: list[int | None]) -> int | None:
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


_MEDIANS = ("spans_per_s", "mb_per_s", "stored_load_spans_per_s",
            "stored_overall_spans_per_s", "peak_backlog_mb", "drain_s", "p50_s", "p99_s",
            "max_s", "delivery_p99_s", "worst_window_spans_per_s", "cpu_percent",
            "cpu_main_percent", "cpu_children_percent", "drain_cpu_main_percent",
            "drain_cpu_children_percent", "peak_rss_mib", "peak_main_rss_mib",
            "generator_cpu_percent", "others_cpu_percent", "shutdown_s", "db_mib")
_TOTALS = ("requests_acked", "spans_acked", "spans_accepted", "spans_stored_metric",
           "spans_duplicates", "spans_stored", "spans_rejected", "spans_failed",
           "unavailable", "retries", "retry_info", "metrics_errors")


@dataclass(frozen=True)
class ServerSummary:
    """One server's results over all runs: medians of ``_MEDIANS``, sums of ``_TOTALS``.

    Field meanings are those of :class:`RunResult`; ``None`` when a run has no value.
    """

    runs: int
    spans_per_s: float | None
    mb_per_s: float | None
    stored_load_spans_per_s: float | None
    stored_overall_spans_per_s: float | None
    peak_backlog_mb: float | None
    drain_s: float | None
    p50_s: float | None
    p99_s: float | None
    max_s: float | None
    delivery_p99_s: float | None
    worst_window_spans_per_s: float | None
    cpu_percent: float | None
    cpu_main_percent: float | None
    cpu_children_percent: float | None
    drain_cpu_main_percent: float | None
    drain_cpu_children_percent: float | None
    peak_rss_mib: float | None
    peak_main_rss_mib: float | None
    generator_cpu_percent: float | None
    others_cpu_percent: float | None
    shutdown_s: float | None
    db_mib: float | None
    requests_acked: int | None
    spans_acked: int | None
    spans_accepted: int | None
    spans_stored_metric: int | None
    spans_duplicates: int | None
    spans_stored: int | None
    spans_rejected: int | None
    spans_failed: int | None
    unavailable: int | None
    retries: int | None
    retry_info: int | None
    metrics_errors: int | None
    not_drained: int
    """Runs whose backlog was not stored within ``--store-timeout``."""

    @classmethod
    def of(cls, runs: list[RunResult]) -> ServerSummary:
        """Summarize one server's runs."""
        values: dict[str, object] = {"runs": len(runs)}
        for name in _MEDIANS:
            values[name] = _median([getattr(r, name) for r in runs])
        for name in _TOTALS:
            values[name] = _total([getattr(r, name) for r in runs])
        values["not_drained"] = sum(
            r.drain_s is None and r.stored_load_spans_per_s is not None for r in runs)
        assert set(values) == {f.name for f in fields(cls)}
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Summary:
    """What the benchmark concludes."""

    baseline: ServerSummary | None
    """The parse-only ceiling, if measured."""
    collector: ServerSummary | None
    """The collector, if measured."""
    ratio_to_baseline: float | None
    """Median over runs of collector acknowledged spans/s over the same run's baseline."""
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
    cs = ServerSummary.of(coll) if coll else None
    if cs:
        targets = {
            f"acknowledged spans/s >= {TARGET_SPANS_PER_S:,.0f}": (
                (cs.spans_per_s or 0) >= TARGET_SPANS_PER_S),
            f"stored rows/s overall >= {TARGET_SPANS_PER_S:,.0f}": (
                (cs.stored_overall_spans_per_s or 0) >= TARGET_SPANS_PER_S),
            f"p99 <= {TARGET_P99_S * 1e3:.0f} ms": (
                cs.p99_s is not None and cs.p99_s <= TARGET_P99_S),
            f"peak RSS <= {TARGET_PEAK_RSS_BYTES // MIB} MiB": (
                cs.peak_rss_mib is not None and cs.peak_rss_mib * MIB <= TARGET_PEAK_RSS_BYTES),
            "stored >= acked, exit 0 (every run)": all(
                r.spans_stored is not None and r.spans_stored >= r.spans_acked
                and r.exit_code == 0 for r in coll),
        }
    return Summary(baseline=ServerSummary.of(base) if base else None, collector=cs,
                   ratio_to_baseline=ratio, targets=targets)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def worst_window(acks: list[tuple[float, int]], duration_s: float) -> float:
    """Lowest spans/s over consecutive whole 5 s windows (the whole run if shorter)."""
    window = min(WINDOW_S, duration_s)
    n = max(1, int(duration_s // window))
    buckets = [0] * n
    for t, spans in acks:
        i = int(t // window)
        if i < n:
            buckets[i] += spans
    return min(buckets) / window


def format_run(r: RunResult) -> str:
    """One line per run, for stderr."""
    line = (f"[{r.server} run {r.run}] acked {r.spans_per_s:,.0f} spans/s "
            f"({r.mb_per_s:.1f} MB/s)  ")
    if r.stored_load_spans_per_s is not None:
        drain = "not within --store-timeout" if r.drain_s is None else f"{r.drain_s:.1f} s"
        line += (f"stored {r.stored_load_spans_per_s:,.0f} spans/s during load, "
                 f"{r.stored_overall_spans_per_s or 0:,.0f} overall  "
                 f"backlog peak {r.peak_backlog_mb or 0:,.0f} MB  drain {drain}  ")
    stored = "n/a" if r.spans_stored is None else f"{r.spans_stored}"
    return line + (
        f"p50 {r.p50_s * 1e3:.0f} ms  p99 {r.p99_s * 1e3:.0f} ms  max {r.max_s * 1e3:.0f} ms  "
        f"cpu {r.cpu_percent:.0f}% (main {r.cpu_main_percent:.0f}%, children "
        f"{r.cpu_children_percent:.0f}%)  others {r.others_cpu_percent:.0f}%  "
        f"rss {r.peak_rss_mib:.0f} MiB  "
        f"acked {r.spans_acked}  count(*) {stored}  unavailable {r.unavailable}  "
        f"retries {r.retries}  exit {r.exit_code}")


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
        return f"{label:<42}" + "".join(f"{c:>14}" for c in cells)

    lines = [
        f"{'median over runs':<42}" + "".join(f"{n:>14}" for n, _ in columns),
        row("runs", "runs", "d"),
        row("spans/s acknowledged (durable in spool)", "spans_per_s", ",.0f"),
        row("spans/s stored as rows, during load", "stored_load_spans_per_s", ",.0f"),
        row("spans/s stored as rows, load + drain", "stored_overall_spans_per_s", ",.0f"),
        row("MB/s acknowledged (payload)", "mb_per_s", ".1f"),
        row("peak spool backlog (MB)", "peak_backlog_mb", ",.0f"),
        row("drain: load end to all stored (s)", "drain_s", ".1f"),
        row("Export latency p50 (ms)", "p50_s", ".0f", 1e3),
        row("Export latency p99 (ms)", "p99_s", ".0f", 1e3),
        row("Export latency max (ms)", "max_s", ".0f", 1e3),
        row("delivery p99 incl. retries (ms)", "delivery_p99_s", ".0f", 1e3),
        row("worst 5 s window acked (spans/s)", "worst_window_spans_per_s", ",.0f"),
        row("server CPU during load (% of a core)", "cpu_percent", ".0f"),
        row("  main process", "cpu_main_percent", ".0f"),
        row("  child processes (decode workers)", "cpu_children_percent", ".0f"),
        row("server CPU during drain: main process", "drain_cpu_main_percent", ".0f"),
        row("  child processes (decode workers)", "drain_cpu_children_percent", ".0f"),
        row("server peak RSS, process tree (MiB)", "peak_rss_mib", ".0f"),
        row("  main process alone (MiB)", "peak_main_rss_mib", ".0f"),
        row("generator CPU during load (% of a core)", "generator_cpu_percent", ".0f"),
        row("other processes' CPU during load (%)", "others_cpu_percent", ".0f"),
        row("SIGTERM to exit (s)", "shutdown_s", ".1f"),
        row("database size after exit (MiB)", "db_mib", ".0f"),
        "totals over runs",
        row("  Export calls answered OK", "requests_acked", "d"),
        row("  spans acknowledged (generator)", "spans_acked", "d"),
        row("  spans accepted (/metrics)", "spans_accepted", "d"),
        row("  spans stored (/metrics)", "spans_stored_metric", "d"),
        row("  spans duplicates (/metrics)", "spans_duplicates", "d"),
        row("  spans stored (count(*) FROM spans)", "spans_stored", "d"),
        row("  spans rejected (partial_success)", "spans_rejected", "d"),
        row("  spans never acknowledged", "spans_failed", "d"),
        row("  UNAVAILABLE answers (backpressure)", "unavailable", "d"),
        row("  retries (same request resent)", "retries", "d"),
        row("  answers carrying RetryInfo", "retry_info", "d"),
        row("  failed /metrics reads", "metrics_errors", "d"),
        row("  runs not drained in --store-timeout", "not_drained", "d"),
    ]
    if summary.ratio_to_baseline is not None:
        lines.append(f"{'collector / baseline acked spans/s':<42}"
                     f"{summary.ratio_to_baseline:>28.2f}")
    if summary.targets:
        lines.append("targets (collector)")
        lines += [f"  {k:<40}{'PASS' if ok else 'FAIL':>28}" for k, ok in summary.targets.items()]
    others = [f"{r.server} run {r.run}: {r.other_errors}" for r in results if r.other_errors]
    if others:
        lines.append("other error codes: " + "; ".join(others))
    return "\n".join(lines)
