"""Read what one span says about the conversation, whichever dialect it was written in.

:func:`read_span` takes a stored span and the log records emitted in its context and
returns a :class:`~processor.records.SpanContent`: the span's kind, the messages sent to
and returned by the model, system instructions, tool definitions, and for tool spans the
call and its result (:mod:`processor._tool_spans`). Pure functions: no SQL, no I/O. How
each message is read and normalised (roles, tool results sent back as ``user``, finish
reasons, parts, content blocks, JSON inside JSON strings) is :mod:`processor._messages`;
flattened indexed attributes are rebuilt by :mod:`processor.openinference`.

Kind
    From the promoted ``operation`` (``gen_ai.operation.name``, else
    ``openinference.span.kind``, ``traceloop.span.kind``, ``llm.request.type``, lower
    case): ``chat``, ``text_completion``, ``generate_content``, ``completion``, ``llm`` are
    model calls; ``execute_tool``, ``tool`` tools; ``invoke_agent``, ``create_agent``,
    ``invoke_*`` (Strands' swarms and graphs), ``agent`` agents; anything else
    (``embeddings``, ``chain``, ``workflow``, ``task``, ...) is other and is not read. A
    span without an operation is a model call if it carries messages and a tool if it
    carries ``gen_ai.tool.*``.

Messages of model and agent spans, each side (input, output) from the first channel that
has messages for it:

==  =============  ============================================================================
 #  channel        where
==  =============  ============================================================================
 1  semconv        span attributes ``gen_ai.input.messages`` / ``gen_ai.output.messages``
                   (JSON strings or structured values, in ``parts`` form)
 2  semconv        ``pydantic_ai.all_messages`` (pydantic-ai agent spans): the run's messages,
                   the trailing assistant ones its output; else ``final_result``
 3  log            ``gen_ai.client.inference.operation.details`` log records (attributes)
 4  event          ``gen_ai.client.inference.operation.details`` span events (Strands)
 5  log            per-message log records: ``gen_ai.{system,user,assistant,tool}.message``
                   (body ``{content, tool_calls, id}``) and ``gen_ai.choice`` (body ``{index,
                   finish_reason, message: {role, content, tool_calls}}``)
 6  event          the same as span events (their attributes, or a JSON ``body`` attribute;
                   Strands), and the older ``gen_ai.content.prompt`` / ``.completion``
 7  openinference  ``llm.input_messages.N.message.*`` / ``llm.output_messages.N.message.*``,
                   else ``input.value`` / ``output.value`` (request / response JSON, or text)
 8  legacy         OpenLLMetry's indexed ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``
==  =============  ============================================================================

The standard's current form comes first, then its record forms (newest first), then the
other vocabularies; an instrumentation that writes two of them (OpenInference with
``enable_genai_semconv``) writes the same content in both. ``channel`` names the input's
source (the output's when there is no input).

System instructions come from ``gen_ai.system_instructions`` (span, then details records)
or Strands' ``gen_ai.agent.system_prompt``; a system message inside the input stays a
message. Tool definitions come from ``gen_ai.tool.definitions`` (likewise), OpenInference's
``llm.tools.N.tool.json_schema``, or OpenLLMetry's ``llm.request.functions.N.*``. Output
messages without a finish reason take the span's (``gen_ai.response.finish_reasons``,
``llm.finish_reason``) by position.

Content not captured is ``None``, never invented, and sets ``content_captured=False``:
when a channel's messages lack content (see :mod:`processor._messages`), when a list that
should be JSON is not (truncated by an attribute length limit, say: the channel gives
nothing, a later one may), and when a successful model call has no input or no output
messages at all. When only the finish reasons survive, the output is one assistant message
per finish reason with ``text=None``. A failed call without content is not marked:
instrumentations record little on failure, so it says nothing about capture.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from processor._messages import (
    ABSENT,
    CHOICE,
    DETAILS,
    MESSAGE_EVENTS,
    REDACTED,
    Content,
    Side,
    event_attributes,
    event_record,
    first_str,
    json_in_text,
    json_text,
    json_value,
    log_payload,
    looks_like_json,
    merge,
    message_list,
    normalise_finish_reason,
    read_message,
    untag,
    wire_list,
)
from processor._tool_spans import read_tool
from processor.openinference import (
    openinference_messages,
    openinference_tool_definitions,
    openllmetry_messages,
    openllmetry_tool_definitions,
)
from processor.records import Channel, LogRow, Message, Role, SpanContent, SpanRow

__all__ = ["Kind", "read_span", "span_kind"]

Kind = Literal["model", "tool", "agent", "other"]
"""A span's role in the conversation."""

