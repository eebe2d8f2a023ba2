"""Message-shaped values, in any dialect, to :class:`~processor.records.Message` records.

Shared by the dialect readers (:mod:`processor.dialects`, :mod:`processor._tool_spans`):
they find where a span keeps its messages, this module reads them. A message may be

* in ``parts`` form (GenAI semantic conventions): ``{role, parts: [{type: text, content},
  {type: tool_call, id, name, arguments}, {type: tool_call_response, id, response |
  result}, {type: reasoning, ...}], finish_reason}``;
* in the OpenAI wire form (legacy record bodies, OpenInference, OpenLLMetry):
  ``{role, content, tool_calls: [{id, function: {name, arguments}}], tool_call_id}``,
  whose ``content`` may be text, a list of content blocks, or such a list encoded as JSON
  text (OpenLLMetry, Strands);
* with Anthropic (``tool_use``, ``tool_result``) or Bedrock (``{text}``, ``{toolUse}``,
  ``{toolResult}``) content blocks.

Normalisation: roles ``developer`` → system, ``human`` → user, ``model``/``ai``/``bot`` →
assistant, ``function``/``ipython`` → tool, an unknown role takes the side's default (user
for input, assistant for output). Tool results become ``tool`` messages bound to their
call id, also when sent back inside a ``user`` message (pydantic-ai, Strands,
Anthropic-style blocks); a message holding several results becomes several messages, the
results first. Finish reasons are lower case, ``tool_call``/``tool_use``/``function_call``
→ ``tool_calls``, ``end_turn``/``stop_sequence`` → ``stop``, ``max_tokens`` → ``length``.
Text is the text parts joined by newlines; ``reasoning`` parts and media are not text.
Arguments and structured results become compact JSON text; text is kept as sent.

Content that was not captured is ``None`` and flags its :class:`Side` as ``missing``: a
text part without content, a record without ``content`` (unless it is an assistant
message with tool calls), a tool call without arguments, a result without a value, and
OpenInference's ``__REDACTED__``. A list of messages that is not JSON cannot be read: it
gives no messages and is flagged missing.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from processor._constructors import new_message, new_tool_call
from processor._json import (
    ABSENT,
    decode,
    first_present,
    first_str,
    json_in_text,
    json_text,
    json_value,
    lead,
)
from processor.records import Message, Role, ToolCall

__all__ = [
    "REDACTED",
    "Content",
    "Side",
    "as_blocks",
    "merge",
    "message_list",
    "normalise_finish_reason",
    "normalise_role",
    "read_message",
    "result_text",
    "wire_list",
]

REDACTED = "__REDACTED__"
"""OpenInference's stand-in for hidden content."""


class Side(NamedTuple):
    """The input or the output messages as one channel records them."""

    messages: tuple[Message, ...]
    missing: bool = False


# Hot paths below test ``type(x) is dict`` (or list, str) before the ``isinstance`` check
# against the abstract ``Mapping``: decoded JSON is made of exact dicts and lists, and the
# abstract check is several times slower. Both give the same answer.

# --------------------------------------------------------------------------- messages


def message_list(value: object, default_role: Role) -> Side | None:
    """A JSON list of messages (``parts`` or wire form); None when absent, nothing but
    ``missing`` when it cannot be read."""
    if value is None:
        return None
    if type(value) is str:
        if default_role == "user":  # inputs: see _input_list
            return _input_list(value)
        try:
            decoded = decode(value)
        except ValueError:
            return Side((), missing=True)
        if not isinstance(decoded, list):
            return Side((), missing=True)
        return wire_list(decoded, default_role)
    decoded = json_value(value)
    if not isinstance(decoded, list):
        return Side((), missing=True)
    return wire_list(decoded, default_role)


_RECENT: deque[tuple[str, Side]] = deque(maxlen=4)
"""The last input lists read from JSON text: (the text without its closing ``]``, what
was read)."""
_LEADS: dict[str, list[tuple[str, Side]]] = {}
"""Leading system messages of input lists, by the first ``_LEAD_KEY`` characters of
the text: (the text up to the end of that message, what it reads as). A list starting
with a system message is kept the second time its key is seen, at most two a key."""
_LEAD_KEY = 64
_LEADS_KEPT = 128
_scan: Any = vars(json.JSONDecoder())["scan_once"]  # (text, index) -> (value, end)


