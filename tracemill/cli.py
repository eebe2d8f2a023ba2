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

from generator.commands import add_commands as add_generator_commands
from tracemill import __version__
from tracemill.config import Settings, load_settings, split_address
from tracemill.errors import StoreError, StoreLockedError, TracemillError
from tracemill.logs import configure_logging
from tracemill.store import load_sql

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
                       help="Processes decoding spooled requests in parallel (default 0: a "
                            "thread of the collector process; raise it on machines with "
                            "more than 2 cores).")
    serve.add_argument("--process-every", dest="process_every_seconds", type=float,
                       metavar="SECONDS",
                       help="Also rebuild conversations and the failure map this often, and "
                            "serve the map at GET /map (default 0: off).")
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

    process = commands.add_parser(
        "process", help="Turn new spans into conversations and rebuild the failure map.",
        description="Incremental: only conversations touched by new spans, log records or "
                    "labels are rebuilt. map, conversations and report run it first.")
    _processing(process)
    process.set_defaults(handler=_process)

    fmap = commands.add_parser(
        "map", help="Print the failure map: cells by status, fail rates with intervals.",
        description="Cells are pairs of coordinates on two axes; statuses compare the latest "
                    "model version with the previous one.")
    _processing(fmap)
    fmap.add_argument("--json", action="store_true", help="Print every cell as JSON.")
    fmap.add_argument("--all", action="store_true", help="Include passing cells.")
    fmap.add_argument("--http-address", metavar="HOST:PORT",
                      help="Where to ask a running collector when it holds the store "
                           "(default 127.0.0.1:4318).")
    fmap.add_argument("--limit", type=int, default=40, metavar="N",
                      help="Most cells to print in the table (default 40).")
    fmap.set_defaults(handler=_map)

    conversations = commands.add_parser(
        "conversations", help="List conversations with outcome and situation.",
        description="Filters combine; --json prints full records (steps included).")
    _processing(conversations)
    conversations.add_argument("--json", action="store_true", help="Print JSON lines.")
    conversations.add_argument("--outcome", choices=["pass", "fail", "ungraded"],
                               help="Only conversations with this outcome.")
    conversations.add_argument("--version", metavar="V", help="Only this model version.")
    conversations.add_argument("--tool", metavar="NAME", help="Only this tool axis value.")
    conversations.add_argument("--limit", type=int, default=50, metavar="N",
                               help="Most conversations to print (default 50).")
    conversations.set_defaults(handler=_conversations)

    report = commands.add_parser(
        "report", help="Write the trace report (Markdown, JSON, HTML); gate CI on regressions.",
        description="With --since VERSION it is the regression report between VERSION and "
                    "the latest model version.")
    _processing(report)
    report.add_argument("--out", type=Path, default=Path("tracemill-report"), metavar="DIR",
                        help="Folder for report.md, report.json, report.html "
                             "(default ./tracemill-report).")
    report.add_argument("--since", metavar="VERSION",
                        help="Compare the latest model version with this one.")
    report.add_argument("--fail-on", choices=["new", "persistent", "any"],
                        help="Exit 1 when a cell has this status (new: significant new "
                             "failures; any: new or persistent), ignoring low-support cells.")
    report.set_defaults(handler=_report)

    label = commands.add_parser(
        "label", help="Attach outcomes from a CSV or JSON-lines file.",
        description="Columns: conversation_id, trace_id or rollout_id (a generated "
                    "conversation: human labels on rollouts measure judges, see `tracemill "
                    "judges`); passed and/or reward; kind (human|program|model); "
                    "labeled_by; note.")
    _common(label)
    label.add_argument("file", type=Path, metavar="FILE", help="The CSV or .jsonl file.")
    label.add_argument("--by", metavar="NAME",
                       help="labeled_by for rows that do not name it.")
    label.set_defaults(handler=_label)

    migrate = commands.add_parser(
        "migrate", help="Create or upgrade the store's schema and print its versions.",
        description="Applies the numbered migrations not yet recorded in the store.")
    _common(migrate)
    migrate.set_defaults(handler=_migrate)
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
        handler: Handler = args.handler
        args.environ = env  # model API keys, read only by the commands that call models
        return handler(args, settings)
    except TracemillError as exc:
        print(f"tracemill {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _open(settings: Settings, **options: Any) -> Any:
    """Open the configured store with the configured DuckDB limits."""
    from tracemill.store import open_configured

    return open_configured(settings, **options)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from collector.server import Collector, run_forever
    from processor.background import PeriodicProcessor
    from processor.report import stored_map_json

    store = _open(settings)

    def current_map() -> str:
        cursor = store.cursor()
        try:
            return stored_map_json(cursor)
        finally:
            cursor.close()

    processing = None
    if settings.process_every_seconds > 0:
        processing = PeriodicProcessor(store, _options(settings), settings.process_every_seconds)
        processing.start()
    try:
        asyncio.run(run_forever(Collector(settings, store, {"/map": current_map}),
                                args.ready_file))
    finally:
        if processing is not None:
            processing.stop()
        store.close()
    return 0


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    from collector.ingest import ingest_file
    from collector.metrics import Metrics
    from collector.pipeline import Pipeline

    store = _open(settings)
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
        data = _from_collector(settings, "/stats", locked)
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


def _from_collector(settings: Settings, path: str, locked: StoreLockedError) -> dict[str, Any]:
    """A JSON document from the running collector that holds the store."""
    import httpx

    scheme = "https" if settings.tls_cert else "http"
    url = f"{scheme}://{settings.http_address}{path}"
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


def _options(settings: Settings) -> Any:
    from processor.run import ProcessOptions

    return ProcessOptions.from_settings(settings)


def _processed(settings: Settings) -> tuple[Any, Any]:
    from processor.run import process

    try:
        store = _open(settings)
    except StoreLockedError as locked:
        raise StoreLockedError(
            locked.path, locked.pid,
            "a running collector; run this on its file once it has stopped, or start "
            "`tracemill serve --process-every SECONDS` and use `tracemill map`, which then "
            "asks it") from None
    try:
        result = process(store, _options(settings))
    except BaseException:
        store.close()
        raise
    return store, result


def _process(args: argparse.Namespace, settings: Settings) -> int:
    store, result = _processed(settings)
    store.close()
    statuses: dict[str, int] = {}
    for cell in result.cells:
        statuses[cell.status] = statuses.get(cell.status, 0) + 1
    print(f"rebuilt {result.conversations_rebuilt} conversations from {result.spans_read} "
          f"spans and {result.log_records_read} log records in {result.seconds:.1f}s; "
          f"failure map: {len(result.cells)} cells ("
          + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) + ")")
    return 0