_STATUS_ERROR = 2


# --------------------------------------------------------------------------- kind

_MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion", "llm"})
_TOOL_OPERATIONS = frozenset({"execute_tool", "tool"})
_AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent", "agent"})
_OPERATION_KEYS = (
    "gen_ai.operation.name",
    "openinference.span.kind",
    "traceloop.span.kind",
    "llm.request.type",
)
_MESSAGE_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "llm.input_messages.0.message.role",
    "gen_ai.prompt.0.role",
)


def span_kind(span: SpanRow) -> Kind:
    """Model call, tool, agent or other, from the span's operation (see the module)."""
    operation = span.operation or first_str(span.attributes, _OPERATION_KEYS)
    if operation is None:
        if any(key in span.attributes for key in _MESSAGE_KEYS):
            return "model"
        if "gen_ai.tool.call.id" in span.attributes or "gen_ai.tool.name" in span.attributes:
            return "tool"
        return "other"
    operation = operation.lower()
    if operation in _MODEL_OPERATIONS:
        return "model"
    if operation in _TOOL_OPERATIONS:
        return "tool"
    if operation in _AGENT_OPERATIONS or operation.startswith("invoke_"):
        return "agent"
    return "other"


# --------------------------------------------------------------------------- entry point


def read_span(span: SpanRow, logs: Sequence[LogRow]) -> SpanContent:
    """What ``span`` and the log records emitted in its context say (see the module).

    ``logs`` may hold records of other spans too: only those with the span's trace and
    span id are read, in time order.
    """
    own = sorted(
        (
            log
            for log in logs
            if log.span_id == span.span_id and log.trace_id in (None, span.trace_id)
        ),
        key=lambda log: log.time_unix_nano,
    )
    kind = span_kind(span)
    if kind == "tool":
        return read_tool(span, own)
    if kind == "other":
        return SpanContent(span_id=span.span_id, kind="other", channel=None)
    return _read_messages(span, own, kind)


# --------------------------------------------------------------------------- model and agent


@dataclass(frozen=True)
class _Reading:
    """What one channel holds for a span."""

    channel: Channel
    input: Side | None = None
    output: Side | None = None


def _read_messages(span: SpanRow, logs: Sequence[LogRow], kind: Kind) -> SpanContent:
    attributes = span.attributes
    details_logs = [log.attributes for log in logs if log.event_name == DETAILS]
    details_events = [event_attributes(e) for e in span.events if e.get("name") == DETAILS]
    readings = [
        _semconv(attributes, "semconv"),
        _pydantic_all_messages(attributes),
        *(_semconv(a, "log") for a in details_logs),
        *(_semconv(a, "event") for a in details_events),
        _per_message("log", [(log.event_name, log_payload(log.body)) for log in logs]),
        _per_message("event", [event_record(event) for event in span.events]),
        _openinference(attributes, kind),
        _openllmetry_legacy(attributes),
    ]
    input_side, input_channel = _pick(readings, "input")
    output_side, output_channel = _pick(readings, "output")
    system, system_missing = _system_instructions([attributes, *details_logs, *details_events])
    definitions = _tool_definitions([attributes, *details_logs, *details_events])

    inputs = input_side.messages if input_side else ()
    outputs = output_side.messages if output_side else ()
    missing = bool(
        (input_side and input_side.missing)
        or (output_side and output_side.missing)
        or system_missing
    )
    succeeded = span.status_code != _STATUS_ERROR
    if kind == "model" and succeeded and not (inputs and outputs):
        missing = True
    outputs = _with_finish_reasons(outputs, _span_finish_reasons(attributes), succeeded)
    channel = input_channel or output_channel
    return SpanContent(
        span_id=span.span_id,
        kind=kind,
        channel=channel,
        input_messages=inputs,
        output_messages=outputs,
        system_instructions=system,
        tool_definitions=definitions,
        content_captured=not missing,
    )


