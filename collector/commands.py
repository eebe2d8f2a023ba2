"""The collector's commands: ``ingest`` and ``stats``.

:func:`add_commands` adds them to the ``tracemill`` parser; each handler gets the parsed
arguments and the process's :class:`~tracemill.config.Settings` and returns an exit code.
(``serve`` composes the collector with the admin API and the scheduler, so it lives in
the core: :mod:`tracemill.service`.)
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracemill.config import Settings
from tracemill.errors import StoreError, StoreLockedError
from tracemill.preflight import require_files

__all__ = ["add_commands"]

Options = Callable[[argparse.ArgumentParser], None]


def add_commands(commands: Any, common: Options) -> None:
    """Add ``ingest`` and ``stats`` to the subcommand parsers."""
    ingest = commands.add_parser(
        "ingest", help="Load OTLP protobuf, OTLP/JSON or JSON-lines files into the store.",
        description="Back-fill or air-gapped transfer: each file goes through the same "
                    "decoding, validation and de-duplication as the receivers.")
    common(ingest)
    ingest.add_argument("files", nargs="+", type=Path, metavar="FILE",
                        help="Files to load (.json, .jsonl, protobuf; .gz compressed too).")
    ingest.add_argument("--signal", choices=["traces", "logs"], default="traces",
                        help="What protobuf files hold (JSON says so itself; default traces).")
    ingest.add_argument("--json", action="store_true",
                        help="Print the per-file report as JSON.")
    ingest.set_defaults(handler=_ingest)

    stats = commands.add_parser(
        "stats", help="Print counts of stored spans, log records, services, agents, versions.",
        description="Reads the store file; when a running collector holds it, asks that "
                    "collector (found through the service file beside the store, else at "
                    "--http-address) instead.")
    common(stats)
    stats.add_argument("--json", action="store_true", help="Print one JSON object.")
    stats.add_argument("--http-address", metavar="HOST:PORT",
                       help="Where to ask a running collector that wrote no service file "
                            "(default 127.0.0.1:4318).")
    stats.set_defaults(handler=_stats)


def _open(settings: Settings, **options: Any) -> Any:
    from tracemill.store import open_configured

    return open_configured(settings, **options)


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    from collector.ingest import ingest_file
    from collector.metrics import Metrics
    from collector.pipeline import Pipeline

    require_files(args.files)  # before the store: a missing input creates nothing
    store = _open(settings, store_spool=False)  # the pipeline stores the spool itself
    reports = []
    try:
        pipeline = Pipeline(settings, store, Metrics())
        pipeline.start()
        try:
            for path in args.files:
                reports.append(ingest_file(pipeline.intake, path, args.signal))
        finally:
            pipeline.close(drain_all=True)
    finally:
        store.close()
    failed = any(report.problems for report in reports)
    metrics = pipeline.metrics
    totals = {signal: {"stored": metrics.items(signal, "stored"),
                       "duplicates": metrics.items(signal, "duplicates")}
              for signal in ("traces", "logs")}
    if args.json:
        print(json.dumps({"files": [{
            "file": str(report.path), "requests": report.requests,
            "accepted": report.accepted, "rejected": report.rejected,
            "problems": report.problems,
        } for report in reports], "totals": totals}, indent=2))
    else:
        for report in reports:
            print(f"{report.path}: {report.requests} requests; {report.accepted['traces']} "
                  f"spans and {report.accepted['logs']} log records accepted, "
                  f"{report.rejected['traces']} spans and {report.rejected['logs']} log "
                  "records rejected")
            for problem in report.problems[:20]:
                print(f"  problem: {problem}")
            if len(report.problems) > 20:
                print(f"  ... and {len(report.problems) - 20} more problems")
        print(f"stored {totals['traces']['stored']} new spans and {totals['logs']['stored']} "
              f"new log records; {totals['traces']['duplicates']} spans and "
              f"{totals['logs']['duplicates']} log records were already stored")
    return 1 if failed else 0


def _stats(args: argparse.Namespace, settings: Settings) -> int:
    from collector.stats import StoreStats, store_stats

    try:
        store = _open(settings, read_only=True)
    except StoreLockedError as locked:
        from tracemill.collector_client import ask_collector

        stats = StoreStats(**ask_collector(settings, "/stats", locked))
    else:
        try:
            stats = store_stats(store)
        except Exception as exc:  # a file from before `migrate`, or not ours
            raise StoreError(
                f"{settings.db} has no tracemill tables ({exc}); run `tracemill migrate` "
                "or point --db at a tracemill store") from None
        finally:
            store.close()
    if args.json:
        print(stats.model_dump_json(indent=2))
        return 0
    for key, value in stats.model_dump().items():
        if key.endswith("_unix_nano"):
            key, value = key.removesuffix("_unix_nano"), iso_time(value)
        print(f"{key:>22}  {value}")
    return 0


def iso_time(unix_nano: int | None) -> str:
    """``2026-12-01T17:42:20.123456Z`` for a time in nanoseconds since the epoch (``-``
    for None)."""
    if unix_nano is None:
        return "-"
    when = datetime.fromtimestamp(unix_nano // 1000 / 1e6, tz=UTC)
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")