def _map(args: argparse.Namespace, settings: Settings) -> int:
    from processor.report import cell_view

    try:
        store, result = _processed(settings)
    except StoreLockedError as locked:
        cells = _from_collector(settings, "/map", locked)["cells"]
        shown = [c for c in cells if args.all or c["status"] != "passing"]
        if args.json:
            print(json.dumps(shown, indent=2))
        else:
            print("from the running collector (its last processing run)")
            for cell in shown[:args.limit]:
                print(f"{cell['status']:<11} {cell['failed_latest']}/{cell['graded_latest']:<6} "
                      f"{cell['failed_previous']}/{cell['graded_previous']:<6} "
                      f"{cell['axis_a']}={cell['value_a']} & {cell['axis_b']}={cell['value_b']}")
        return 0
    store.close()
    order = {"new": 0, "persistent": 1, "uncertain": 2, "fixed": 3, "passing": 4}
    cells = sorted((c for c in result.cells if args.all or c.status != "passing"),
                   key=lambda c: (order[c.status], -c.priority))
    if args.json:
        print(json.dumps([cell_view(c).model_dump() for c in cells], indent=2))
        return 0
    periods = result.periods
    print(f"comparing {periods.latest} with {periods.previous}" if periods.mode == "versions"
          else "one model version: comparing the later half of it with the earlier half")
    print(f"{'status':<11} {'latest':<24} {'previous':<24} {'share':>6}  cell")
    for cell in cells[:args.limit]:
        view = cell_view(cell)
        flag = "*" if cell.low_support else ""
        print(f"{cell.status + flag:<11} {view.latest:<24} {view.previous:<24} "
              f"{cell.budget_share:>6.1%}  {view.cell}")
    if len(cells) > args.limit:
        print(f"... {len(cells) - args.limit} more (--limit, --json)")
    if any(cell.low_support for cell in cells[:args.limit]):
        print("* low support: fewer than 3 graded conversations in the latest period")
    return 0


