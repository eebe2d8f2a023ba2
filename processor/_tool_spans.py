"""Tool spans: which tool ran, with which arguments, and what it returned.

Each field comes from the first source that has it (the channel is the first source that
gave the arguments or the result):

==============  ===========================================================================
channel         source
==============  ===========================================================================
tool_span       ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``,
                ``gen_ai.tool.call.result`` (GenAI conventions; pydantic-ai, Strands)
openinference   ``tool.name``, ``tool_call.id``, ``tool_call.function.arguments`` else
                ``input.value``, ``output.value``
tool_span       OpenLLMetry ``traceloop.entity.name`` / ``.input`` (``{"args", "kwargs"}``:
                the keyword arguments when there are no positional ones) / ``.output``
log, event      ``gen_ai.client.inference.operation.details`` records: the ``tool_call`` part
                of the input, the ``tool_call_response`` part of the output (Strands)
log, event      legacy ``gen_ai.tool.message`` (``content``: the arguments) and
                ``gen_ai.choice`` (``message``: the result), as Strands writes them
==============  ===========================================================================

Arguments are kept as the JSON text recorded (structured values become compact JSON), the
result as text (content blocks holding only text are joined). A successful tool span with
neither arguments nor result, or one whose values are ``__REDACTED__``, did not capture
content.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from processor._messages import (
    ABSENT,
    CHOICE,
    DETAILS,
    REDACTED,
    event_attributes,
    event_record,
    json_in_text,
    json_text,
    log_payload,
    message_list,
    new_span_content,
    result_text,
    untag,
)
from processor.records import Channel, LogRow, SpanContent, SpanRow

__all__ = ["read_tool"]

_STATUS_ERROR = 2


def read_tool(span: SpanRow, logs: Sequence[LogRow]) -> SpanContent:
    """A tool execution: its name, call id, arguments and result."""
    name = call_id = arguments = result = None
    missing = False
    channel: Channel | None = None
    for source, found in _sources(span, logs):
        name = name or _str(found.name)
        call_id = call_id or _str(found.call_id)
        missing = missing or found.missing or REDACTED in (found.arguments, found.result)
        if arguments is None and _recorded(found.arguments):
            arguments = json_text(untag(found.arguments))
            channel = channel or source
        if result is None and _recorded(found.result):
            result = result_text(untag(found.result))
            channel = channel or source
    if span.status_code != _STATUS_ERROR and arguments is None and result is None:
        missing = True
    return new_span_content(
        span.span_id,
        "tool",
        channel,
        tool_name=name,
        tool_call_id=call_id,
        tool_arguments=arguments,
        tool_result=result,
        content_captured=not missing,
    )


_OPENINFERENCE_KEYS = (
    "tool_call.function.arguments",
    "input.value",
    "tool.name",
    "tool_call.function.name",
    "tool_call.id",
    "output.value",
)
_TRACELOOP_KEYS = ("traceloop.entity.input", "traceloop.entity.output", "traceloop.entity.name")


def _sources(span: SpanRow, logs: Sequence[LogRow]) -> Iterable[tuple[Channel, _ToolFields]]:
    """What each source says, in order of precedence (see the module); a source with
    none of its keys or records says nothing and is left out."""
    attributes = span.attributes
    first: tuple[Channel, _ToolFields] = (
        "tool_span",
        _ToolFields(
            attributes.get("gen_ai.tool.name"),
            attributes.get("gen_ai.tool.call.id"),
            attributes.get("gen_ai.tool.call.arguments", ABSENT),
            attributes.get("gen_ai.tool.call.result", ABSENT),
        ),
    )
    if (
        not logs
        and not span.events
        and attributes.keys().isdisjoint(_OPENINFERENCE_KEYS)
        and attributes.keys().isdisjoint(_TRACELOOP_KEYS)
    ):
        return (first,)  # the common case: the GenAI attributes alone
    return _all_sources(span, logs, first)


def _all_sources(
    span: SpanRow, logs: Sequence[LogRow], first: tuple[Channel, _ToolFields]
) -> Iterator[tuple[Channel, _ToolFields]]:
    attributes = span.attributes
    yield first
    if not attributes.keys().isdisjoint(_OPENINFERENCE_KEYS):
        yield "openinference", _openinference_tool(attributes)
    if not attributes.keys().isdisjoint(_TRACELOOP_KEYS):
        yield "tool_span", _traceloop_tool(attributes)
    if not logs and not span.events:
        return
    for log in logs:
        if log.event_name == DETAILS:
            yield "log", _details_tool(log.attributes)
    for event in span.events:
        if event.get("name") == DETAILS:
            yield "event", _details_tool(event_attributes(event))
    if logs:
        yield "log", _legacy_tool(
            (log.event_name, log_payload(log.body)) for log in logs if log.event_name in _LEGACY
        )
    if span.events:
        yield "event", _legacy_tool(
            event_record(event) for event in span.events if _named(event, _LEGACY)
        )


def _named(event: Mapping[str, object], names: frozenset[str]) -> bool:
    name = event.get("name")
    return isinstance(name, str) and name in names


def _recorded(value: object) -> bool:
    return value is not ABSENT and value is not None and value != REDACTED


class _ToolFields(NamedTuple):
    """What one source says about a tool call (``ABSENT`` where it says nothing)."""

    name: object = None
    call_id: object = None
    arguments: object = ABSENT
    result: object = ABSENT
    missing: bool = False


def _openinference_tool(attributes: Mapping[str, object]) -> _ToolFields:
    arguments = attributes.get("tool_call.function.arguments", ABSENT)
    if arguments is ABSENT:
        arguments = attributes.get("input.value", ABSENT)
    return _ToolFields(
        name=attributes.get("tool.name", attributes.get("tool_call.function.name")),
        call_id=attributes.get("tool_call.id"),
        arguments=arguments,
        result=attributes.get("output.value", ABSENT),
    )


def _traceloop_tool(attributes: Mapping[str, object]) -> _ToolFields:
    """OpenLLMetry's ``@tool`` spans: input ``{"args": [...], "kwargs": {...}}`` as JSON,
    output the JSON of the return value."""
    entity_input = attributes.get("traceloop.entity.input", ABSENT)
    if isinstance(entity_input, str):
        decoded = json_in_text(entity_input)
        if isinstance(decoded, Mapping) and not decoded.get("args") and "kwargs" in decoded:
            entity_input = json_text(decoded["kwargs"])
    output = attributes.get("traceloop.entity.output", ABSENT)
    if isinstance(output, str):
        decoded = json_in_text(output)
        if isinstance(decoded, str) and output.startswith('"'):
            output = decoded
    return _ToolFields(
        name=attributes.get("traceloop.entity.name"),
        arguments=entity_input,
        result=output,
    )


def _details_tool(attributes: Mapping[str, object]) -> _ToolFields:
    """Operation-details records of a tool span: a ``tool_call`` part in the input and a
    ``tool_call_response`` part in the output (Strands)."""
    inputs = message_list(attributes.get("gen_ai.input.messages"), "tool")
    outputs = message_list(attributes.get("gen_ai.output.messages"), "tool")
    calls = [c for m in (inputs.messages if inputs else ()) for c in m.tool_calls]
    results = [m for m in (outputs.messages if outputs else ()) if m.role == "tool"]
    return _ToolFields(
        name=calls[0].name if calls else None,
        call_id=(calls[0].call_id if calls else None)
        or (results[0].tool_call_id if results else None),
        arguments=calls[0].arguments if calls and calls[0].arguments is not None else ABSENT,
        result=results[0].text if results and results[0].text is not None else ABSENT,
        missing=bool((inputs and inputs.missing) or (outputs and outputs.missing)),
    )


_LEGACY = frozenset({"gen_ai.tool.message", CHOICE})
"""The names of the records :func:`_legacy_tool` reads."""


def _legacy_tool(records: Iterable[tuple[str | None, Mapping[str, Any]]]) -> _ToolFields:
    """Strands' legacy tool events: ``gen_ai.tool.message`` holds the arguments,
    ``gen_ai.choice`` the result (content blocks as JSON text), both the call id."""
    arguments: object = ABSENT
    result: object = ABSENT
    call_id: object = None
    for name, payload in records:
        if name == "gen_ai.tool.message" and "content" in payload:
            arguments, call_id = payload["content"], call_id or payload.get("id")
        elif name == CHOICE and "message" in payload:
            result, call_id = payload["message"], call_id or payload.get("id")
    return _ToolFields(call_id=call_id, arguments=arguments, result=result)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
