"""The ``tracemill`` command line.

Each subcommand builds one :class:`~tracemill.config.Settings` from its flags, the
``TRACEMILL_*`` environment and the config file, then calls into a component. Errors that
users can cause are printed as one message and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from generator.commands import add_commands as add_generator_commands
from processor.commands import add_commands as add_processor_commands
from tracemill import __version__
from tracemill.config import Settings, load_settings
from tracemill.errors import (
    EXIT_CLOSED_PIPE,
    EXIT_INTERRUPTED,
    StoreError,
    StoreLockedError,
    TracemillError,
)
from tracemill.logs import configure_logging
from tracemill.preflight import require_files, require_port_free, require_store

Handler = Callable[[argparse.Namespace, Settings], int]

_SETTINGS_FLAGS = {name for name in Settings.model_fields}
#: Commands that may create the store; every other one refuses a path with no store.
_CREATES_STORE = {"serve", "ingest", "migrate"}


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


def _processing(parser: argparse.ArgumentParser) -> None:
    _common(parser)
    parser.add_argument("--reward-keys", metavar="KEYS",
                        help="Comma-separated span attributes read as rewards "
                             "(default reward,tracemill.reward).")
    parser.add_argument("--pass-threshold", type=float, metavar="X",
                        help="Rewards and scores at or above it pass (default 0.5).")
    parser.add_argument("--policy", dest="policy_file", type=Path, metavar="FILE",
                        help="Policy document (Markdown or text) whose clauses name the "
                             "policy_rule axis (env TRACEMILL_POLICY_FILE).")
    parser.add_argument("--stance-model", dest="stance_model", metavar="SPEC",
                        help="Also ask a model for each conversation's user stance "
                             "(openai:gpt-4o-mini, ollama:MODEL, vllm:MODEL@URL, ...; keys "
                             "from the usual variables such as OPENAI_API_KEY); answers are "
                             "cached, a failing model keeps the pattern stance and says so "
                             "(env TRACEMILL_STANCE_MODEL; default: patterns only).")


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
                    "a bearer token. Also serves the admin API (/api/v1, its own token "
                    "TRACEMILL_ADMIN_TOKEN) and runs scheduled generation (--generate-cron) "
                    "and map refreshes (--process-every). Exit codes: 0 stopped cleanly, "
                    "2 bad settings, 3 a port is taken or the store is locked.")
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
    serve.add_argument("--insecure-listen", action="store_const", const=True,
                       help="Listen beyond loopback without a token or TLS (refused "
                            "otherwise; env TRACEMILL_INSECURE_LISTEN).")
    serve.add_argument("--max-message-bytes", type=int, metavar="N",
                       help="Largest export request accepted, after decompression "
                            "(default 67108864 = 64 MiB).")
    serve.add_argument("--max-queue-bytes", type=int, metavar="N",
                       help="Request bytes that may wait for commit before clients are told "
                            "to retry (default 268435456 = 256 MiB).")
    serve.add_argument("--decode-workers", type=int, metavar="N",
                       help="Processes decoding spooled requests in parallel (default 0: a "
                            "thread of the collector process; raise it on machines with "
                            "more than 2 cores).")
    serve.add_argument("--process-every", dest="process_every_seconds", type=float,
                       metavar="SECONDS",
                       help="Also rebuild conversations and the failure map this often, and "
                            "serve the map at GET /map (default 0: off).")
    serve.add_argument("--api-address", metavar="HOST:PORT",
                       help="Admin HTTP API (/api/v1, OpenAPI at /api/v1/openapi.json) "
                            "listen address (default: 127.0.0.1 and the port after "
                            "--http-address's; beyond loopback it needs "
                            "TRACEMILL_ADMIN_TOKEN).")
    serve.add_argument("--generate-cron", metavar="CRON",
                       help="Run generation on this cron schedule in UTC, e.g. '0 2 * * *' "
                            "(needs --agent or agent in the config; env "
                            "TRACEMILL_GENERATE_CRON; default off).")
    serve.add_argument("--generate-budget", metavar="BUDGET",
                       help="Budget of each scheduled run (default: the budget setting).")
    serve.add_argument("--agent", metavar="SPEC",
                       help="Agent under test for scheduled and API-started runs "
                            "(as `generate --agent`).")
    serve.add_argument("--ready-file", type=Path, metavar="PATH",
                       help="Once listening, write {pid, grpc, http, api} as JSON to this file.")
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
    add_processor_commands(commands, _common, _processing)
    add_generator_commands(commands, _common)
    return parser


def main(argv: Sequence[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Run one command; returns the exit code."""
    args = build_parser().parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    try:
        flags = {key: value for key, value in vars(args).items() if key in _SETTINGS_FLAGS}
        settings = load_settings(flags, env, args.config)
        configure_logging(settings.log_level, settings.log_format)
        if args.command not in _CREATES_STORE:
            require_store(settings.db)
        handler: Handler = args.handler
        args.environ = env  # model API keys, read only by the commands that call models
        return handler(args, settings)
    except TracemillError as exc:
        print(f"tracemill {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`tracemill map | head`): stop quietly, with the shell's
        # code for SIGPIPE; later writes to the closed pipe go nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_CLOSED_PIPE


def _open(settings: Settings, **options: Any) -> Any:
    """Open the configured store with the configured DuckDB limits."""
    from tracemill.store import open_configured

    return open_configured(settings, **options)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from collector.server import Collector, check_exposure, run_forever
    from generator.schedule import ServiceJobs
    from processor.map_records import map_answer_json
    from tracemill.api import ApiServer, build_app, check_api_exposure

    check_exposure(settings)
    check_api_exposure(settings)
    if settings.generate_cron:
        from generator.commands import run_config

        run_config(settings)  # a schedule that could never run is refused now, not at 2 am
    require_port_free(settings.grpc_address, "OTLP/gRPC", "--grpc-address")
    require_port_free(settings.http_address, "OTLP/HTTP", "--http-address")
    require_port_free(settings.api_address, "the admin API", "--api-address")
    store = _open(settings, store_spool=False)  # the collector stores its spool itself

    def current_map() -> str:
        cursor = store.cursor()
        try:
            return map_answer_json(cursor, settings.process_every_seconds)
        finally:
            cursor.close()

    jobs = ServiceJobs(settings, store, args.environ)
    try:
        api = ApiServer(settings, build_app(settings, store, jobs))
        collector = Collector(settings, store, {"/map": current_map})
    except BaseException:
        store.close()
        raise
    ready = None
    if args.ready_file is not None:
        # the collector writes {pid, grpc, http}; the user's file gets the API address too
        ready = args.ready_file.with_name(args.ready_file.name + ".collector")
        threading.Thread(target=_merge_ready_file, args=(ready, args.ready_file, api.address),
                         name="tracemill-ready", daemon=True).start()
    api.start()
    jobs.start()
    print(f"tracemill admin API: http://{api.address}/api/v1 (OpenAPI document at "
          "/api/v1/openapi.json)", flush=True)
    try:
        asyncio.run(run_forever(collector, ready))
    finally:
        jobs.shutdown()
        api.stop()
        store.close()
    return 0


def _merge_ready_file(source: Path, target: Path, api_address: str) -> None:
    while not source.exists():
        time.sleep(0.02)
    info = json.loads(source.read_text())
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_text(json.dumps({**info, "api": api_address}))
    temporary.replace(target)
    source.unlink(missing_ok=True)


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

        data = ask_collector(settings, "/stats", locked)
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


def _migrate(args: argparse.Namespace, settings: Settings) -> int:

    store = _open(settings, migrate=False, store_spool=False)
    try:
        applied = store.migrate()
        versions = store.schema_versions()
    finally:
        store.close()
    for migration in applied:
        print(f"applied {migration.component} {migration.version:03d}_{migration.name}")
    print(", ".join(f"{component} schema v{version}" for component, version in versions.items()))
    return 0
