"""CPU cost per span of each stage of the collector's storing path.

Measures **process CPU time** (user + system of every thread of the measuring process,
``time.process_time``), not wall time, so other jobs on a busy machine distort it little.
Spans are the load benchmark's fat GenAI spans (``_spans.py``: ~3.1 KB, 20 attributes,
two events), ``--requests`` requests of ``--spans`` spans with distinct ids. Stages:

* **check**: the intake's ``check_request`` (parse, ids, kind and status ranges);
* **decode**: ``decode_traces`` to an Arrow table;
* **spool**: ``Spool.append`` (record headers with CRC32, write, fsync) of the requests
  in groups of 4, as the spool writer appends what is queued at once;
* **insert**: ``collector.insert.insert_rows`` (what the materializer runs) of
  compiled-decoded rows into a fresh DuckDB store, in transactions of
  ``max_commit_items`` rows (of whole row groups, as the materializer cuts them, when the
  store's row group is smaller), commit included, then a CHECKPOINT (the store is opened
  with ``serve``'s DuckDB settings, ``db_row_group_size`` included: a transaction of whole
  row groups is written straight to the file, what goes through the write-ahead log is
  written once more by the checkpoint; and on one DuckDB thread, as the collector's
  pipeline sets it: ``collector/sql/db_threads.sql``, db_threads=1);
* **whole**: the whole storing path as ``tracemill ingest`` runs it: intake check, spool
  append with fsync, decode (one thread, ``decode_workers=0``), insert, commit. It runs in a
  fresh process per run; the pure-Python one blocks the extension's import there. A
  final CHECKPOINT is counted too, as in **insert**.

Each stage runs ``--runs`` times; the median is printed, with the ratio compiled/Python
of the same run and the implied spans per second on one core (1e6 / µs per span).

    .venv/bin/python bench/collector_cpu.py              # 3 runs, 48 requests of 512 spans
    .venv/bin/python bench/collector_cpu.py --runs 5 --json result.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent))
sys.path.insert(0, str(_HERE))

_RECEIVED = 1_700_000_000_000_000_000


def _bodies(requests: int, spans: int, seed: int) -> list[bytes]:
    from _spans import _span_bytes_template

    rng = random.Random(seed)
    return [_span_bytes_template(rng, spans, 8)[0] for _ in range(requests)]


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def _check(bodies: list[bytes], compiled: bool) -> float:
    from collector.checks import check_request

    return _cpu(lambda: [check_request("traces", body, compiled=compiled) for body in bodies])


def _decode(bodies: list[bytes], compiled: bool) -> float:
    from collector.decode import decode_traces

    return _cpu(lambda: [decode_traces(body, _RECEIVED, compiled=compiled) for body in bodies])


def _spool(bodies: list[bytes], folder: Path) -> float:
    from collector.spool import Spool, SpooledRequest

    spool = Spool(folder / "cpu.spool")
    requests = [SpooledRequest("traces", body, 0, _RECEIVED) for body in bodies]
    try:
        return _cpu(lambda: [spool.append(requests[start:start + 4])
                             for start in range(0, len(requests), 4)])
    finally:
        spool.close()


def _insert(bodies: list[bytes], folder: Path, commit_items: int) -> float:
    import pyarrow as pa

    from collector.decode import decode_traces
    from collector.insert import insert_rows, insert_statement
    from tracemill.config import Settings
    from tracemill.store import load_sql, open_store

    tables = [decode_traces(body, _RECEIVED, compiled=True).rows for body in bodies]
    settings = Settings()
    store = open_store(folder / "insert.duckdb", memory_limit=settings.db_memory_limit,
                       checkpoint_threshold=settings.db_checkpoint_threshold,
                       compression=settings.db_compression,
                       row_group_size=settings.db_row_group_size)
    store.query(load_sql("collector", "db_threads.sql"), [1])  # as the collector's pipeline
    statement = insert_statement("traces")
    cursor = store.cursor()
    row_group = settings.db_row_group_size
    if row_group and row_group <= commit_items:
        commit_items = row_group  # the materializer's whole row groups

    def work() -> None:
        rows = pa.concat_tables(tables)
        for sequence, start in enumerate(range(0, rows.num_rows, commit_items), start=1):
            cursor.begin()
            insert_rows(cursor, statement, [rows.slice(start, commit_items)], sequence)
            cursor.commit()
        cursor.execute("CHECKPOINT")  # what the WAL defers, every row is written once

    try:
        return _cpu(work)
    finally:
        cursor.close()
        store.close()


def _whole_child(args: argparse.Namespace) -> int:
    """One run of the whole storing path (this is a fresh process)."""
    if args.pure_python:
        sys.modules["collector._fastdecode"] = None  # type: ignore[assignment]
    from collector import native
    from collector.metrics import Metrics
    from collector.pipeline import Pipeline
    from tracemill.config import Settings
    from tracemill.store import open_store

    assert args.pure_python != native.AVAILABLE, native.MISSING_HINT
    bodies = _bodies(args.requests, args.spans, args.seed)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        settings = Settings(db=Path(tmp) / "whole.duckdb", decode_workers=0,
                            max_commit_items=args.commit_items)
        store = open_store(settings.db, memory_limit=settings.db_memory_limit,
                           checkpoint_threshold=settings.db_checkpoint_threshold,
                           compression=settings.db_compression,
                           row_group_size=settings.db_row_group_size)
        pipeline = Pipeline(settings, store, Metrics())

        def work() -> None:
            pipeline.writer.start()
            for body in bodies:
                pipeline.intake.export_blocking("traces", body, "file")
            pipeline.writer.close()
            pipeline.materializer.store_all()
            store.checkpoint()  # rows still in the WAL are written to the file here

        seconds = _cpu(work)
        stored = store.query("SELECT count(*) FROM otlp_spans")[0][0]
        pipeline.decoders.shutdown()
        pipeline.spool.close()
        store.close()
    assert stored == args.requests * args.spans, (stored, args.requests * args.spans)
    print(json.dumps({"seconds": seconds}))
    return 0


def _whole(args: argparse.Namespace, pure_python: bool) -> float:
    command = [sys.executable, str(Path(__file__).resolve()), "--whole-child",
               "--requests", str(args.requests), "--spans", str(args.spans),
               "--seed", str(args.seed), "--commit-items", str(args.commit_items),
               "--tmp", str(args.tmp)]
    if pure_python:
        command.append("--pure-python")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the whole-path run failed:\n{done.stderr}")
    seconds: float = json.loads(done.stdout.strip().splitlines()[-1])["seconds"]
    return seconds


def _machine_busy() -> str:
    try:
        import psutil
    except ImportError:
        return "unknown (psutil missing)"
    cores = psutil.cpu_count() or 1
    busy = psutil.cpu_percent(interval=1.0) * cores / 100
    return f"{busy:.2f} of {cores} cores busy (1 s sample), load average " + (
        " ".join(f"{v:.2f}" for v in os.getloadavg()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=48, help="requests per run")
    parser.add_argument("--spans", type=int, default=512, help="fat spans per request")
    parser.add_argument("--runs", type=int, default=3, help="runs per stage (median printed)")
    parser.add_argument("--seed", type=int, default=7, help="span content seed")
    parser.add_argument("--commit-items", type=int, default=20_000,
                        help="rows per transaction (the collector's max_commit_items)")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()),
                        help="where the DuckDB files and spools go (a real disk: fsync counts)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--compiled-only", action="store_true",
                        help="skip the pure-Python check, decode and whole path (faster)")
    parser.add_argument("--whole-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pure-python", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.whole_child:
        return _whole_child(args)

    from collector import native

    if not native.AVAILABLE:
        raise SystemExit(native.MISSING_HINT)
    spans = args.requests * args.spans
    bodies = _bodies(args.requests, args.spans, args.seed)
    wire = sum(map(len, bodies)) / spans
    print(f"{args.requests} requests of {args.spans} fat spans ({wire:,.0f} B a span), "
          f"{args.runs} runs; machine: {_machine_busy()}")
    samples: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        samples.setdefault(name, []).append(seconds * 1e6 / spans)

    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            variants = ((True, "compiled"),) if args.compiled_only else (
                (True, "compiled"), (False, "python"))
            for compiled, label in variants:
                add(f"check {label}", _check(bodies, compiled))
                add(f"decode {label}", _decode(bodies, compiled))
            add("spool", _spool(bodies, Path(tmp)))
            add("insert", _insert(bodies, Path(tmp), args.commit_items))
            add("whole compiled", _whole(args, pure_python=False))
            if not args.compiled_only:
                add("whole python", _whole(args, pure_python=True))
    ratios = {} if args.compiled_only else {stage: statistics.median(
        c / p for c, p in zip(samples[f"{stage} compiled"], samples[f"{stage} python"],
                              strict=True)) for stage in ("check", "decode", "whole")}
    print(f"{'stage':<18}{'CPU-µs/span':>12}{'spans/s/core':>14}{'  runs (µs/span)'}")
    results = {}
    for name, values in samples.items():
        median = statistics.median(values)
        results[name] = {"us_per_span": median, "runs": values}
        print(f"{name:<18}{median:>12.2f}{1e6 / median:>14,.0f}  "
              + " ".join(f"{v:.2f}" for v in values))
    for stage, ratio in ratios.items():
        print(f"ratio compiled/python, {stage}: {ratio:.3f} (median of per-run ratios)")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "ratios": ratios}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
