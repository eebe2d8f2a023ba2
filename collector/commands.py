"""The collector's commands: ``ingest``, ``stats`` and ``dead-letters``.

:func:`add_commands` adds them to the ``tracemill`` parser; each handler gets the parsed
arguments and the process's :class:`~tracemill.config.Settings` and returns an exit code.
(``serve`` composes the collector with the admin API and the scheduler, so it lives in
the core: :mod:`tracemill.service`.)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracemill.config import Settings
from tracemill.errors import EXIT_GATE_FAILED, StoreError, StoreLockedError, TracemillError
from tracemill.preflight import require_files

__all__ = ["add_commands"]

Options = Callable[[argparse.ArgumentParser], None]


def add_commands(commands: Any, common: Options) -> None:
    """Add ``ingest``, ``stats`` and ``dead-letters`` to the subcommand parsers."""
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
    _add_dead_letter_commands(commands, common)


def _add_dead_letter_commands(commands: Any, common: Options) -> None:
    letters = commands.add_parser(
        "dead-letters",
        help="List, replay or discard spooled requests that could not be decoded.",
        description="A request the collector acknowledged but could not decode is moved to "
                    "the dead-letter files beside its spool (<db>.spool/dead-letter.*) and "
                    "counted in /readyz and /metrics. After upgrading tracemill (a decoder "
                    "fix), `replay` stores what now decodes; `discard --yes` removes them. "
                    "Payloads are never printed.")
    actions = letters.add_subparsers(dest="dead_letter_action", metavar="ACTION",
                                     required=True, help="What to do (each has its own --help).")
    listing = actions.add_parser(
        "list", help="Print each dead letter: when, signal, items, bytes, why.",
        description="Reads the dead-letter files (also while `tracemill serve` runs); when "
                    "no process holds the store, also marks the letters an interrupted "
                    "replay already stored.")
    common(listing)
    listing.add_argument("--json", action="store_true", help="Print one JSON object.")
    listing.set_defaults(handler=_dead_letters_list)
    again = actions.add_parser(
        "replay", help="Decode each dead letter again and store what now decodes.",
        description="Each request that now decodes is stored exactly once (items already "
                    "stored are dropped; a request an interrupted replay stored is not "
                    "stored or counted again) and leaves the dead-letter files; the others "
                    "stay with their new error. Needs the store for writing: stop `tracemill "
                    "serve` first. Exits 1 when some still fail.")
    common(again)
    again.set_defaults(handler=_dead_letters_replay)
    discard = actions.add_parser(
        "discard", help="Remove every dead letter (their items are never stored).",
        description="Says how many it removes. Needs the store (stop `tracemill serve` "
                    "first), so no collector moves a request aside meanwhile.")
    common(discard)
    discard.add_argument("--yes", action="store_true",
                         help="Really remove them (without it, nothing is removed).")
    discard.set_defaults(handler=_dead_letters_discard)


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


def _spool_of(settings: Settings) -> Path:
    """The spool folder of the configured store, found without opening it."""
    from collector.pipeline import spool_folder
    from tracemill.store import is_lake

    if is_lake(settings.db):
        from tracemill.lake import lake_of

        return spool_folder(lake_of(settings.db).anchor)
    return spool_folder(Path(settings.db))


def _dead_letters_list(args: argparse.Namespace, settings: Settings) -> int:
    from collector.dead_letters import read_dead_letters

    index = read_dead_letters(_spool_of(settings))
    stored = _stored_by_replay(settings, index)
    if index.damaged_lines:
        print(f"tracemill: warning: {index.damaged_lines} damaged lines in "
              f"{index.folder / 'dead-letter.jsonl'} were skipped", file=sys.stderr)
    if args.json:
        print(json.dumps({"folder": str(index.folder), "count": len(index.letters),
                          "damaged_lines": index.damaged_lines, "dead_letters": [{
                              "spool_position": letter.end, "signal": letter.signal,
                              "items": letter.items, "payload_bytes": letter.payload_bytes,
                              "received": iso_time(letter.received_unix_nano),
                              "moved_aside": (iso_time(letter.moved_unix_nano)
                                              if letter.moved_unix_nano else None),
                              "error": letter.reason, "damaged": letter.damaged,
                              "stored_by_replay": (None if stored is None
                                                   else letter.end in stored),
                          } for letter in index.letters]}, indent=2))
        return 0
    print(f"{len(index.letters)} dead {_letters(len(index.letters))} in {index.folder}")
    for letter in index.letters:
        size = "?" if letter.payload_bytes is None else f"{letter.payload_bytes:,}"
        print(f"  {iso_time(letter.received_unix_nano)}  {letter.signal:<6}  "
              f"{letter.items:,} items  {size} bytes  spool position {letter.end}")
        print(f"    error: {letter.reason}")
        if letter.damaged:
            print(f"    cannot be replayed: {letter.damaged}")
        if stored is not None and letter.end in stored:
            print("    already stored by a replay that was interrupted: the next "
                  "`tracemill dead-letters replay` only removes it")
    if stored is None and index.letters:
        print("(whether an interrupted replay stored some of them is not known while "
              "another process holds the store)")
    return 0


def _stored_by_replay(settings: Settings, index: Any) -> set[int] | None:
    """Spool positions of the letters an interrupted replay already stored; None when the
    store cannot be read now (a running collector holds it)."""
    from collector.dead_letters import stored_by_replay

    if not index.letters:
        return set()
    try:
        store = _open(settings, store_spool=False, read_only=True)
    except StoreLockedError:
        return None
    except StoreError:  # no store yet: nothing was replayed into it
        return set()
    try:
        return stored_by_replay(store, index)
    finally:
        store.close()


def _letters(count: int) -> str:
    return "letter" if count == 1 else "letters"


def _writable(settings: Settings, action: str) -> Any:
    """The store for writing; a clear refusal while a running process holds it."""
    try:
        return _open(settings, store_spool=False)
    except StoreLockedError as locked:
        from tracemill.service_info import read_service_info

        service = read_service_info(settings.db, locked.pid)
        holder = (f"a running `tracemill serve` (process {service.pid}, OTLP/HTTP on "
                  f"{service.http})" if service else str(locked).split(". DuckDB lets")[0])
        raise _Busy(
            f"cannot {action} the dead letters of {settings.db} while {holder} holds it: "
            "it may move more requests aside meanwhile. Stop it (it stores its spool on "
            f"the way out), run `tracemill dead-letters {action}` again, then start it "
            "again; `tracemill dead-letters list` works while it runs.") from None


def _dead_letters_replay(args: argparse.Namespace, settings: Settings) -> int:
    import duckdb

    from collector.dead_letters import replay

    store = _writable(settings, "replay")
    try:
        report = replay(store, _spool_of(settings), settings.max_commit_items)
    except (duckdb.Error, OSError) as exc:
        raise StoreError(f"replaying the dead letters into {settings.db} failed: {exc}; "
                         "what was stored before left the dead-letter files, the rest "
                         "stays for the next replay") from None
    finally:
        store.close()
    total = report.replayed + len(report.failing)
    print(f"replayed {report.replayed} of {total} dead {_letters(total)}: stored "
          f"{report.stored['traces']:,} spans and {report.stored['logs']:,} log records "
          f"({report.duplicates['traces'] + report.duplicates['logs']:,} items were "
          f"already stored, {report.rejected['traces'] + report.rejected['logs']:,} "
          "refused for bad ids or enums)")
    if report.stored_before:
        print(f"  {report.stored_before} had been stored by a replay that was interrupted "
              "before it removed them; they were only removed now")
    for letter in report.failing:
        why = letter.damaged or letter.reason
        print(f"  still failing: {letter.signal} request of {letter.items:,} items received "
              f"{iso_time(letter.received_unix_nano)}: {why}")
    if report.failing:
        print(f"{len(report.failing)} stay in {_spool_of(settings)}; replay them after "
              "another upgrade, or remove them with `tracemill dead-letters discard --yes`")
        return EXIT_GATE_FAILED
    return 0


def _dead_letters_discard(args: argparse.Namespace, settings: Settings) -> int:
    from collector.dead_letters import keep_only, read_dead_letters

    folder = _spool_of(settings)
    if not args.yes:
        count = len(read_dead_letters(folder).letters)
        raise TracemillError(
            f"not removing the {count} dead {_letters(count)} in {folder} without --yes "
            "(their items are never stored; `tracemill dead-letters list` shows them)")
    store = _writable(settings, "discard")
    try:
        index = read_dead_letters(folder)
        if index.letters or index.damaged_lines:
            keep_only(index, [], drop_damaged=True)
    finally:
        store.close()
    size = sum(letter.payload_bytes or 0 for letter in index.letters)
    print(f"removed {len(index.letters)} dead {_letters(len(index.letters))} "
          f"({sum(letter.items for letter in index.letters):,} items, {size:,} bytes) "
          f"from {folder}")
    return 0


class _Busy(StoreError):
    """The store is held by a running process, so the dead letters cannot be changed."""

    exit_code = StoreLockedError.exit_code
