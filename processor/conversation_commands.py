"""``tracemill conversations``: list processed conversations, or show one in full.

Ids are whatever the agent's instrumentation used (``gen_ai.conversation.id``,
``session.id``, a trace id) and may hold any character, ``/`` included: through a
running service they travel percent-encoded in one path segment of
``GET /api/v1/conversations/{id}``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from processor.process_commands import process_remote, processed, redactor_of, say
from tracemill.config import Settings
from tracemill.errors import StoreLockedError

__all__ = ["add_conversations_command", "conversations_by_id"]

Options = Callable[[argparse.ArgumentParser], None]


def add_conversations_command(commands: Any, processing: Options) -> None:
    """Add ``conversations`` to the subcommand parsers."""
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


def conversation_path(conversation_id: str) -> str:
    """The admin API path of one conversation (the id percent-encoded, ``/`` too)."""
    return f"/conversations/{quote(conversation_id, safe='')}"


def conversations_by_id(settings: Settings, locked: StoreLockedError,
                        ids: list[str]) -> list[Any]:
    """The conversations of ``ids`` that the running service knows, in order."""
    from processor.conversation_records import ConversationRecord
    from tracemill.collector_client import ApiNotFound, ask_api

    found = []
    for conversation_id in ids:
        try:
            found.append(ConversationRecord(**ask_api(
                settings, conversation_path(conversation_id), locked)))
        except ApiNotFound:
            continue
    return found


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
        store, _ = processed(settings, args.environ)
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
        redact = redactor_of(settings)
        records = [redact.model(record) for record in records]
    if args.action == "show":
        if not records:
            raise UnknownConversation(
                f"no conversation {args.conversation_id!r} in {settings.db}; `tracemill "
                "conversations` lists them (ids are gen_ai.conversation.id, session.id or "
                "the trace id)")
        say(records[0].model_dump_json(indent=2) if args.json
            else conversation_text(records[0]))
        return 0
    if args.json:
        for record in records:
            say(record.model_dump_json())
    else:
        say(conversations_table(records))
    return 0


def _conversations_from_api(args: argparse.Namespace, settings: Settings,
                            locked: StoreLockedError) -> list[Any]:
    from processor.conversation_records import ConversationRecord
    from tracemill.collector_client import ask_api

    process_remote(settings, locked)
    if args.action == "show":
        return conversations_by_id(settings, locked, [args.conversation_id])
    return [ConversationRecord(**row) for row in ask_api(
        settings, "/conversations", locked, params={
            "outcome": args.outcome, "version": args.version, "tool": args.tool,
            "situation": args.situation, "limit": args.limit})]