def _input_list(text: str) -> Side:
    """:func:`message_list` of a model call's input as JSON text, reading only the
    messages that follow a list or a message read before.

    A model call's input is the conversation so far, so the next call's input is often
    the previous one with messages appended: ``[a,b]`` then ``[a,b,c,d]``; and calls of
    other conversations often start with the same system message: ``[s,x]`` then
    ``[s,y]``. Messages are read one by one, so the longer list reads as ``a, b`` (as
    read before) followed by ``[c,d]`` read alone. Exactly so: when ``[a,b`` is the start
    of a JSON list up to the end of an item (``[a,b]`` is JSON) and the text is ``[a,b``
    + ``,`` + ``c,d]``, the text is JSON if and only if ``[c,d]`` is, and is then the list
    ``a, b, c, d``; ``[c,d]`` must not be empty (``[a,b,]`` is not JSON).
    """
    for head, known in tuple(_RECENT):  # a copy: other threads may add to it
        found = _after(text, head, known)
        if found is not None:
            return found
    key = text[:_LEAD_KEY]
    for head, known in _LEADS.get(key, ()):
        found = _after(text, head, known)
        if found is not None:
            return found
    try:
        decoded = decode(text)
    except ValueError:
        return Side((), missing=True)
    if not isinstance(decoded, list):
        return Side((), missing=True)
    side = wire_list(decoded, "user")
    if decoded and text[-1:] == "]":
        _RECENT.appendleft((text[:-1], side))
        first = decoded[0]
        if (
            len(decoded) > 1
            and type(first) is dict
            and normalise_role(first.get("role"), "user") == "system"
        ):
            _rememberlead(text, key, first)
    return side


def _after(text: str, head: str, known: Side) -> Side | None:
    """``text`` read as ``head`` (the start of a list read as ``known``), ``,`` and more
    items; None when it is not that."""
    end = len(head)
    if not (text.startswith(head) and text[end : end + 1] == ","):
        return None
    try:
        appended = decode("[" + text[end + 1 :])
    except ValueError:
        return None
    if type(appended) is not list or not appended:
        return None
    added = wire_list(appended, "user")
    side = Side(known.messages + added.messages, known.missing or added.missing)
    if text[-1:] == "]":
        _RECENT.appendleft((text[:-1], side))
    return side


def _rememberlead(text: str, key: str, first: dict[str, Any]) -> None:
    """Keep the first item of the list ``text`` (decoded: ``first``) as a lead, the
    second time a list of this key is read in full."""
    leads = _LEADS.get(key)
    if leads is None:
        if len(_LEADS) >= _LEADS_KEPT:
            _LEADS.clear()
        _LEADS[key] = []
        return
    if len(leads) >= 2:
        return
    start = 1
    while text[start : start + 1] in (" ", "\t", "\n", "\r"):
        start += 1
    if text[:1] != "[" or not text[start : start + 1]:
        return
    try:
        _, end = _scan(text, start)
    except (StopIteration, ValueError, RecursionError):
        return
    if end < _LEAD_KEY or text[end : end + 1] != ",":
        return
    leads.append((text[:end], wire_list([first], "user")))


def wire_list(items: Iterable[Any], default_role: Role) -> Side:
    """Decoded messages in order; an item that is not an object is unreadable."""
    messages: list[Message] = []
    missing = False
    for item in items:
        if type(item) is dict or isinstance(item, Mapping):
            if _read_into(messages, item, default_role):
                missing = True
        else:
            missing = True
    return Side(tuple(messages), missing)


def merge(sides: Iterable[Side]) -> Side:
    """The messages of ``sides`` in order, missing if any of them is."""
    messages: list[Message] = []
    missing = False
    for side in sides:
        messages.extend(side.messages)
        missing = missing or side.missing
    return Side(tuple(messages), missing)


def read_message(body: Mapping[str, Any], default_role: Role) -> Side:
    """One message: ``{role, parts, finish_reason}`` (GenAI conventions) or the wire form
    ``{role, content, tool_calls, tool_call_id}`` (OpenAI, legacy record bodies); may
    become several messages when it carries tool results."""
    messages: list[Message] = []
    missing = _read_into(messages, body, default_role)
    return Side(tuple(messages), missing)