def _pick(
    readings: Iterable[_Reading], side: Literal["input", "output"]
) -> tuple[Side | None, Channel | None]:
    """The first side with messages; else the first recorded at all (maybe unreadable)."""
    first: tuple[Side | None, Channel | None] = (None, None)
    for reading in readings:
        found = reading.input if side == "input" else reading.output
        if found is None:
            continue
        if found.messages:
            return found, reading.channel
        if first[0] is None:
            first = (found, None)
    return first


def _with_finish_reasons(
    outputs: tuple[Message, ...], reasons: list[str], succeeded: bool
) -> tuple[Message, ...]:
    """Give output messages without a finish reason the span's, by position; when no
    output was captured, one assistant message without text per finish reason."""
    if not outputs:
        if not succeeded:
            return ()
        return tuple(Message(role="assistant", text=None, finish_reason=r) for r in reasons)
    filled = []
    position = 0
    for message in outputs:
        if message.role == "assistant":
            if message.finish_reason is None and position < len(reasons):
                message = _replace_finish(message, reasons[position])
            position += 1
        filled.append(message)
    return tuple(filled)


def _replace_finish(message: Message, reason: str) -> Message:
    return Message(
        role=message.role,
        text=message.text,
        tool_calls=message.tool_calls,
        tool_call_id=message.tool_call_id,
        finish_reason=reason,
    )


def _span_finish_reasons(attributes: Mapping[str, object]) -> list[str]:
    value = json_value(attributes.get("gen_ai.response.finish_reasons"))
    if value is None:
        value = attributes.get("llm.finish_reason")
    values = value if isinstance(value, list) else [value]
    return [r for r in (normalise_finish_reason(v) for v in values) if r is not None]


# --------------------------------------------------------------------------- channels


