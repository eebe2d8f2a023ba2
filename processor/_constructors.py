"""The processor's records made fast: ``ToolCall``, ``Message`` and ``SpanContent``.

The records are frozen dataclasses, whose generated __init__ sets each field through
object.__setattr__: several times slower than filling the new instance's __dict__, which
gives the same object. Done only while the classes are as expected (the fields, their
order and defaults, no __post_init__, no slots); else through the constructor.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from processor.records import Channel, Message, Role, SpanContent, ToolCall

__all__ = ["new_message", "new_span_content", "new_tool_call"]

_new = object.__new__


def _fillable(cls: type, defaults: dict[str, object]) -> bool:
    """Whether ``cls`` is a dataclass of exactly these fields (in this order) with these
    defaults (``dataclasses.MISSING``: none), made by its __init__ alone."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return False
    if "__slots__" in vars(cls):
        return False
    fields = dataclasses.fields(cls)
    return [f.name for f in fields] == list(defaults) and all(
        f.init and f.default_factory is dataclasses.MISSING and f.default == defaults[f.name]
        for f in fields
    )


_MISSING: Any = dataclasses.MISSING
_FAST_TOOL_CALL = _fillable(
    ToolCall, {"name": _MISSING, "call_id": _MISSING, "arguments": _MISSING}
)
_FAST_MESSAGE = _fillable(
    Message,
    {
        "role": _MISSING,
        "text": _MISSING,
        "tool_calls": (),
        "tool_call_id": None,
        "finish_reason": None,
    },
)
_SPAN_CONTENT_FIELDS: dict[str, object] = {
    "span_id": _MISSING,
    "kind": _MISSING,
    "channel": _MISSING,
    "input_messages": (),
    "output_messages": (),
    "system_instructions": None,
    "tool_name": None,
    "tool_call_id": None,
    "tool_arguments": None,
    "tool_result": None,
    "tool_definitions": (),
    "content_captured": True,
}
_FAST_SPAN_CONTENT = _fillable(SpanContent, _SPAN_CONTENT_FIELDS)


def new_tool_call(name: str, call_id: str | None, arguments: str | None) -> ToolCall:
    """``ToolCall(name, call_id, arguments)``."""
    if not _FAST_TOOL_CALL:
        return ToolCall(name=name, call_id=call_id, arguments=arguments)
    made = _new(ToolCall)
    fields = made.__dict__
    fields["name"] = name
    fields["call_id"] = call_id
    fields["arguments"] = arguments
    return made


def new_message(
    role: Role,
    text: str | None,
    tool_calls: tuple[ToolCall, ...] = (),
    tool_call_id: str | None = None,
    finish_reason: str | None = None,
) -> Message:
    """``Message(role, text, tool_calls, tool_call_id, finish_reason)``."""
    if not _FAST_MESSAGE:
        return Message(
            role=role,
            text=text,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            finish_reason=finish_reason,
        )
    made = _new(Message)
    fields = made.__dict__
    fields["role"] = role
    fields["text"] = text
    fields["tool_calls"] = tool_calls
    fields["tool_call_id"] = tool_call_id
    fields["finish_reason"] = finish_reason
    return made


def new_span_content(
    span_id: str,
    kind: Any,
    channel: Channel | None,
    *,
    input_messages: tuple[Message, ...] = (),
    output_messages: tuple[Message, ...] = (),
    system_instructions: str | None = None,
    tool_name: str | None = None,
    tool_call_id: str | None = None,
    tool_arguments: str | None = None,
    tool_result: str | None = None,
    tool_definitions: tuple[str, ...] = (),
    content_captured: bool = True,
) -> SpanContent:
    """``SpanContent(...)`` with the same arguments."""
    if not _FAST_SPAN_CONTENT:
        return SpanContent(
            span_id=span_id,
            kind=kind,
            channel=channel,
            input_messages=input_messages,
            output_messages=output_messages,
            system_instructions=system_instructions,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            tool_arguments=tool_arguments,
            tool_result=tool_result,
            tool_definitions=tool_definitions,
            content_captured=content_captured,
        )
    made = _new(SpanContent)
    fields = made.__dict__
    fields["span_id"] = span_id
    fields["kind"] = kind
    fields["channel"] = channel
    fields["input_messages"] = input_messages
    fields["output_messages"] = output_messages
    fields["system_instructions"] = system_instructions
    fields["tool_name"] = tool_name
    fields["tool_call_id"] = tool_call_id
    fields["tool_arguments"] = tool_arguments
    fields["tool_result"] = tool_result
    fields["tool_definitions"] = tool_definitions
    fields["content_captured"] = content_captured
    return made
