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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from processor.records import Message, Role, ToolCall

__all__ = [
    "ABSENT",
    "CHOICE",
    "DETAILS",
    "MESSAGE_EVENTS",
    "REDACTED",
    "Content",
    "Side",
    "event_attributes",
    "event_record",
    "first_str",
    "json_in_text",
    "json_text",
    "json_value",
    "log_payload",
    "looks_like_json",
    "merge",
    "message_list",
    "normalise_finish_reason",
    "normalise_role",
    "read_message",
    "result_text",
    "untag",
    "wire_list",
]

REDACTED = "__REDACTED__"
"""OpenInference's stand-in for hidden content."""


class _Absent:
    """Marks a key that is not there (None can be a recorded value)."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Side:
    """The input or the output messages as one channel records them."""

    messages: tuple[Message, ...]
    missing: bool = False


# --------------------------------------------------------------------------- messages


def message_list(value: object, default_role: Role) -> Side | None:
    """A JSON list of messages (``parts`` or wire form); None when absent, nothing but
    ``missing`` when it cannot be read."""
    if value is None:
        return None
    decoded = json_value(value)
    if not isinstance(decoded, list):
        return Side((), missing=True)
    return wire_list(decoded, default_role)


def wire_list(items: Iterable[Any], default_role: Role) -> Side:
    """Decoded messages in order; an item that is not an object is unreadable."""
    return merge(
        read_message(item, default_role) if isinstance(item, Mapping) else Side((), missing=True)
        for item in items
    )


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
    role = normalise_role(body.get("role"), default_role)
    content = Content()
    if "parts" in body:
        content.read(body["parts"])
    else:
        if "content" in body:
            content.read(body["content"])
        elif role != "assistant" or "tool_calls" not in body:
            content.missing = True  # the record keeps its shape but not its content
        for call in _as_list(json_value(body.get("tool_calls"))):
            content.read_wire_call(call)
    call_id = first_str(body, ("tool_call_id", "id")) if role == "tool" else None
    messages = [
        Message(role="tool", text=text, tool_call_id=result_id or call_id)
        for result_id, text in content.results
    ]
    text = "\n".join(content.texts) if content.texts else None
    if not messages or content.texts or content.calls:
        messages.append(
            Message(
                role=role,
                text=text,
                tool_calls=tuple(content.calls),
                tool_call_id=call_id,
                finish_reason=normalise_finish_reason(body.get("finish_reason")),
            )
        )
    return Side(tuple(messages), content.missing)


@dataclass
class Content:
    """Text, tool calls and tool results gathered from a message's content."""

    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: list[tuple[str | None, str | None]] = field(default_factory=list)
    missing: bool = False

    def read(self, content: Any) -> None:
        """Content as text, a list of parts or blocks, or such a list as JSON text."""
        if isinstance(content, str):
            blocks = as_blocks(content)
            if blocks is None:
                self._text(content)
            else:
                self.read(blocks)
        elif isinstance(content, list):
            for part in content:
                self.read_part(part)
        elif isinstance(content, Mapping):
            self.read_part(content)
        elif content is not None:
            self.texts.append(json.dumps(content))

    def read_part(self, part: Any) -> None:
        """A ``parts`` entry, an OpenAI/Anthropic content block or a Bedrock block."""
        if isinstance(part, str):
            self._text(part)
            return
        if not isinstance(part, Mapping):
            return
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text"):
            if "content" in part or "text" in part:
                self._text(part.get("content", part.get("text")))
            else:
                self.missing = True
        elif kind in ("tool_call", "tool_use", "function_call"):
            arguments = part.get("arguments", part.get("input", ABSENT))
            self._call(part.get("name"), first_str(part, ("id", "call_id")), arguments)
        elif kind in ("tool_call_response", "tool_result", "function_call_output"):
            value = _first_present(part, ("response", "result", "content", "output"))
            self._result(first_str(part, ("id", "tool_use_id", "call_id")), value)
        elif kind is None:
            self._bedrock_block(part)

    def read_wire_call(self, call: Any) -> None:
        """``{id, type, function: {name, arguments}}`` or the flat ``{id, name, arguments}``."""
        if not isinstance(call, Mapping):
            return
        function = call.get("function")
        source = function if isinstance(function, Mapping) else call
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
            ToolCall(
                name=name if isinstance(name, str) else "",
                call_id=call_id,
                arguments=json_text(arguments),
            )
        )

    def _result(self, call_id: str | None, value: Any) -> None:
        if value is ABSENT or value == REDACTED:
            self.missing = True
            value = None
        self.results.append((call_id, result_text(value)))


