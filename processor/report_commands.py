"""``tracemill report``: the trace report (Markdown, JSON, HTML) and its CI gate.

:func:`report_content` is also what the admin API answers at ``/reports/trace`` and
``/reports/regression``, so a report written through a running service is the same one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from processor.map_commands import compared_with
from processor.process_commands import process_remote, processed, redactor_of, say
from tracemill.config import Settings
from tracemill.errors import StoreLockedError, TracemillError

__all__ = ["add_report_command", "report_content"]

Options = Callable[[argparse.ArgumentParser], None]


def add_report_command(commands: Any, processing: Options) -> None:
    """Add ``report`` to the subcommand parsers."""
    report = commands.add_parser(
        "report", help="Write the trace report (Markdown, JSON, HTML); gate CI on regressions.",
        description="Starts with plain sentences (what broke, what still fails, what was "
                    "fixed), then situations with intervals and their conversations. With "
                    "--since VERSION the statuses compare the latest model version with "
                    "VERSION (the stored map is left as it is).")
    processing(report)
    report.add_argument("--out", type=Path, default=Path("tracemill-report"), metavar="DIR",
                        help="Folder for report.md, report.json, report.html "
                             "(default ./tracemill-report).")
    report.add_argument("--since", metavar="VERSION",
                        help="Compare the latest model version with this one.")
    report.add_argument("--fail-on", choices=["new", "persistent", "any"],
                        help="Exit 1 when a situation has this status (new: significant new "
                             "failures; any: new or persistent), ignoring low-support ones.")
    report.set_defaults(handler=_report)


def report_content(cursor: Any, options: Any, periods: Any, since: str | None,
                   redact: Any) -> tuple[Any, dict[str, list[Any]]]:
    """The trace report (a regression report with ``since``: the latest model version
    against ``since``) and up to three example conversations per situation, redacted.

    With ``since``, or without ``periods`` (what the last processing compared), the map
    is computed again inside a transaction that is rolled back
    (:func:`processor.map_commands.compared_with`): the stored map (what serve, map and
    generate read) keeps comparing the latest two versions."""
    from processor.conversation_records import ConversationRecord

    if since is not None or periods is None:
        with compared_with(cursor, options, since) as compared:
            report, examples = _content(cursor, compared)
    else:
        report, examples = _content(cursor, periods)
    if redact:  # as one document: a value masked in an example is masked in the report too
        masked = redact.apply({"report": report.model_dump(mode="json"), "examples": {
            key: [r.model_dump(mode="json") for r in records]
            for key, records in examples.items()}})
        report = type(report).model_validate(masked["report"])
        examples = {key: [ConversationRecord.model_validate(r) for r in records]
                    for key, records in masked["examples"].items()}
    return report, examples


def _content(cursor: Any, periods: Any) -> tuple[Any, dict[str, list[Any]]]:
    from processor.conversation_records import read_conversations
    from processor.map_records import read_situations
    from processor.report import build_report

    situations = read_situations(cursor)
    report = build_report(cursor, periods, situations)
    examples = {s.situation_id: [
        record for i in s.examples[:3]
        for record in read_conversations(cursor, conversation_id=i, limit=1)]
        for s in situations}
    return report, examples


def _report(args: argparse.Namespace, settings: Settings) -> int:
    from processor.report import GATES, gate, to_markdown
    from processor.report_html import to_html
    from processor.run import ProcessOptions

    try:
        store, result = processed(settings, args.environ)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        report, examples = _report_from_api(args, settings, locked)
    else:
        try:
            cursor = store.cursor()
            try:
                report, examples = report_content(
                    cursor, ProcessOptions.from_settings(settings), result.periods,
                    args.since, redactor_of(settings))
            finally:
                cursor.close()
        finally:
            store.close()
    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
        (out / "report.md").write_text(to_markdown(report), encoding="utf-8")
        (out / "report.html").write_text(to_html(report, examples), encoding="utf-8")
    except OSError as exc:
        raise TracemillError(f"cannot write the report to {out}: {exc.strerror}") from None
    say(f"wrote {out / 'report.md'}, {out / 'report.json'}, {out / 'report.html'}")
    for line in report.summary:
        say(f"- {line}")
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.fail_on:
        hits = gate(report.situations, args.fail_on)
        if hits:
            print(f"{len(hits)} situations are {' or '.join(sorted(GATES[args.fail_on]))} "
                  f"({', '.join(s.label for s in hits[:3])}"
                  f"{' ...' if len(hits) > 3 else ''}); failing as asked (--fail-on)",
                  file=sys.stderr)
            return 1
    return 0


def _report_from_api(args: argparse.Namespace, settings: Settings,
                     locked: StoreLockedError) -> tuple[Any, dict[str, list[Any]]]:
    from processor.conversation_records import ConversationRecord
    from processor.errors import UnknownVersion
    from processor.report import TraceReport
    from tracemill.collector_client import ApiNotFound, ask_api

    process_remote(settings, locked)
    try:
        answer = (ask_api(settings, "/reports/regression", locked, params={"since": args.since})
                  if args.since is not None else ask_api(settings, "/reports/trace", locked))
    except ApiNotFound as exc:
        raise UnknownVersion(str(exc)) from None
    examples = {key: [ConversationRecord(**record) for record in records]
                for key, records in answer["examples"].items()}
    return TraceReport(**answer["report"]), examples
