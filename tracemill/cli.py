"""The ``tracemill`` command line.

Each subcommand builds one :class:`~tracemill.config.Settings` from its flags, the
``TRACEMILL_*`` environment and the config file, then calls into a component. Errors that
users can cause are printed as one message and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tracemill import __version__
from tracemill.config import Settings, load_settings, split_address
from tracemill.errors import StoreError, StoreLockedError, TracemillError
from tracemill.logs import configure_logging

Handler = Callable[[argparse.Namespace, Settings], int]

_SETTINGS_FLAGS = {name for name in Settings.model_fields}


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", type=Path, metavar="PATH",
                        help="DuckDB store file (default ./tracemill.duckdb; env TRACEMILL_DB).")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="TOML config file (default ./tracemill.toml when present; "
                             "env TRACEMILL_CONFIG).")
    parser.add_argument("--log-level", choices=["debug", "info", "warning", "error"],
                        help="Least severe log level written to stderr (default info).")
    parser.add_argument("--log-format", choices=["json", "text"],
                        help="Log line format on stderr (default json).")


def build_parser() -> argparse.ArgumentParser:
    """The full parser; every command and option carries help text."""
    parser = argparse.ArgumentParser(
        prog="tracemill",
        description="Collect an LLM agent's OpenTelemetry traces, find where it fails, and "
                    "turn those failures into training data.",
    )
    parser.add_argument("--version", action="version", version=f"tracemill {__version__}",
                        help="Print the version and exit.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                     help="What to do (each has its own --help).")

    serve = commands.add_parser(
        "serve", help="Run the OTLP collector (gRPC :4317, HTTP :4318) until SIGTERM.",
        description="Receive OTLP traces and logs over gRPC and HTTP and store them. "
                    "Set TRACEMILL_AUTH_TOKEN (or auth_token in the config file) to require "
                    "a bearer token.")
    _common(serve)
    serve.add_argument("--grpc-address", metavar="HOST:PORT",
                       help="OTLP/gRPC listen address (default 127.0.0.1:4317; port 0 = any free).")
    serve.add_argument("--http-address", metavar="HOST:PORT",
                       help="OTLP/HTTP, /healthz, /readyz, /metrics and /stats listen address "
                            "(default 127.0.0.1:4318; port 0 = any free).")
    serve.add_argument("--tls-cert", type=Path, metavar="PEM",
                       help="Certificate chain for TLS on both ports (with --tls-key).")
    serve.add_argument("--tls-key", type=Path, metavar="PEM",
                       help="Private key for --tls-cert.")
    serve.add_argument("--max-message-bytes", type=int, metavar="N",
                       help="Largest export request accepted, after decompression "
                            "(default 67108864 = 64 MiB).")
    serve.add_argument("--max-queue-bytes", type=int, metavar="N",
                       help="Request bytes that may wait for commit before clients are told "
                            "to retry (default 268435456 = 256 MiB).")
    serve.add_argument("--decode-workers", type=int, metavar="N",
                       help="Processes decoding requests in parallel (default 2; 0 decodes on "
                            "a thread of the collector process).")
    serve.add_argument("--ready-file", type=Path, metavar="PATH",
                       help="Once listening, write {pid, grpc, http} as JSON to this file.")
    serve.set_defaults(handler=_serve)

    ingest = commands.add_parser(
        "ingest", help="Load OTLP protobuf, OTLP/JSON or JSON-lines files into the store.",
        description="Back-fill or air-gapped transfer: each file goes through the same "
                    "decoding, validation and de-duplication as the receivers.")
    _common(ingest)
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
                    "collector at --http-address instead.")
    _common(stats)
    stats.add_argument("--json", action="store_true", help="Print one JSON object.")
    stats.add_argument("--http-address", metavar="HOST:PORT",
                       help="Where to ask a running collector (default 127.0.0.1:4318).")
    stats.set_defaults(handler=_stats)

    migrate = commands.add_parser(
        "migrate", help="Create or upgrade the store's schema and print its versions.",
        description="Applies the numbered migrations not yet recorded in the store.")
    _common(migrate)
    migrate.set_defaults(handler=_migrate)
    return parser


def main(argv: Sequence[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Run one command; returns the exit code."""
    args = build_parser().parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    try:
        flags = {key: value for key, value in vars(args).items() if key in _SETTINGS_FLAGS}
        settings = load_settings(flags, env, args.config)
        configure_logging(settings.log_level, settings.log_format)
        handler: Handler = args.handler
        return handler(args, settings)
    except TracemillError as exc:
        print(f"tracemill {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from collector.server import Collector, run_forever
    from tracemill.store import open_store

    store = open_store(settings.db, memory_limit=settings.db_memory_limit)
    try:
        asyncio.run(run_forever(Collector(settings, store), args.ready_file))
    finally:
        store.close()
    return 0


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    from collector.ingest import ingest_file
    from collector.metrics import Metrics
    from collector.pipeline import Pipeline
    from tracemill.store import open_store

    store = open_store(settings.db, memory_limit=settings.db_memory_limit)
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
    from tracemill.store import open_store

    try:
        store = open_store(settings.db, read_only=True, memory_limit=settings.db_memory_limit)
    except StoreLockedError as locked:
        data = _stats_from_collector(settings, locked)
        stats = StoreStats(**data)
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
    else:
        for key, value in stats.model_dump().items():
            print(f"{key:>22}  {value}")
    return 0


def _stats_from_collector(settings: Settings, locked: StoreLockedError) -> dict[str, Any]:
    import httpx

    scheme = "https" if settings.tls_cert else "http"
    url = f"{scheme}://{settings.http_address}/stats"
    headers = {}
    if settings.auth_token:
        headers["authorization"] = f"Bearer {settings.auth_token.get_secret_value()}"
    host, _ = split_address(settings.http_address)
    # On loopback the collector's own certificate may be self-signed; elsewhere verify it.
    verify = not _is_loopback(host)
    try:
        response = httpx.get(url, headers=headers, timeout=10, verify=verify)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise StoreLockedError(
            locked.path, locked.pid, f"and {url} did not answer: {exc}") from None
    return data


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    from tracemill.store import open_store

    store = open_store(settings.db, migrate=False, memory_limit=settings.db_memory_limit)
    try:
        applied = store.migrate()
        versions = store.schema_versions()
    finally:
        store.close()
    for migration in applied:
        print(f"applied {migration.component} {migration.version:03d}_{migration.name}")
    print(", ".join(f"{component} schema v{version}" for component, version in versions.items()))
    return 0
