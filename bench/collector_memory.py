"""Peak memory of the collector storing one request of each worst shape.

For each shape (tiny spans, huge attributes, deep nesting) it builds one
ExportTraceServiceRequest of about ``--megabytes`` on the wire, stores it through the real
pipeline (intake check, spool, decode, insert) in a fresh process, and prints the peak RSS
growth (the kernel's high-water mark) and the peak RSS of the whole process next to the
request size. The issue's worst case is
64 MiB of tiny spans (1.6M); keep runs small on a shared machine:

    .venv/bin/python bench/collector_memory.py --megabytes 8
    .venv/bin/python bench/collector_memory.py --megabytes 62 --shapes tiny   # the real one

DuckDB's buffer pool counts too, up to ``--db-memory-limit`` (serve's default 512MB).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collector import native  # noqa: E402
from tests.collector.memory_probe import SHAPES, build  # noqa: E402


def _spans_for(shape: str, megabytes: float) -> int:
    sample = 50
    per_span = len(build(shape, sample)) / sample
    return max(1, int(megabytes * 1e6 / per_span))


def main() -> int:
    """Measure each shape once and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=8.0,
                        help="Wire size of each request (default 8; the limit is 64 MiB).")
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help=f"Comma-separated shapes (default {','.join(SHAPES)}).")
    parser.add_argument("--db-memory-limit", default="512MB",
                        help="DuckDB memory_limit of the measured process (default 512MB).")
    args = parser.parse_args()
    print(f"decoder: {'compiled (collector/_fastdecode.c)' if native.AVAILABLE else 'pure Python'}"
          f", DuckDB memory_limit {args.db_memory_limit}")
    print(f"{'shape':<11}{'spans':>10}{'wire MB':>9}{'peak RSS growth MB':>20}"
          f"{'x wire':>8}{'B/span':>9}{'peak RSS MB':>13}{'seconds':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for shape in args.shapes.split(","):
            spans = _spans_for(shape, args.megabytes)
            payload = Path(folder) / f"{shape}.pb"
            # built in a process of its own: a child's ru_maxrss starts at its parent's,
            # so a large request built here would hide the measured process's peak
            subprocess.run([sys.executable, "-m", "tests.collector.memory_probe", "build", shape,
                            str(spans), str(payload)], cwd=ROOT, check=True)
            result = subprocess.run(
                [sys.executable, "-m", "tests.collector.memory_probe", "measure",
                 str(payload), str(Path(folder) / f"{shape}.duckdb"), args.db_memory_limit],
                capture_output=True, text=True, cwd=ROOT, check=False)
            if result.returncode != 0:
                print(f"{shape}: failed\n{result.stderr}", file=sys.stderr)
                return 1
            measured = json.loads(result.stdout)
            growth = measured["growth_bytes"]
            print(f"{shape:<11}{spans:>10}{measured['payload_bytes'] / 1e6:>9.1f}"
                  f"{growth / 2**20:>20.0f}{growth / measured['payload_bytes']:>8.1f}"
                  f"{growth / spans:>9.0f}{measured['peak_rss_bytes'] / 2**20:>13.0f}"
                  f"{measured['seconds']:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
