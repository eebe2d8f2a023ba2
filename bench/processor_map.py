"""Benchmark: stored spans → conversations and failure map, full and incremental.

Builds (once, cached under --cache) a DuckDB store of about --spans synthetic GenAI spans
(tests/support/synthetic.py: ~5 spans per conversation, planted failures over two model
versions) through the real collector pipeline, holding back --increment spans. Each run
copies the store, then measures on the copy:

* scan ceiling: ``SELECT count(*), sum(length(attributes)) FROM spans``, which reads
  every span's attributes once;
* full: ``process()`` from nothing: conversations, failure map, tool catalog;
* incremental: the held-back spans are stored, then ``process()`` again.

It prints wall time, CPU seconds of this process and of the worker processes it starts,
peak RSS of this process plus its workers (sampled every 50 ms), and the ratio of full
processing to the scan ceiling; medians over --runs. The machine is shared: wall time
varies with what else runs, CPU seconds much less. Targets (issue 3): full ≤ 60 s and ≤ 2 GiB for
1,000,000 spans; incremental ≤ 2 s for 10,000 new spans.

    python bench/processor_map.py                 # 1,000,000 spans, 3 runs
    python bench/processor_map.py --spans 100000 --runs 1
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collector.metrics import Metrics
from collector.pipeline import Pipeline, spool_folder
from processor.run import process
from tests.support.synthetic import scaled_stream
from tracemill.config import Settings
from tracemill.store import open_store

MEMORY = Settings().db_memory_limit
"""DuckDB's memory limit, as the command line sets it."""


class PeakRss:
    """Samples the RSS of this process plus its child processes (the worker processes that
    build conversations) every 50 ms; the peak of the sum is what the machine must hold."""

    def __init__(self) -> None:
        self.peak = 0
        """Largest sum seen, in bytes."""
        self.peak_main = 0
        """Largest RSS of this process alone."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        children: list[psutil.Process] = []
        listed = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now - listed > 0.5:  # listing children walks /proc: not every 50 ms
                children, listed = me.children(recursive=True), now
            main = me.memory_info().rss
            total = main
            for child in children:
                with contextlib.suppress(psutil.Error):  # exited since it was listed
                    total += child.memory_info().rss
            self.peak_main = max(self.peak_main, main)
            self.peak = max(self.peak, total)
            time.sleep(0.05)

    def __enter__(self) -> PeakRss:
        self.peak = self.peak_main = psutil.Process().memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) used so far by this process and by its children that
    have exited (the worker pool is shut down before process() returns)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def _store_requests(db: Path, requests: list[bytes] | itertools.islice[bytes]) -> int:
    store = open_store(db)
    pipeline = Pipeline(Settings(db=db, decode_workers=2), store, Metrics())
    pipeline.start()
    count = 0
    try:
        for request in requests:
            pipeline.intake.export_blocking("traces", request, "bench")
            count += 1
    finally:
        pipeline.close(drain_all=True)
        store.checkpoint()
        store.close()
    return count


def build(cache: Path, spans: int, increment: int, seed: int) -> tuple[Path, list[bytes]]:
    """The base store (cached) and the held-back requests."""
    requests = scaled_stream(seed, spans)
    per_request = 512
    held = max(1, increment // per_request)
    base = cache / f"base-{seed}-{spans}-{increment}.duckdb"
    total = []
    if not base.exists():
        partial = base.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        shutil.rmtree(spool_folder(partial), ignore_errors=True)
        everything = list(requests)
        total = everything[-held:]
        started = time.perf_counter()
        _store_requests(partial, everything[:-held])
        print(f"built {base.name} in {time.perf_counter() - started:.0f}s", flush=True)
        shutil.rmtree(spool_folder(partial), ignore_errors=True)
        partial.rename(base)
    else:
        total = list(requests)[-held:]
    return base, total


def run_once(base: Path, held: list[bytes], work: Path) -> dict[str, float]:
    db = work / "run.duckdb"
    for path in (db, db.with_name(db.name + ".wal")):
        path.unlink(missing_ok=True)
    shutil.rmtree(spool_folder(db), ignore_errors=True)
    shutil.copy(base, db)
    store = open_store(db, memory_limit=MEMORY)
    started = time.perf_counter()
    spans, _ = store.query("SELECT count(*), sum(length(attributes)) FROM spans")[0]
    scan = time.perf_counter() - started
    cpu_before = _cpu_seconds()
    with PeakRss() as rss:
        result = process(store)
    cpu_after = _cpu_seconds()
    store.close()
    full = result.seconds
    _store_requests(db, held)
    store = open_store(db, memory_limit=MEMORY)
    incremental = process(store)
    store.close()
    return {"spans": spans, "conversations": result.conversations_rebuilt, "scan_s": scan,
            "full_s": full, "peak_rss_mib": rss.peak / 2**20,
            "peak_rss_main_mib": rss.peak_main / 2**20,
            "cpu_main_s": cpu_after[0] - cpu_before[0],
            "cpu_workers_s": cpu_after[1] - cpu_before[1],
            "incremental_s": incremental.seconds,
            "incremental_spans": incremental.spans_read,
            "incremental_conversations": incremental.conversations_rebuilt,
            "cells": len(result.cells)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spans", type=int, default=1_000_000, help="Spans in the store.")
    parser.add_argument("--increment", type=int, default=10_000,
                        help="Spans stored between the full and the incremental run.")
    parser.add_argument("--runs", type=int, default=3, help="Runs; medians are printed.")
    parser.add_argument("--seed", type=int, default=1, help="Synthetic stream seed.")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "tracemill-bench",
                        help="Where the base store is kept between invocations.")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    base, held = build(args.cache, args.spans, args.increment, args.seed)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for index in range(args.runs):
            figures = run_once(base, held, Path(work))
            results.append(figures)
            print(f"run {index + 1}: " + ", ".join(f"{k} {v:,.2f}" if isinstance(v, float)
                                                   else f"{k} {v:,}" for k, v in figures.items()),
                  flush=True)
    median = {key: statistics.median(r[key] for r in results) for key in results[0]}
    print("\nmedian over runs")
    print(f"  spans stored                {median['spans']:>12,.0f}")
    print(f"  conversations               {median['conversations']:>12,.0f}")
    print(f"  scan ceiling (s)            {median['scan_s']:>12.2f}")
    print(f"  full processing (s)         {median['full_s']:>12.2f}   target <= 60")
    print(f"  full / scan ceiling         {median['full_s'] / median['scan_s']:>12.1f}x")
    print(f"  CPU main + workers (s)      {median['cpu_main_s']:>12.1f} + "
          f"{median['cpu_workers_s']:.1f}   (the machine's share of the wall time)")
    print(f"  peak RSS, with workers (MiB){median['peak_rss_mib']:>12.0f}   target <= 2048 "
          f"(main process alone {median['peak_rss_main_mib']:.0f})")
    print(f"  incremental (s)             {median['incremental_s']:>12.2f}   target <= 2 "
          f"({median['incremental_spans']:,.0f} spans, "
          f"{median['incremental_conversations']:,.0f} conversations rebuilt)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
