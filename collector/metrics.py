"""The collector's self-metrics, rendered in the Prometheus text exposition format.

Item counters are per signal (``traces`` counts spans, ``logs`` log records) and outcome:
received, rejected (bad content, never stored), accepted (acknowledged: durable in the
spool), stored (new rows), duplicates (re-delivered, not stored again). Request counters
are per transport and outcome. Gauges: queue bytes, its capacity, and the spool backlog
(acknowledged bytes not yet rows), and the requests moved to the dead-letter file because
they cannot be decoded. Histograms: spool fsync and store commit latency.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_OUTCOMES = ("received", "rejected", "accepted", "stored", "duplicates")
_HISTOGRAMS = {
    "spool_write": "Time to append and fsync one group of requests to the spool.",
    "store_commit": "Time to insert and commit one group of spooled requests as rows.",
}


class Metrics:
    """Thread-safe counters, gauges and histograms."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, str], int] = defaultdict(int)
        self._requests: dict[tuple[str, str, str], int] = defaultdict(int)
        self._buckets = {name: [0] * len(_BUCKETS) for name in _HISTOGRAMS}
        self._sums = dict.fromkeys(_HISTOGRAMS, 0.0)
        self._counts = dict.fromkeys(_HISTOGRAMS, 0)
        self.queue_bytes = 0
        """Bytes of requests admitted and not yet durable."""
        self.queue_capacity = 0
        """The most bytes that may wait (max_queue_bytes)."""
        self.backlog: Callable[[], int] = lambda: 0
        """Spool bytes acknowledged and not yet stored as rows."""
        self.dead_letters: Callable[[], int] = lambda: 0
        """Spooled requests moved to the dead-letter file (they cannot be decoded)."""

    def add_items(self, signal: str, outcome: str, count: int) -> None:
        """Count spans or log records by outcome."""
        if count:
            with self._lock:
                self._items[(signal, outcome)] += count

    def add_request(self, signal: str, transport: str, outcome: str) -> None:
        """Count one export request by transport (grpc, http, file) and outcome."""
        with self._lock:
            self._requests[(signal, transport, outcome)] += 1

    def observe_commit(self, seconds: float) -> None:
        """Record one spool append + fsync."""
        self._observe("spool_write", seconds)

    def observe_store(self, seconds: float) -> None:
        """Record one materializer commit."""
        self._observe("store_commit", seconds)

    def _observe(self, name: str, seconds: float) -> None:
        with self._lock:
            self._sums[name] += seconds
            self._counts[name] += 1
            buckets = self._buckets[name]
            for index, bound in enumerate(_BUCKETS):
                if seconds <= bound:
                    buckets[index] += 1

    def items(self, signal: str, outcome: str) -> int:
        """The current value of one item counter."""
        with self._lock:
            return self._items.get((signal, outcome), 0)

    def render(self) -> str:
        """All metrics in the Prometheus text format (version 0.0.4)."""
        with self._lock:
            items = dict(self._items)
            requests = dict(self._requests)
            buckets = {name: list(values) for name, values in self._buckets.items()}
            sums, counts = dict(self._sums), dict(self._counts)
        lines = [
            "# HELP tracemill_items_total Spans (traces) and log records (logs) by outcome.",
            "# TYPE tracemill_items_total counter",
        ]
        for signal in ("traces", "logs"):
            for outcome in _OUTCOMES:
                value = items.get((signal, outcome), 0)
                lines.append(
                    f'tracemill_items_total{{signal="{signal}",outcome="{outcome}"}} {value}')
        lines += [
            "# HELP tracemill_requests_total Export requests by signal, transport and outcome.",
            "# TYPE tracemill_requests_total counter",
        ]
        for (signal, transport, outcome), value in sorted(requests.items()):
            lines.append(f'tracemill_requests_total{{signal="{signal}",transport="{transport}",'
                         f'outcome="{outcome}"}} {value}')
        lines += [
            "# HELP tracemill_queue_bytes Bytes of requests admitted and not yet durable.",
            "# TYPE tracemill_queue_bytes gauge",
            f"tracemill_queue_bytes {self.queue_bytes}",
            "# HELP tracemill_queue_capacity_bytes Most bytes that may wait before back-pressure.",
            "# TYPE tracemill_queue_capacity_bytes gauge",
            f"tracemill_queue_capacity_bytes {self.queue_capacity}",
            "# HELP tracemill_spool_backlog_bytes Acknowledged bytes not yet stored as rows.",
            "# TYPE tracemill_spool_backlog_bytes gauge",
            f"tracemill_spool_backlog_bytes {self.backlog()}",
            "# HELP tracemill_dead_letter_requests Spooled requests that could not be decoded, "
            "moved to the dead-letter file beside the spool.",
            "# TYPE tracemill_dead_letter_requests gauge",
            f"tracemill_dead_letter_requests {self.dead_letters()}",
        ]
        for name, text in _HISTOGRAMS.items():
            metric = f"tracemill_{name}_seconds"
            lines += [f"# HELP {metric} {text}", f"# TYPE {metric} histogram"]
            for bound, count in zip(_BUCKETS, buckets[name], strict=True):
                lines.append(f'{metric}_bucket{{le="{bound}"}} {count}')
            lines += [f'{metric}_bucket{{le="+Inf"}} {counts[name]}',
                      f"{metric}_sum {sums[name]:.6f}", f"{metric}_count {counts[name]}"]
        return "\n".join(lines) + "\n"
