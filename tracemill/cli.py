"""The ``tracemill`` command line.

Each subcommand builds one :class:`~tracemill.config.Settings` from its flags, the
``TRACEMILL_*`` environment and the config file, then calls into a component: the
commands are defined beside their handlers (``serve`` in :mod:`tracemill.service`,
``ingest`` and ``stats`` in :mod:`collector.commands`, the processor's and the
generator's in theirs); this module holds ``main``, the shared options and ``migrate``. Errors that
users can cause are printed as one message and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from collector.commands import add_commands as add_collector_commands
from generator.commands import add_commands as add_generator_commands
from processor.commands import add_commands as add_processor_commands
from tracemill import __version__
from tracemill.config import Settings, load_settings
from tracemill.errors import (
    EXIT_CLOSED_PIPE,
    EXIT_INTERRUPTED,
    TracemillError,
)
from tracemill.logs import configure_logging
from tracemill.preflight import require_store
from tracemill.service import add_commands as add_service_commands

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
                             "(builtin: offline, MiniLM from the embed extra plus a small "
                             "trained head; openai:gpt-4o-mini, ollama:MODEL, "
                             "vllm:MODEL@URL, ...; keys "
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

    add_service_commands(commands, _common)
    add_collector_commands(commands, _common)
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