# --------------------------------------------------------------------------- values


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
    if not isinstance(value, str) or not value.strip():
        return None
    reason = value.strip().lower()
    return _FINISH_REASONS.get(reason, reason)


def json_value(value: object) -> Any:
    """A value that may be JSON text or already structured; ``ABSENT`` if the text is
    not JSON."""
    if isinstance(value, str):
        try:
            return untag(json.loads(value))
        except ValueError:
            return ABSENT
    return untag(value)


def json_in_text(text: str) -> Any:
    """Decoded JSON when ``text`` is a JSON document, else ``text`` itself."""
    try:
        return untag(json.loads(text))
    except ValueError:
        return text


def looks_like_json(text: str) -> bool:
    return text.lstrip().startswith(("[", "{"))


def as_blocks(text: str) -> list[Any] | None:
    """Content blocks encoded as JSON text (``[{"type": "text", ...}]``, ``[{"text"}]``);
    None for any other text."""
    if not text.lstrip().startswith("["):
        return None
    decoded = json_in_text(text)
    if isinstance(decoded, list) and decoded and all(_is_block(b) for b in decoded):
        return decoded
    return None


_BLOCK_KEYS = frozenset({"type", "text", "toolUse", "toolResult", "reasoningContent", "json"})


def _is_block(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(_BLOCK_KEYS & value.keys())


def json_text(value: Any) -> str | None:
    """Text as it is; anything else as compact JSON; None stays None."""
    if value is None or value is ABSENT:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


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


def untag(value: Any) -> Any:
    """Key-value lists stored with repeated keys (``{"kvlistValue": [[k, v], ...]}``) as
    objects, the last value of a key winning, as for attributes."""
    if isinstance(value, Mapping):
        pairs = value.get("kvlistValue") if len(value) == 1 else None
        if isinstance(pairs, list):
            return {
                pair[0]: untag(pair[1])
                for pair in pairs
                if isinstance(pair, list) and len(pair) == 2
            }
        return {key: untag(item) for key, item in value.items()}
    if isinstance(value, list):
        return [untag(item) for item in value]
    return value


def first_str(mapping: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _first_present(mapping: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if key in mapping:
            return mapping[key]
    return ABSENT


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# --------------------------------------------------------------------------- records

DETAILS = "gen_ai.client.inference.operation.details"
"""The event name of a model call's (or tool's) messages as one record."""
CHOICE = "gen_ai.choice"
"""The legacy per-choice record."""
MESSAGE_EVENTS: Mapping[str, Role] = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
"""The legacy per-message records and the role each one's message has."""


def event_attributes(event: Mapping[str, object]) -> Mapping[str, object]:
    attributes = event.get("attributes")
    return untag(attributes) if isinstance(attributes, Mapping) else {}


def event_record(event: Mapping[str, object]) -> tuple[str | None, Mapping[str, Any]]:
    """A span event as (name, body): its attributes, or the JSON ``body`` /
    ``event.body`` attribute some bridges put the record's body in."""
    name = event.get("name")
    attributes = event_attributes(event)
    for key in ("body", "event.body"):
        body = json_value(attributes.get(key))
        if isinstance(body, Mapping):
            return (name if isinstance(name, str) else None), body
    return (name if isinstance(name, str) else None), attributes


def log_payload(body: object) -> Mapping[str, Any]:
    """A log record's body as a message body: an object as it is, anything else as its
    content; no body is a record whose content was not captured."""
    body = untag(body)
    if body is None:
        return {}
    if isinstance(body, Mapping):
        return body
    return {"content": body}