def _semconv(attributes: Mapping[str, object], channel: Channel) -> _Reading:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` in ``parts`` form."""
    return _Reading(
        channel,
        input=message_list(attributes.get("gen_ai.input.messages"), "user"),
        output=message_list(attributes.get("gen_ai.output.messages"), "assistant"),
    )


def _pydantic_all_messages(attributes: Mapping[str, object]) -> _Reading:
    """pydantic-ai's agent-run history; its trailing assistant messages are the output,
    ``final_result`` the output when the history is absent."""
    side = message_list(attributes.get("pydantic_ai.all_messages"), "user")
    if side is None:
        final = attributes.get("final_result")
        if not isinstance(final, str):
            return _Reading("semconv")
        return _Reading("semconv", output=Side((Message(role="assistant", text=final),)))
    cut = len(side.messages)
    while cut > 0 and side.messages[cut - 1].role == "assistant":
        cut -= 1
    return _Reading(
        "semconv",
        input=Side(side.messages[:cut], side.missing),
        output=Side(side.messages[cut:], side.missing) if cut < len(side.messages) else None,
    )


def _per_message(channel: Channel, records: Iterable[tuple[str | None, Any]]) -> _Reading:
    """Legacy per-message records: one per input message, ``gen_ai.choice`` per output
    choice; also the older ``gen_ai.content.prompt`` / ``.completion`` events."""
    inputs: list[Side] = []
    outputs: list[Side] = []
    for name, payload in records:
        if name is None:
            continue
        if name in MESSAGE_EVENTS:
            inputs.append(read_message(payload, MESSAGE_EVENTS[name]))
        elif name == CHOICE:
            outputs.append(_choice(payload))
        elif name == "gen_ai.content.prompt" and "gen_ai.prompt" in payload:
            inputs.append(message_list(payload["gen_ai.prompt"], "user") or Side(()))
        elif name == "gen_ai.content.completion" and "gen_ai.completion" in payload:
            outputs.append(message_list(payload["gen_ai.completion"], "assistant") or Side(()))
    return _Reading(
        channel,
        input=merge(inputs) if inputs else None,
        output=merge(outputs) if outputs else None,
    )


def _choice(payload: Mapping[str, Any]) -> Side:
    """``gen_ai.choice``: ``{index, finish_reason, message}``; OpenLLMetry puts
    ``tool_calls`` beside the message, Strands the content blocks as JSON text."""
    message = payload.get("message")
    if isinstance(message, Mapping):
        body = dict(message)
        if "tool_calls" in payload and "tool_calls" not in body:
            body["tool_calls"] = payload["tool_calls"]
    elif message is not None:
        body = {"content": message}
    else:
        body = {k: payload[k] for k in ("content", "tool_calls") if k in payload}
    body.setdefault("finish_reason", payload.get("finish_reason"))
    return read_message(body, "assistant")


def _openinference(attributes: Mapping[str, object], kind: Kind) -> _Reading:
    """OpenInference: the flattened messages, else ``input.value`` / ``output.value``."""
    wire_in = openinference_messages(attributes, "llm.input_messages")
    wire_out = openinference_messages(attributes, "llm.output_messages")
    input_side = wire_list(wire_in, "user") if wire_in else None
    output_side = wire_list(wire_out, "assistant") if wire_out else None
    if input_side is None:
        input_side = _openinference_value(attributes.get("input.value"), "user", kind)
    if output_side is None:
        output_side = _openinference_value(attributes.get("output.value"), "assistant", kind)
    return _Reading("openinference", input=input_side, output=output_side)


def _openinference_value(value: object, role: Role, kind: Kind) -> Side | None:
    """A request (``{"messages": [...]}``) or response (``{"choices": [...]}``) as JSON;
    plain text for agents and text completions; ``__REDACTED__`` when hidden."""
    if not isinstance(value, str):
        return None
    if value == REDACTED:
        return Side((), missing=True)
    decoded = json_in_text(value)
    if isinstance(decoded, Mapping):
        if role == "user" and isinstance(decoded.get("messages"), list):
            return wire_list(decoded["messages"], "user")
        if role == "assistant" and isinstance(decoded.get("choices"), list):
            return merge(
                _choice(choice) for choice in decoded["choices"] if isinstance(choice, Mapping)
            )
        return None
    if kind == "agent" or isinstance(decoded, str):
        return Side((Message(role=role, text=value),))
    return None


def _openllmetry_legacy(attributes: Mapping[str, object]) -> _Reading:
    """OpenLLMetry's indexed ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``."""
    prompt = openllmetry_messages(attributes, "gen_ai.prompt")
    completion = openllmetry_messages(attributes, "gen_ai.completion")
    return _Reading(
        "legacy",
        input=wire_list(prompt, "user") if prompt else None,
        output=wire_list(completion, "assistant") if completion else None,
    )


# --------------------------------------------------------------------------- instructions, tools


def _system_instructions(sources: Iterable[Mapping[str, object]]) -> tuple[str | None, bool]:
    """``gen_ai.system_instructions`` (parts, or text) or ``gen_ai.agent.system_prompt``;
    the text and whether some of it was not captured."""
    for attributes in sources:
        for key in ("gen_ai.system_instructions", "gen_ai.agent.system_prompt"):
            value = attributes.get(key)
            if value is None:
                continue
            if key == "gen_ai.system_instructions" and isinstance(value, str):
                value = json_value(value) if looks_like_json(value) else value
                if value is ABSENT:  # JSON by the convention, but unreadable
                    return None, True
            content = Content()
            content.read(untag(value))
            return ("\n".join(content.texts) if content.texts else None), content.missing
    return None, False


def _tool_definitions(sources: Sequence[Mapping[str, object]]) -> tuple[str, ...]:
    """Each tool definition offered to the model as JSON text."""
    for attributes in sources:
        decoded = json_value(attributes.get("gen_ai.tool.definitions"))
        if isinstance(decoded, list):
            return tuple(text for text in map(json_text, decoded) if text is not None)
    for attributes in sources:
        found = openinference_tool_definitions(attributes) or openllmetry_tool_definitions(
            attributes
        )
        if found:
            return found
    return ()
