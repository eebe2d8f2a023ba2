"""Benchmark: stored spans → conversations and failure map, full and incremental.

Builds (once, cached under --cache) a DuckDB store of about --spans synthetic GenAI spans
(tests/support/synthetic.py: ~5 spans per conversation, planted failures over two model
versions) through the real collector pipeline, holding back --increment spans. Each run
copies the store, then measures on the copy:

* scan ceiling: ``SELECT count(*), sum(length(attributes)) FROM spans``, which reads
  every span's attributes once;
* full: ``process()`` from nothing: conversations, failure map, tool catalog;
* incremental: the held-back spans are stored, then ``process()`` again.

It prints wall time, peak RSS of this process, and the ratio of full processing to the
scan ceiling; medians over --runs. Targets (issue 3): full ≤ 60 s and ≤ 2 GiB for
1,000,000 spans; incremental ≤ 2 s for 10,000 new spans.

    python bench/processor_map.py                 # 1,000,000 spans, 3 runs
    python bench/processor_map.py --spans 100000 --runs 1
"""

from __future__ import annotations

import argparse
import itertools
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
    """Samples this process's RSS every 50 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            self.peak = max(self.peak, me.memory_info().rss)
            time.sleep(0.05)

    def __enter__(self) -> PeakRss:
        self.peak = psutil.Process().memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


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
    with PeakRss() as rss:
        result = process(store)
    store.close()
    full = result.seconds
    _store_requests(db, held)
    store = open_store(db, memory_limit=MEMORY)
    incremental = process(store)
    store.close()
    return {"spans": spans, "conversations": result.conversations_rebuilt, "scan_s": scan,
            "full_s": full, "peak_rss_mib": rss.peak / 2**20,
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
    print(f"  peak RSS (MiB)              {median['peak_rss_mib']:>12.0f}   target <= 2048")
    print(f"  incremental (s)             {median['incremental_s']:>12.2f}   target <= 2 "
          f"({median['incremental_spans']:,.0f} spans, "
          f"{median['incremental_conversations']:,.0f} conversations rebuilt)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
