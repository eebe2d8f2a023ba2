"""Benchmark: does the failure map find the planted situations? Precision and recall per status.

For each seed, builds the synthetic production stream (tests/support/synthetic.py: six
planted cells — two new, two persistent, two fixed — in a background that fails 4% of the
time, with decoys sharing each planted coordinate), stores it through the real collector
pipeline, runs ``process()`` and compares the map's statuses with the planted truth:

* recall of a status: planted cells of that status that the map gives that status;
* precision of a status: cells the map gives that status that were planted with it
  (every other cell holds no failure of its own, so any other flagged cell is a false
  alarm — usually a pair that shares a coordinate with a planted cell).

Printed per seed and summed over seeds (micro-averaged).

    python bench/processor_precision.py                     # seeds 0-9, 400 per version
    python bench/processor_precision.py --seeds 3 --per-version 800
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from processor.run import ProcessOptions, process
from tests.support.pipeline import store_requests
from tests.support.synthetic import production_stream
from tracemill.store import open_store

STATUSES = ("new", "persistent", "fixed")


def measure(seed: int, per_version: int, work: Path) -> tuple[Counter[str], Counter[str],
                                                              Counter[str]]:
    """(true positives, flagged, planted) per status for one seed."""
    stream = production_stream(seed=seed, conversations_per_version=per_version)
    db = work / f"seed{seed}.duckdb"
    store_requests(db, stream.requests, source="bench")
    store = open_store(db)
    try:
        process(store, ProcessOptions())
        rows = store.query("SELECT axis_a, value_a, axis_b, value_b, status FROM failure_map "
                           "WHERE axis_b <> '*'")
    finally:
        store.close()
    found = {((a, va), (b, vb)): status for a, va, b, vb, status in rows}
    hits: Counter[str] = Counter()
    flagged: Counter[str] = Counter(s for s in found.values() if s in STATUSES)
    planted: Counter[str] = Counter(stream.truth.values())
    for cell, status in stream.truth.items():
        if found.get(cell) == status:
            hits[status] += 1
    return hits, flagged, planted


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f} ({a}/{b})" if b else "n/a"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="Seeds 0..N-1.")
    parser.add_argument("--per-version", type=int, default=400,
                        help="Conversations per model version.")
    args = parser.parse_args()
    hits: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    planted: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as work:
        for seed in range(args.seeds):
            h, f, p = measure(seed, args.per_version, Path(work))
            hits.update(h)
            flagged.update(f)
            planted.update(p)
            print(f"seed {seed}: " + "; ".join(
                f"{s} recall {_ratio(h[s], p[s])} precision {_ratio(h[s], f[s])}"
                for s in STATUSES), flush=True)
    print(f"\nover {args.seeds} seeds, {args.per_version} conversations per version "
          "(pair cells; single coordinates not counted)")
    print(f"  {'status':<11}{'recall':>18}{'precision':>18}")
    for status in STATUSES:
        print(f"  {status:<11}{_ratio(hits[status], planted[status]):>18}"
              f"{_ratio(hits[status], flagged[status]):>18}")
    total_hits, total_planted = sum(hits.values()), sum(planted.values())
    print(f"  {'all':<11}{_ratio(total_hits, total_planted):>18}"
          f"{_ratio(total_hits, sum(flagged.values())):>18}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