def _read_into(messages: list[Message], body: Mapping[str, Any], default_role: Role) -> bool:
    """:func:`read_message`, its messages appended to ``messages``; whether content is
    missing."""
    role = body.get("role")
    role = _ROLES.get(role.lower(), default_role) if isinstance(role, str) else default_role
    if "parts" in body:
        parts = body["parts"]
        if type(parts) is list and len(parts) == 1 and role != "tool":
            # one text part, the most common message, read here as Content would
            part = parts[0]
            if type(part) is dict and part.get("type") == "text":
                text = part.get("content", REDACTED)
                if type(text) is str and text != REDACTED:
                    messages.append(
                        new_message(
                            role,
                            text,
                            (),
                            None,
                            normalise_finish_reason(body.get("finish_reason")),
                        )
                    )
                    return False
        content = Content()
        content.read(parts)
    else:
        content = Content()
        if "content" in body:
            content.read(body["content"])
        elif role != "assistant" or "tool_calls" not in body:
            content.missing = True  # the record keeps its shape but not its content
        if "tool_calls" in body:
            calls = json_value(body["tool_calls"])
            if isinstance(calls, list):
                for call in calls:
                    content.read_wire_call(call)
    call_id = first_str(body, ("tool_call_id", "id")) if role == "tool" else None
    texts = content.texts
    calls = content.calls
    if content.results:
        messages.extend(
            new_message("tool", text, (), result_id or call_id)
            for result_id, text in content.results
        )
        if not (texts or calls):
            return content.missing
    messages.append(
        new_message(
            role,
            "\n".join(texts) if texts else None,
            tuple(calls),
            call_id,
            normalise_finish_reason(body.get("finish_reason")),
        )
    )
    return content.missing


_TEXT_PARTS = ("text", "input_text", "output_text")
_CALL_PARTS = ("tool_call", "tool_use", "function_call")
_RESULT_PARTS = ("tool_call_response", "tool_result", "function_call_output")


class Content:
    """Text, tool calls and tool results gathered from a message's content."""

    __slots__ = ("calls", "missing", "results", "texts")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        self.results: list[tuple[str | None, str | None]] = []
        self.missing = False

    def read(self, content: Any) -> None:
        """Content as text, a list of parts or blocks, or such a list as JSON text."""
        kind = type(content)
        if kind is list:
            for part in content:
                # the common parts read here as read_part would, any part by read_part
                if type(part) is dict:
                    part_type = part.get("type")
                    if part_type == "text":
                        text = part.get("content", REDACTED)
                        if type(text) is str and text != REDACTED:
                            self.texts.append(text)
                            continue
                    elif part_type == "tool_call":
                        self._call(
                            part.get("name"),
                            first_str(part, ("id", "call_id")),
                            part.get("arguments", part.get("input", ABSENT)),
                        )
                        continue
                    elif part_type == "tool_call_response":
                        self._result(
                            first_str(part, ("id", "tool_use_id", "call_id")),
                            first_present(part, ("response", "result", "content", "output")),
                        )
                        continue
                self.read_part(part)
        elif kind is str or isinstance(content, str):
            blocks = as_blocks(content)
            if blocks is None:
                self._text(content)
            else:
                self.read(blocks)
        elif isinstance(content, list):
            for part in content:
                self.read_part(part)
        elif kind is dict or isinstance(content, Mapping):
            self.read_part(content)
        elif content is not None:
            self.texts.append(json.dumps(content))

    def read_part(self, part: Any) -> None:
        """A ``parts`` entry, an OpenAI/Anthropic content block or a Bedrock block."""
        if type(part) is not dict:
            if isinstance(part, str):
                self._text(part)
                return
            if not isinstance(part, Mapping):
                return
        kind = part.get("type")
        if kind in _TEXT_PARTS:
            if "content" in part or "text" in part:
                self._text(part.get("content", part.get("text")))
            else:
                self.missing = True
        elif kind in _CALL_PARTS:
            arguments = part.get("arguments", part.get("input", ABSENT))
            self._call(part.get("name"), first_str(part, ("id", "call_id")), arguments)
        elif kind in _RESULT_PARTS:
            value = first_present(part, ("response", "result", "content", "output"))
            self._result(first_str(part, ("id", "tool_use_id", "call_id")), value)
        elif kind is None:
            self._bedrock_block(part)

    def read_wire_call(self, call: Any) -> None:
        """``{id, type, function: {name, arguments}}`` or the flat ``{id, name, arguments}``."""
        if not (type(call) is dict or isinstance(call, Mapping)):
            return
        function = call.get("function")
        source = function if type(function) is dict or isinstance(function, Mapping) else call
        self._call(source.get("name"), first_str(call, ("id",)), source.get("arguments", ABSENT))

    def _bedrock_block(self, block: Mapping[str, Any]) -> None:
        """Bedrock Converse blocks (Strands): ``{text}``, ``{toolUse}``, ``{toolResult}``."""
        if "text" in block or "content" in block:
            self._text(block.get("text", block.get("content")))
        elif isinstance(block.get("toolUse"), Mapping):
            use = block["toolUse"]
            self._call(use.get("name"), first_str(use, ("toolUseId",)), use.get("input", ABSENT))
        elif isinstance(block.get("toolResult"), Mapping):
            result = block["toolResult"]
            self._result(first_str(result, ("toolUseId",)), result.get("content", ABSENT))

    def _text(self, value: Any) -> None:
        if value is None or value == REDACTED:
            self.missing = self.missing or value == REDACTED
            return
        self.texts.append(value if isinstance(value, str) else json.dumps(value))

    def _call(self, name: Any, call_id: str | None, arguments: Any) -> None:
        if arguments is ABSENT or arguments == REDACTED:
            self.missing = True
            arguments = None
        self.calls.append(
            new_tool_call(name if isinstance(name, str) else "", call_id, json_text(arguments))
        )

    def _result(self, call_id: str | None, value: Any) -> None:
        if value is ABSENT or value == REDACTED:
            self.missing = True
            value = None
        self.results.append((call_id, result_text(value)))


