"""The processor's commands: ``process``, ``map``, ``conversations``, ``report``, ``label``.

:func:`add_commands` adds them to the ``tracemill`` parser; each handler gets the parsed
arguments and the process's :class:`~tracemill.config.Settings` and returns an exit code
(0 ok, 1 a ``--fail-on`` gate failed, 2 a usage error such as an unknown id, 3 the store
is locked and no running service answered). Every command but ``label`` processes new
spans first. While ``tracemill serve`` holds the store, every one of them goes through its
admin API (:func:`tracemill.collector_client.ask_api`: ``POST /process`` first, then the
same records the offline path reads) and prints the same output; values of the
``redact`` keys are masked either way (:mod:`tracemill.redact`).

Heavy modules are imported inside the handlers, so that ``tracemill --help`` and the
collector's commands start fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tracemill.config import Settings
from tracemill.errors import StoreLockedError, TracemillError

__all__ = ["ProcessSummary", "add_commands", "process_summary", "report_content"]

Options = Callable[[argparse.ArgumentParser], None]


def add_commands(commands: Any, common: Options, processing: Options) -> None:
    """Add the processor's commands to the subcommand parsers. ``common``: the options
    every command has (store, config, logs); ``processing``: those of the commands that
    process (common ones plus how outcomes and coordinates are read)."""
    process = commands.add_parser(
        "process", help="Turn new spans into conversations and rebuild the failure map.",
        description="Incremental: only conversations touched by new spans, log records or "
                    "labels are rebuilt. map, conversations and report run it first.")
    processing(process)
    process.set_defaults(handler=_process)

    fmap = commands.add_parser(
        "map", help="Print the failure map: situations by status, worst first.",
        description="A situation is the smallest set of coordinates that isolates one group "
                    "of failing conversations. Each is new, persistent, fixed or uncertain "
                    "between the latest model version and the previous one, with fail rates, "
                    "95%% intervals and the reason. --json prints one record per situation "
                    "(the same records a running `tracemill serve` answers at /map).")
    processing(fmap)
    fmap.add_argument("--json", action="store_true",
                      help="Print the records as JSON (situations, or cells with --cells).")
    fmap.add_argument("--situation", metavar="ID",
                      help="Show one situation with its example conversations.")
    fmap.add_argument("--conversations", action="store_true",
                      help="With --situation: list every member conversation id.")
    fmap.add_argument("--cells", action="store_true",
                      help="Print the pair cells behind the situations instead.")
    fmap.add_argument("--all", action="store_true",
                      help="With --cells: include passing cells.")
    fmap.add_argument("--http-address", metavar="HOST:PORT",
                      help="OTLP/HTTP address of a running service that holds the store "
                           "(only needed when it wrote no service file beside the store; "
                           "its admin API is taken to be on the next port).")
    fmap.add_argument("--api-address", metavar="HOST:PORT",
                      help="Admin API address of a running service that holds the store "
                           "(only needed when it wrote no service file beside the store).")
    fmap.add_argument("--limit", type=int, default=40, metavar="N",
                      help="Most situations or cells to print as text (default 40).")
    fmap.set_defaults(handler=_map)

    conversations = commands.add_parser(
        "conversations", help="List conversations, or show one: `conversations show ID`.",
        description="Without arguments, one line per conversation (newest first); filters "
                    "combine. `conversations show ID` prints one conversation in order: "
                    "system, user, assistant with tool calls, tool results, then "
                    "evaluations, outcome and coordinates. --json prints full records "
                    "(messages in OpenAI chat format, tools, steps, the six coordinates).")
    processing(conversations)
    conversations.add_argument("action", nargs="?", choices=["show"],
                               help="show: print the conversation ID in full.")
    conversations.add_argument("conversation_id", nargs="?", metavar="ID",
                               help="The conversation to show.")
    conversations.add_argument("--json", action="store_true",
                               help="Print full records as JSON lines.")
    conversations.add_argument("--outcome", choices=["pass", "fail", "ungraded"],
                               help="Only conversations with this outcome.")
    conversations.add_argument("--version", metavar="V", help="Only this model version.")
    conversations.add_argument("--tool", metavar="NAME", help="Only this tool axis value.")
    conversations.add_argument("--situation", metavar="ID",
                               help="Only members of this situation (see `tracemill map`).")
    conversations.add_argument("--limit", type=int, default=50, metavar="N",
                               help="Most conversations to print (default 50).")
    conversations.set_defaults(handler=_conversations)

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

    label = commands.add_parser(
        "label", help="Attach outcomes from a CSV or JSON-lines file.",
        description="Columns: conversation_id, trace_id or rollout_id (a generated "
                    "conversation: human labels on rollouts measure judges, see `tracemill "
                    "judges`); passed and/or reward; kind (human|program|model); "
                    "labeled_by; note.")
    common(label)
    label.add_argument("file", type=Path, metavar="FILE", help="The CSV or .jsonl file.")
    label.add_argument("--by", metavar="NAME",
                       help="labeled_by for rows that do not name it.")
    label.set_defaults(handler=_label)


# --------------------------------------------------------------------------- plumbing


def _open(settings: Settings, **options: Any) -> Any:
    from tracemill.store import open_configured

    return open_configured(settings, **options)


def _processed(settings: Settings, environ: Mapping[str, str]) -> tuple[Any, Any]:
    """The store, opened and brought up to date (the caller closes it), and what
    processing did. ``environ``: model keys for ``--stance-model``. Raises
    ``StoreLockedError`` while a service holds the store (see :func:`_process_remote`)."""
    from processor.run import ProcessOptions, process

    store = _open(settings)
    try:
        result = process(store, ProcessOptions.from_settings(settings), credentials=environ)
    except BaseException:
        store.close()
        raise
    return store, result


def _process_remote(settings: Settings, locked: StoreLockedError) -> dict[str, Any]:
    """Ask the service holding the store to process new spans now (as the offline path
    does first); returns its answer (:class:`tracemill.api.Processed`)."""
    from tracemill.collector_client import ask_api

    answer: dict[str, Any] = ask_api(settings, "/process", locked, body={}, timeout=3600)
    return answer


def _print(text: str) -> None:
    print(text, flush=True)


def _redactor(settings: Settings) -> Any:
    from tracemill.redact import redactor

    return redactor(settings.redact)


# --------------------------------------------------------------------------- process


def _process(args: argparse.Namespace, settings: Settings) -> int:
    from processor.map_records import read_situations

    try:
        store, result = _processed(settings, args.environ)
    except StoreLockedError as locked:  # a running `serve` holds it: it processes
        done = ProcessSummary(**_process_remote(settings, locked))
    else:
        try:
            cursor = store.cursor()
            try:
                situations = read_situations(cursor)
            finally:
                cursor.close()
        finally:
            store.close()
        done = process_summary(result, situations)
    _print(f"rebuilt {done.conversations_rebuilt} conversations from {done.spans_read} "
           f"spans and {done.log_records_read} log records in {done.seconds:.1f}s; "
           f"failure map: {done.situations} situations"
           + (" (" + ", ".join(f"{n} {s}" for s, n in done.statuses.items()) + ")"
              if done.statuses else "") + "; `tracemill map` lists them")
    if done.stance_model is not None:
        _print(done.stance_model)
    return 0


class ProcessSummary(BaseModel):
    """What one processing run did, as ``tracemill process`` prints it (also the admin
    API's ``POST /process`` answer)."""

    conversations_rebuilt: int = Field(description="Conversations built or rebuilt.")
    spans_read: int = Field(description="Spans read to do so.")
    log_records_read: int = Field(description="Log records read.")
    seconds: float = Field(description="Wall time.")
    situations: int = Field(description="Situations in the failure map.")
    statuses: dict[str, int] = Field(description="Situations per status.")
    stance_model: str | None = Field(description="What the stance model did, if it ran.")


def process_summary(result: Any, situations: list[Any]) -> ProcessSummary:
    """The summary of a :class:`~processor.run.ProcessResult` and the map it left."""
    statuses: dict[str, int] = {}
    for situation in situations:
        statuses[situation.status] = statuses.get(situation.status, 0) + 1
    stance = None
    if result.stance_model is not None:
        run = result.stance_model
        stance = (f"stance model {run.model}: {run.asked} asked, {run.unparseable} "
                  f"unparseable, {run.applied} stances changed"
                  + (f"; DEGRADED, {run.failed} kept the pattern stance: {run.error}"
                     if run.degraded else ""))
    return ProcessSummary(conversations_rebuilt=result.conversations_rebuilt,
                          spans_read=result.spans_read,
                          log_records_read=result.log_records_read, seconds=result.seconds,
                          situations=len(situations), statuses=statuses,
                          stance_model=stance)


# --------------------------------------------------------------------------- map


def _map(args: argparse.Namespace, settings: Settings) -> int:
    from processor.conversation_records import read_conversations
    from processor.map_records import CellRecord, SituationRecord, read_cells, read_situations

    examples: dict[str, list[Any]] = {}
    redact = _redactor(settings)
    try:
        store, _ = _processed(settings, args.environ)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        from tracemill.collector_client import ask_api

        _process_remote(settings, locked)
        # on stderr: stdout is the same as offline, for scripts and for `diff`
        print("tracemill map: from the running collector (`tracemill serve`, processed "
              "just now)", file=sys.stderr)
        situations = [SituationRecord(**s) for s in ask_api(settings, "/map", locked)]
        cells = ([CellRecord(**c) for c in ask_api(settings, "/map/cells", locked)]
                 if args.cells else [])
        if args.situation and not args.conversations and not args.json:
            examples = {s.situation_id: _conversations_by_id(settings, locked, s.examples)
                        for s in situations if s.situation_id == args.situation}
    else:
        try:
            cursor = store.cursor()
            try:
                situations = read_situations(cursor)
                cells = read_cells(cursor) if args.cells else []
                if args.situation and not args.conversations and not args.json:
                    examples = {s.situation_id: [
                        redact.model(record) for i in s.examples
                        for record in read_conversations(cursor, conversation_id=i, limit=1)]
                        for s in situations if s.situation_id == args.situation}
            finally:
                cursor.close()
        finally:
            store.close()
    if args.situation is not None:
        return _one_situation(args, situations, examples)
    if args.cells:
        shown_cells = [c for c in cells if args.all or c.status != "passing"]
        if args.json:
            _print("[" + ",\n".join(c.model_dump_json(indent=2) for c in shown_cells) + "]")
        else:
            from processor.terminal import cells_table

            _print(cells_table(shown_cells, args.limit))
        return 0
    if args.json:
        _print("[" + ",\n".join(s.model_dump_json(indent=2) for s in situations) + "]")
        return 0
    from processor.terminal import situations_text

    _print(situations_text(situations, args.limit))
    return 0


def _one_situation(args: argparse.Namespace, situations: list[Any],
                   examples: dict[str, list[Any]]) -> int:
    from processor.errors import UnknownSituation
    from processor.terminal import situation_text

    found = [s for s in situations if s.situation_id == args.situation]
    if not found:
        known = ", ".join(s.situation_id for s in situations[:10]) or "none"
        raise UnknownSituation(
            f"no situation {args.situation!r} in the failure map (ids change only with their "
            f"coordinates); known: {known}; `tracemill map` lists them")
    situation = found[0]
    if args.conversations:
        if args.json:
            import json

            _print(json.dumps(situation.member_ids))
        else:
            for conversation_id in situation.member_ids:
                _print(conversation_id)
        return 0
    if args.json:
        _print(situation.model_dump_json(indent=2))
        return 0
    _print(situation_text(situation, examples.get(situation.situation_id, [])))
    return 0


# --------------------------------------------------------------------------- conversations


def _conversations(args: argparse.Namespace, settings: Settings) -> int:
    from processor.conversation_records import read_conversations
    from processor.errors import UnknownConversation
    from processor.terminal import conversation_text, conversations_table

    if args.action == "show" and not args.conversation_id:
        raise UnknownConversation("`conversations show` needs a conversation id: "
                                  "`tracemill conversations show ID` (ids: `tracemill "
                                  "conversations`)")
    if args.action is None and args.conversation_id is not None:
        raise UnknownConversation(f"unexpected {args.conversation_id!r}: to print one "
                                  "conversation, use `tracemill conversations show ID`")
    try:
        store, _ = _processed(settings, args.environ)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        records = _conversations_from_api(args, settings, locked)
    else:
        try:
            cursor = store.cursor()
            try:
                if args.action == "show":
                    records = read_conversations(cursor, conversation_id=args.conversation_id,
                                                 limit=1)
                else:
                    records = read_conversations(
                        cursor, outcome=args.outcome, version=args.version, tool=args.tool,
                        situation=args.situation, limit=args.limit)
            finally:
                cursor.close()
        finally:
            store.close()
        redact = _redactor(settings)
        records = [redact.model(record) for record in records]
    if args.action == "show":
        if not records:
            raise UnknownConversation(
                f"no conversation {args.conversation_id!r} in {settings.db}; `tracemill "
                "conversations` lists them (ids are gen_ai.conversation.id, session.id or "
                "the trace id)")
        _print(records[0].model_dump_json(indent=2) if args.json
               else conversation_text(records[0]))
        return 0
    if args.json:
        for record in records:
            _print(record.model_dump_json())
    else:
        _print(conversations_table(records))
    return 0


def _conversations_from_api(args: argparse.Namespace, settings: Settings,
                            locked: StoreLockedError) -> list[Any]:
    from urllib.parse import quote

    from processor.conversation_records import ConversationRecord
    from tracemill.collector_client import ApiNotFound, ask_api

    _process_remote(settings, locked)
    if args.action == "show":
        try:
            return [ConversationRecord(**ask_api(
                settings, f"/conversations/{quote(args.conversation_id, safe='')}", locked))]
        except ApiNotFound:
            return []
    return [ConversationRecord(**row) for row in ask_api(
        settings, "/conversations", locked, params={
            "outcome": args.outcome, "version": args.version, "tool": args.tool,
            "situation": args.situation, "limit": args.limit})]


# --------------------------------------------------------------------------- report


def report_content(cursor: Any, options: Any, periods: Any, since: str | None,
                   redact: Any) -> tuple[Any, dict[str, list[Any]]]:
    """The trace report (a regression report with ``since``: the latest model version
    against ``since``) and up to three example conversations per situation, redacted.

    With ``since``, or without ``periods`` (what the last processing compared), the map
    is computed again inside a transaction that is rolled back: the stored map (what
    serve, map and generate read) keeps comparing the latest two versions."""
    from processor.conversation_records import ConversationRecord, read_conversations
    from processor.failure_map import compute_map, store_map
    from processor.map_records import read_situations
    from processor.report import build_report

    recompute = since is not None or periods is None
    if recompute:
        cursor.begin()
    try:
        if recompute:
            computed = compute_map(cursor, options.exploration, baseline=since,
                                   min_support=options.min_support)
            store_map(cursor, computed)
            periods = computed.periods
        situations = read_situations(cursor)
        report = build_report(cursor, periods, situations)
        examples = {s.situation_id: [
            record for i in s.examples[:3]
            for record in read_conversations(cursor, conversation_id=i, limit=1)]
            for s in situations}
    finally:
        if recompute:
            cursor.rollback()
    if redact:  # as one document: a value masked in an example is masked in the report too
        masked = redact.apply({"report": report.model_dump(mode="json"), "examples": {
            key: [r.model_dump(mode="json") for r in records]
            for key, records in examples.items()}})
        report = type(report).model_validate(masked["report"])
        examples = {key: [ConversationRecord.model_validate(r) for r in records]
                    for key, records in masked["examples"].items()}
    return report, examples


def _report(args: argparse.Namespace, settings: Settings) -> int:
    from processor.report import GATES, gate, to_markdown
    from processor.report_html import to_html
    from processor.run import ProcessOptions

    try:
        store, result = _processed(settings, args.environ)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        report, examples = _report_from_api(args, settings, locked)
    else:
        try:
            cursor = store.cursor()
            try:
                report, examples = report_content(
                    cursor, ProcessOptions.from_settings(settings), result.periods,
                    args.since, _redactor(settings))
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
    _print(f"wrote {out / 'report.md'}, {out / 'report.json'}, {out / 'report.html'}")
    for line in report.summary:
        _print(f"- {line}")
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

    _process_remote(settings, locked)
    try:
        answer = (ask_api(settings, "/reports/regression", locked, params={"since": args.since})
                  if args.since is not None else ask_api(settings, "/reports/trace", locked))
    except ApiNotFound as exc:
        raise UnknownVersion(str(exc)) from None
    examples = {key: [ConversationRecord(**record) for record in records]
                for key, records in answer["examples"].items()}
    return TraceReport(**answer["report"]), examples


def _conversations_by_id(settings: Settings, locked: StoreLockedError,
                         ids: list[str]) -> list[Any]:
    """The conversations of ``ids`` that the running service knows, in order."""
    from urllib.parse import quote

    from processor.conversation_records import ConversationRecord
    from tracemill.collector_client import ApiNotFound, ask_api

    found = []
    for conversation_id in ids:
        try:
            found.append(ConversationRecord(**ask_api(
                settings, f"/conversations/{quote(conversation_id, safe='')}", locked)))
        except ApiNotFound:
            continue
    return found


# --------------------------------------------------------------------------- label


def _label(args: argparse.Namespace, settings: Settings) -> int:
    from processor.labels import read_labels, store_labels, unknown_targets

    labels = read_labels(args.file, args.by)
    try:
        store = _open(settings)
    except StoreLockedError as locked:  # a running `serve` holds it: post to its API
        from tracemill.collector_client import ask_api

        count, unknown = 0, []
        for label in labels:
            answer = ask_api(settings, "/labels", locked, body={
                "conversation_id": label.target, "passed": label.passed,
                "reward": label.reward, "kind": label.kind, "labeled_by": label.labeled_by,
                "note": label.note})
            count += int(answer["stored"])
            unknown += answer["unknown"]
    else:
        try:
            count = store_labels(store, labels, args.file)
            unknown = unknown_targets(store, labels)
        finally:
            store.close()
    _print(f"stored {count} labels from {args.file}; the next map or report uses them")
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5
                                          else "")
        print(f"warning: {len(unknown)} labels name no processed conversation, trace or "
              f"rollout: {shown} (a typo, or spans not processed yet: run `tracemill "
              "process`)", file=sys.stderr)
    return 0
