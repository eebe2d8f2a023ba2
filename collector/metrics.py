"""The collector's self-metrics, rendered in the Prometheus text exposition format.

Counters are per signal (``traces`` counts spans, ``logs`` counts log records):
received, accepted (newly stored), rejected (refused for bad content), duplicates (already
stored; not stored again), and requests per transport and outcome. Gauges: queue bytes
and its capacity. A histogram of commit latency.
"""

from __future__ import annotations

import threading
from collections import defaultdict

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Thread-safe counters, gauges and one histogram."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, str], int] = defaultdict(int)
        self._requests: dict[tuple[str, str, str], int] = defaultdict(int)
        self._latency_counts = [0] * len(_LATENCY_BUCKETS)
        self._latency_sum = 0.0
        self._latency_total = 0
        self.queue_bytes = 0
        """Bytes of requests admitted and not yet committed."""
        self.queue_capacity = 0
        """The most bytes that may wait (max_queue_bytes)."""

    def add_items(self, signal: str, outcome: str, count: int) -> None:
        """Count ``count`` spans or log records as received/accepted/rejected/duplicates."""
        if count:
            with self._lock:
                self._items[(signal, outcome)] += count

    def add_request(self, signal: str, transport: str, outcome: str) -> None:
        """Count one export request by transport (grpc, http, file) and outcome."""
        with self._lock:
            self._requests[(signal, transport, outcome)] += 1

    def observe_commit(self, seconds: float) -> None:
        """Record how long one group commit took."""
        with self._lock:
            self._latency_sum += seconds
            self._latency_total += 1
            for index, bound in enumerate(_LATENCY_BUCKETS):
                if seconds <= bound:
                    self._latency_counts[index] += 1

    def items(self, signal: str, outcome: str) -> int:
        """The current value of one item counter."""
        with self._lock:
            return self._items.get((signal, outcome), 0)

    def render(self) -> str:
        """All metrics in the Prometheus text format (version 0.0.4)."""
        lines = [
            "# HELP tracemill_items_total Spans (traces) and log records (logs) by outcome.",
            "# TYPE tracemill_items_total counter",
        ]
        with self._lock:
            items = dict(self._items)
            requests = dict(self._requests)
            counts = list(self._latency_counts)
            latency_sum, latency_total = self._latency_sum, self._latency_total
        for signal in ("traces", "logs"):
            for outcome in ("received", "accepted", "rejected", "duplicates"):
                value = items.get((signal, outcome), 0)
                lines.append(
                    f'tracemill_items_total{{signal="{signal}",outcome="{outcome}"}} {value}'
                )
        lines += [
            "# HELP tracemill_requests_total Export requests by signal, transport and outcome.",
            "# TYPE tracemill_requests_total counter",
        ]
        for (signal, transport, outcome), value in sorted(requests.items()):
            lines.append(
                f'tracemill_requests_total{{signal="{signal}",transport="{transport}",'
                f'outcome="{outcome}"}} {value}'
            )
        lines += [
            "# HELP tracemill_queue_bytes Bytes of requests admitted and not yet committed.",
            "# TYPE tracemill_queue_bytes gauge",
            f"tracemill_queue_bytes {self.queue_bytes}",
            "# HELP tracemill_queue_capacity_bytes Most bytes that may wait before back-pressure.",
            "# TYPE tracemill_queue_capacity_bytes gauge",
            f"tracemill_queue_capacity_bytes {self.queue_capacity}",
            "# HELP tracemill_commit_seconds Time of one group commit to the store.",
            "# TYPE tracemill_commit_seconds histogram",
        ]
        for bound, count in zip(_LATENCY_BUCKETS, counts, strict=True):
            lines.append(f'tracemill_commit_seconds_bucket{{le="{bound}"}} {count}')
        lines += [
            f'tracemill_commit_seconds_bucket{{le="+Inf"}} {latency_total}',
            f"tracemill_commit_seconds_sum {latency_sum:.6f}",
            f"tracemill_commit_seconds_count {latency_total}",
        ]
        return "\n".join(lines) + "\n"
