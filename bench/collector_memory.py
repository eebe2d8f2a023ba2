"""Peak memory of the collector storing one request of each worst shape.

For each shape (tiny spans, huge attributes, deep nesting) it builds one
ExportTraceServiceRequest of about ``--megabytes`` on the wire, stores it through the real
pipeline (intake check, spool, decode, insert) in a fresh process, and prints the peak RSS
growth (the kernel's high-water mark) and the peak RSS of the whole process next to the
request size. The issue's worst case is
64 MiB of tiny spans (1.6M); keep runs small on a shared machine:

    .venv/bin/python bench/collector_memory.py --megabytes 8
    .venv/bin/python bench/collector_memory.py --megabytes 62 --shapes tiny   # the real one
    .venv/bin/python bench/collector_memory.py --megabytes 62 --pure-python  # the fallback

DuckDB's buffer pool counts too, up to ``--db-memory-limit`` (serve's default 512MB).
``--pure-python`` measures the collector as it runs where the compiled decoder could not
be built (the measured process imports without ``collector._fastdecode``).
``--decode-only`` measures the intake's check and the decoding in chunks of 20,000 rows
(what the materializer does) without DuckDB, so the decoder's own peak shows; it also
offers the ``logs`` shape (minimal log records, always decoded in Python):

    .venv/bin/python bench/collector_memory.py --megabytes 62 --pure-python --decode-only \
        --shapes tiny,attributes,nested,logs
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

_PURE_PYTHON = (
    "import runpy, sys\n"
    "sys.modules['collector._fastdecode'] = None  # as if it had not been built\n"
    "sys.argv[0] = 'memory_probe'\n"
    "from collector import native\n"
    "assert not native.AVAILABLE\n"
    "runpy.run_module('tests.collector.memory_probe', run_name='__main__')\n")
"""Runs the probe in a process where the compiled decoder does not import."""


_DECODE_ONLY = (
    "import json, resource, sys, time\n"
    "if sys.argv[3] == 'python':\n"
    "    sys.modules['collector._fastdecode'] = None\n"
    "from collector.checks import check_request\n"
    "from collector.decode import decode_chunks\n"
    "payload = open(sys.argv[1], 'rb').read()\n"
    "signal = sys.argv[2]\n"
    "def peak(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
    "baseline, started = peak(), time.perf_counter()\n"
    "check = check_request(signal, payload)\n"
    "rows = sum(b.rows.num_rows for b in decode_chunks(signal, payload, 1, 20_000))\n"
    "assert rows == check.received - check.rejected\n"
    "print(json.dumps({'spans': check.received, 'payload_bytes': len(payload),\n"
    "                  'peak_rss_bytes': peak(), 'growth_bytes': max(peak() - baseline, 0),\n"
    "                  'seconds': time.perf_counter() - started}))\n")
"""Checks and decodes one request (argv: FILE SIGNAL python|compiled); prints JSON."""
_BUILD_LOGS = (
    "import os, sys\n"
    "from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import "
    "ExportLogsServiceRequest\n"
    "request = ExportLogsServiceRequest()\n"
    "scope = request.resource_logs.add().scope_logs.add()\n"
    "for index in range(int(sys.argv[1])):\n"
    "    scope.log_records.add(time_unix_nano=1_700_000_000_000_000_000 + index,\n"
    "                          span_id=os.urandom(8))\n"
    "open(sys.argv[2], 'wb').write(request.SerializeToString())\n")
"""Writes one request of N minimal log records (argv: N FILE)."""
_LOG_RECORD_BYTES = 21
"""Wire bytes of one minimal log record of _BUILD_LOGS (tag, length, time, span id)."""


def _spans_for(shape: str, megabytes: float) -> int:
    if shape == "logs":
        return max(1, int(megabytes * 1e6 / _LOG_RECORD_BYTES))
    sample = 50
    per_span = len(build(shape, sample)) / sample
    return max(1, int(megabytes * 1e6 / per_span))


def _build(shape: str, spans: int, payload: Path) -> None:
    # built in a process of its own: a child's ru_maxrss starts at its parent's, so a
    # large request built here would hide the measured process's peak
    command = ([sys.executable, "-c", _BUILD_LOGS, str(spans), str(payload)]
               if shape == "logs" else
               [sys.executable, "-m", "tests.collector.memory_probe", "build", shape,
                str(spans), str(payload)])
    subprocess.run(command, cwd=ROOT, check=True)


def main() -> int:
    """Measure each shape once and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=8.0,
                        help="Wire size of each request (default 8; the limit is 64 MiB).")
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help=f"Comma-separated shapes (default {','.join(SHAPES)}).")
    parser.add_argument("--db-memory-limit", default="512MB",
                        help="DuckDB memory_limit of the measured process (default 512MB).")
    parser.add_argument("--pure-python", action="store_true",
                        help="Measure without the compiled decoder (the fallback path).")
    parser.add_argument("--decode-only", action="store_true",
                        help="Measure the check and the chunked decoding only, without "
                             "DuckDB (also offers the shape 'logs').")
    args = parser.parse_args()
    if "logs" in args.shapes.split(",") and not args.decode_only:
        parser.error("the shape 'logs' is measured with --decode-only")
    compiled = native.AVAILABLE and not args.pure_python
    print(f"decoder: {'compiled (collector/_fastdecode.c)' if compiled else 'pure Python'}"
          + (", check and decode only" if args.decode_only else
             f", DuckDB memory_limit {args.db_memory_limit}"))
    print(f"{'shape':<11}{'spans':>10}{'wire MB':>9}{'peak RSS growth MB':>20}"
          f"{'x wire':>8}{'B/span':>9}{'peak RSS MB':>13}{'seconds':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for shape in args.shapes.split(","):
            spans = _spans_for(shape, args.megabytes)
            payload = Path(folder) / f"{shape}.pb"
            _build(shape, spans, payload)
            probe = ["measure", str(payload), str(Path(folder) / f"{shape}.duckdb"),
                     args.db_memory_limit]
            if args.decode_only:
                command = [sys.executable, "-c", _DECODE_ONLY, str(payload),
                           "logs" if shape == "logs" else "traces",
                           "compiled" if compiled else "python"]
            elif compiled:
                command = [sys.executable, "-m", "tests.collector.memory_probe", *probe]
            else:
                command = [sys.executable, "-c", _PURE_PYTHON, *probe]
            result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                                    check=False)
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
