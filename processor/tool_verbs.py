"""What a tool does, read from its name: change state (an action), read, or neither.

The first verb among the name's words decides (``get_refund_status`` reads,
``stripe_create_refund`` and ``orders.cancel`` act, ``cancelOrder`` acts); a name with no
known verb is neither. The processor reads it to pick the focal step of a conversation
when no step went wrong (:mod:`processor.axes`) and to tell an empty answer of a record
lookup from one of an action (:mod:`processor.results`). The lists are the processor's
own: it does not import the generator.
"""

from __future__ import annotations

import re

__all__ = ["is_action", "reads_a_record"]

_READ_VERBS = frozenset({
    "get", "lookup", "look", "find", "search", "list", "fetch", "read", "retrieve", "show",
    "view", "describe", "check", "calculate", "count", "query", "verify", "validate",
    "estimate", "browse", "inspect", "load", "track", "compute", "think", "ping"})
_ACTION_VERBS = frozenset({
    "cancel", "update", "create", "book", "refund", "modify", "exchange", "return", "send",
    "transfer", "delete", "enable", "disable", "suspend", "resume", "add", "remove",
    "change", "set", "issue", "submit", "place", "apply", "charge", "pay", "process",
    "approve", "reject", "close", "reopen", "assign", "upgrade", "downgrade", "activate",
    "deactivate", "reset", "register", "schedule", "reschedule", "confirm", "post", "put",
    "patch", "insert", "write", "upload", "move", "merge", "archive", "restore", "toggle",
    "redeem", "void", "capture", "authorize", "swap", "replace", "renew", "extend",
    "unlock", "lock", "block", "unblock", "escalate", "notify", "email", "reply",
    "comment", "refuel", "purchase", "buy", "sell", "grant", "revoke", "open",
    "edit", "save", "mark", "rebook", "reserve", "subscribe", "unsubscribe",
    "dispute", "credit", "debit", "withdraw", "deposit", "terminate", "start", "stop",
    "run", "execute", "trigger", "publish", "request", "initiate", "make"})
_RECORD_VERBS = frozenset({"get", "lookup", "look", "fetch", "read", "retrieve", "show",
                           "view", "describe", "load", "find"})
"""Verbs of tools that read one record: an empty answer from them means not found."""
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_tool_kinds: dict[str, str] = {}


def _tool_kind(tool: str) -> str:
    """``action``, ``read`` or ``other``: the first verb of the tool's name decides."""
    kind = _tool_kinds.get(tool)
    if kind is None:
        kind = "other"
        for word in _WORDS.findall(tool):
            word = word.lower()
            if word in _READ_VERBS:
                kind = "read"
                break
            if word in _ACTION_VERBS:
                kind = "action"
                break
        if len(_tool_kinds) < 100_000:  # tool names are few; bound it all the same
            _tool_kinds[tool] = kind
    return kind


def is_action(tool: str) -> bool:
    """Whether a tool's name says it changes state (``cancel_…``, ``update_…``, ``send_…``).

    The first verb among the name's words decides (``get_refund_status`` reads,
    ``stripe_create_refund`` acts); a name with no known verb is not an action.
    """
    return _tool_kind(tool) == "action"


def reads(tool: str | None) -> bool:
    """Whether the tool's name says it only reads (a known reading verb comes first:
    ``get_…``, ``search_…``, ``list_…``); False for actions, unknown verbs and no name."""
    return tool is not None and _tool_kind(tool) == "read"


def reads_a_record(tool: str | None) -> bool:
    """Whether the tool's first verb reads one record (get, lookup, fetch, read, retrieve,
    show, view, describe, load, find), so that an empty answer means there is none; False
    for searches and lists (an empty list is an answer), actions, and no name."""
    if tool is None or _tool_kind(tool) != "read":
        return False
    first = next((word.lower() for word in _WORDS.findall(tool)
                  if word.lower() in _READ_VERBS), None)
    return first in _RECORD_VERBS
