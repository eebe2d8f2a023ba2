"""Disk per stored span: the figure behind deploy/CAPACITY.md's disk rows.

Stores ``--requests`` export requests of the collector benchmark's GenAI spans
(bench/_spans.py: 512 spans of ~3.1 KB each per request, 8 to a trace, unique ids) through
the real pipeline into a fresh DuckDB file, closes it (checkpoint) and prints the file's
size per span next to the OTLP payload per span. Run from the repository root:

    python deploy/capacity_store_bytes.py --requests 200
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Measure and print one line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200,
                        help="Export requests of 512 spans to store (default 200).")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    import duckdb
    from _spans import build_templates  # type: ignore[import-not-found]

    from tests.support.pipeline import store_requests

    segments, payload = build_templates(seed=1, templates=8, spans_per_request=512,
                                        spans_per_trace=8)

    def bodies() -> Iterator[bytes]:
        for number in range(1, args.requests + 1):  # the request number makes ids unique
            yield number.to_bytes(4, "big").join(segments[number % len(segments)])

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "store.duckdb"
        started = time.monotonic()
        store_requests(db, bodies())
        seconds = time.monotonic() - started
        connection = duckdb.connect(str(db), read_only=True)
        spans = connection.execute("SELECT count(*) FROM spans").fetchone()[0]  # type: ignore[index]
        # used blocks hold the data; a file can also carry blocks freed by checkpoints
        _, _, block_size, _, used_blocks, *_ = connection.execute(
            "PRAGMA database_size").fetchone()  # type: ignore[misc]
        connection.close()
        size = sum(p.stat().st_size for p in Path(folder).iterdir() if p.is_file())
    used = block_size * used_blocks
    print(f"{spans} spans of {payload:.0f} B OTLP payload each: {used / spans:.0f} B per span "
          f"in used blocks, {size / spans:.0f} B per span of file ({size / 2**20:.0f} MiB); "
          f"stored in {seconds:.1f} s in-process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