# --------------------------------------------------------------------------- roles, finish reasons


_ROLES: Mapping[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}

_FINISH_REASONS = {
    "tool_call": "tool_calls",
    "tool_use": "tool_calls",
    "function_call": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
}


def normalise_role(value: object, default: Role) -> Role:
    return _ROLES.get(value.lower(), default) if isinstance(value, str) else default


def normalise_finish_reason(value: object) -> str | None:
    """Lower case, with the providers' names for a tool call and a natural stop mapped to
    OpenAI's (``tool_calls``, ``stop``) and ``max_tokens`` to ``length``."""
    if value is None:
        return None
    if type(value) is str:
        known = _FINISH_SEEN.get(value, ABSENT)
        if known is not ABSENT:
            return known  # type: ignore[no-any-return]
    if not isinstance(value, str) or not value.strip():
        return None
    reason = value.strip().lower()
    reason = _FINISH_REASONS.get(reason, reason)
    if type(value) is str and len(_FINISH_SEEN) < 1024:
        _FINISH_SEEN[value] = reason
    return reason


_FINISH_SEEN: dict[str, str | None] = {}
"""Finish reasons as recorded, normalised (a bounded cache: there are few)."""


def as_blocks(text: str) -> list[Any] | None:
    """Content blocks encoded as JSON text (``[{"type": "text", ...}]``, ``[{"text"}]``);
    None for any other text."""
    if lead(text) != "[":
        return None
    decoded = json_in_text(text)
    if isinstance(decoded, list) and decoded and all(_is_block(b) for b in decoded):
        return decoded
    return None


_BLOCK_KEYS = frozenset({"type", "text", "toolUse", "toolResult", "reasoningContent", "json"})


def _is_block(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(_BLOCK_KEYS & value.keys())


def result_text(value: Any) -> str | None:
    """A tool result as text: text as sent, content blocks that hold only text joined
    (also when encoded as JSON text), anything else as compact JSON."""
    blocks = as_blocks(value) if isinstance(value, str) else value
    if (
        isinstance(blocks, list)
        and blocks
        and all(
            isinstance(b, Mapping)
            and isinstance(b.get("text"), str)
            and b.get("type", "text") == "text"
            for b in blocks
        )
    ):
        return "\n".join(b["text"] for b in blocks)
    return json_text(value)