def _conversations(args: argparse.Namespace, settings: Settings) -> int:
    store, _ = _processed(settings)
    try:
        rows = store.query(load_sql("processor", "list_conversations.sql"), [
            args.outcome, args.version, args.tool, args.limit])
    finally:
        store.close()
    for row in rows:
        record = dict(zip(_CONVERSATION_COLUMNS, row, strict=True))
        if args.json:
            record["steps"] = json.loads(record["steps"])
            print(json.dumps(record, default=str))
        else:
            ask = (record["first_ask"] or "(content not captured)").replace("\n", " ")[:60]
            print(f"{record['conversation_id'][:24]:<24} {record['outcome'] or 'ungraded':<8} "
                  f"{record['model_version'] or '-':<10} {record['tool']:<16} "
                  f"{record['tool_condition']:<18} {record['user_stance']:<12} {ask}")
    return 0


_CONVERSATION_COLUMNS = (
    "conversation_id", "model_version", "outcome", "outcome_source", "first_ask",
    "final_reply", "steps", "tool", "tool_condition", "world_state", "history",
    "user_stance", "policy_rule", "trace_ids", "input_tokens", "output_tokens")


def _report(args: argparse.Namespace, settings: Settings) -> int:
    from processor.failure_map import build_map
    from processor.report import build_report, to_html, to_markdown

    store, result = _processed(settings)
    try:
        cursor = store.cursor()
        try:
            periods, cells = (result.periods, list(result.cells)) if args.since is None else \
                build_map(cursor, settings.exploration_share, baseline=args.since)
            report = build_report(cursor, periods, cells)
        finally:
            cursor.close()
    finally:
        store.close()
    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
        (out / "report.md").write_text(to_markdown(report), encoding="utf-8")
        (out / "report.html").write_text(to_html(report), encoding="utf-8")
    except OSError as exc:
        raise TracemillError(f"cannot write the report to {out}: {exc.strerror}") from None
    print(f"wrote {out / 'report.md'}, {out / 'report.json'}, {out / 'report.html'}")
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.fail_on:
        wanted = {"new": {"new"}, "persistent": {"persistent"},
                  "any": {"new", "persistent"}}[args.fail_on]
        hits = [c for c in cells if c.status in wanted and not c.low_support]
        if hits:
            print(f"{len(hits)} cells are {' or '.join(sorted(wanted))}; failing as asked "
                  "(--fail-on)", file=sys.stderr)
            return 1
    return 0


def _label(args: argparse.Namespace, settings: Settings) -> int:
    from processor.labels import read_labels, store_labels, unknown_targets

    labels = read_labels(args.file, args.by)
    store = _open(settings)
    try:
        count = store_labels(store, labels, args.file)
        unknown = unknown_targets(store, labels)
    finally:
        store.close()
    print(f"stored {count} labels from {args.file}; the next map or report uses them")
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5
                                          else "")
        print(f"warning: {len(unknown)} labels name no processed conversation, trace or "
              f"rollout: {shown} (a typo, or spans not processed yet: run `tracemill "
              "process`)", file=sys.stderr)
    return 0


def _migrate(args: argparse.Namespace, settings: Settings) -> int:

    store = _open(settings, migrate=False)
    try:
        applied = store.migrate()
        versions = store.schema_versions()
    finally:
        store.close()
    for migration in applied:
        print(f"applied {migration.component} {migration.version:03d}_{migration.name}")
    print(", ".join(f"{component} schema v{version}" for component, version in versions.items()))
    return 0
