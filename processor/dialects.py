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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple

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
    new_message,
    new_span_content,
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
    kind = _KINDS.get(operation)
    if kind is None:
        kind = _operation_kind(operation)
        if len(_KINDS) < 1024:
            _KINDS[operation] = kind
    return kind


_KINDS: dict[str, Kind] = {}
"""Operations seen, with their kinds (a bounded cache: there are few)."""


def _operation_kind(operation: str) -> Kind:
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
    own = (
        sorted(
            (
                log
                for log in logs
                if log.span_id == span.span_id and log.trace_id in (None, span.trace_id)
            ),
            key=lambda log: log.time_unix_nano,
        )
        if logs
        else []
    )
    kind = span_kind(span)
    if kind == "tool":
        return read_tool(span, own)
    if kind == "other":
        return new_span_content(span.span_id, "other", None)
    return _read_messages(span, own, kind)


# --------------------------------------------------------------------------- model and agent


class _Reading(NamedTuple):
    """What one channel holds for a span."""

    channel: Channel
    input: Side | None = None
    output: Side | None = None


_FLAT_PREFIXES = ("llm.", "gen_ai.prompt.", "gen_ai.completion.")
"""Where the flattened (indexed) attributes of OpenInference and OpenLLMetry start."""
_LEGACY_PREFIXES = ("gen_ai.prompt.", "gen_ai.completion.")


def _read_messages(span: SpanRow, logs: Sequence[LogRow], kind: Kind) -> SpanContent:
    attributes = span.attributes
    details_logs = [log.attributes for log in logs if log.event_name == DETAILS] if logs else []
    details_events = (
        [event_attributes(e) for e in span.events if e.get("name") == DETAILS]
        if span.events
        else []
    )
    first = (
        _semconv(attributes, "semconv")
        if "gen_ai.input.messages" in attributes or "gen_ai.output.messages" in attributes
        else None
    )
    flat: list[str] | None = None  # listed when needed: it walks every key
    if first and first.input and first.input.messages and first.output and first.output.messages:
        # the first channel has both sides (the common case): no other is read
        input_side: Side | None = first.input
        output_side: Side | None = first.output
        input_channel: Channel | None = first.channel
        output_channel: Channel | None = first.channel
    else:
        flat = _flat_keys(attributes)
        readings = _readings(span, logs, kind, details_logs, details_events, flat, first)
        (input_side, input_channel), (output_side, output_channel) = _pick(readings)
    sources = (
        [attributes, *details_logs, *details_events]
        if details_logs or details_events
        else [attributes]
    )
    system, system_missing = _system_instructions(sources)
    definitions = _tool_definitions(sources, flat)

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
    outputs = _with_finish_reasons(outputs, attributes, succeeded)
    channel = input_channel or output_channel
    return new_span_content(
        span.span_id,
        kind,
        channel,
        input_messages=inputs,
        output_messages=outputs,
        system_instructions=system,
        tool_definitions=definitions,
        content_captured=not missing,
    )


def _flat_keys(attributes: Mapping[str, object]) -> list[str]:
    """The keys of flattened (indexed) attributes."""
    return [key for key in attributes if key.startswith(_FLAT_PREFIXES)]


def _readings(
    span: SpanRow,
    logs: Sequence[LogRow],
    kind: Kind,
    details_logs: Sequence[Mapping[str, object]],
    details_events: Sequence[Mapping[str, object]],
    flat: Sequence[str],
    semconv: _Reading | None,
) -> Iterator[_Reading]:
    """The channels in order (see the module), each read only when asked for; a channel
    that cannot hold anything for this span (no records of its kind, no key of its
    vocabulary) is left out, as it would give neither side. ``semconv``: the first
    channel, already read (None when the span has none of its keys)."""
    attributes = span.attributes
    if semconv is not None:
        yield semconv
    if "pydantic_ai.all_messages" in attributes or "final_result" in attributes:
        yield _pydantic_all_messages(attributes)
    for details in details_logs:
        yield _semconv(details, "log")
    for details in details_events:
        yield _semconv(details, "event")
    if logs:
        yield _per_message("log", _log_records(logs))
    if span.events:
        yield _per_message("event", _event_records(span.events))
    if flat or "input.value" in attributes or "output.value" in attributes:
        yield _openinference(attributes, kind)
    if any(key.startswith(_LEGACY_PREFIXES) for key in flat):
        yield _openllmetry_legacy(attributes)


def _pick(
    readings: Iterable[_Reading],
) -> tuple[tuple[Side | None, Channel | None], tuple[Side | None, Channel | None]]:
    """For the input and for the output: the first side with messages, else the first
    recorded at all (maybe unreadable), without its channel. Stops reading channels once
    both sides have messages."""
    input_pick: tuple[Side | None, Channel | None] = (None, None)
    output_pick: tuple[Side | None, Channel | None] = (None, None)
    input_done = output_done = False
    for reading in readings:
        found = reading.input
        if not input_done and found is not None:
            if found.messages:
                input_pick, input_done = (found, reading.channel), True
            elif input_pick[0] is None:
                input_pick = (found, None)
        found = reading.output
        if not output_done and found is not None:
            if found.messages:
                output_pick, output_done = (found, reading.channel), True
            elif output_pick[0] is None:
                output_pick = (found, None)
        if input_done and output_done:
            break
    return input_pick, output_pick


def _with_finish_reasons(
    outputs: tuple[Message, ...], attributes: Mapping[str, object], succeeded: bool
) -> tuple[Message, ...]:
    """Give output messages without a finish reason the span's, by position; when no
    output was captured, one assistant message without text per finish reason."""
    if not outputs:
        if not succeeded:
            return ()
        reasons = _span_finish_reasons(attributes)
        return tuple(new_message("assistant", None, finish_reason=r) for r in reasons)
    if all(m.finish_reason is not None or m.role != "assistant" for m in outputs):
        return outputs  # nothing to fill
    reasons = _span_finish_reasons(attributes)
    filled = []
    position = 0
    for message in outputs:
        if message.role == "assistant":
            if message.finish_reason is None and position < len(reasons):
                message = _replace_finish(message, reasons[position])
            position += 1
        filled.append(message)
    return tuple(filled)


def _replace_finish(original: Message, reason: str) -> Message:
    return new_message(
        original.role, original.text, original.tool_calls, original.tool_call_id, reason
    )


def _span_finish_reasons(attributes: Mapping[str, object]) -> list[str]:
    value = attributes.get("gen_ai.response.finish_reasons")
    if value is None and "llm.finish_reason" not in attributes:
        return []
    value = json_value(value)
    if value is None:
        value = attributes.get("llm.finish_reason")
    values = value if isinstance(value, list) else [value]
    return [r for r in (normalise_finish_reason(v) for v in values) if r is not None]


# --------------------------------------------------------------------------- channels


def _semconv(attributes: Mapping[str, object], channel: Channel) -> _Reading:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` in ``parts`` form."""
    return _Reading(
        channel,
        message_list(attributes.get("gen_ai.input.messages"), "user"),
        message_list(attributes.get("gen_ai.output.messages"), "assistant"),
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


_RECORD_NAMES = frozenset(
    {*MESSAGE_EVENTS, CHOICE, "gen_ai.content.prompt", "gen_ai.content.completion"}
)
"""The names of the records :func:`_per_message` reads."""


def _log_records(logs: Iterable[LogRow]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The log records :func:`_per_message` reads, as (name, payload)."""
    for log in logs:
        if log.event_name in _RECORD_NAMES:
            yield log.event_name, log_payload(log.body)


def _event_records(events: Iterable[Mapping[str, object]]) -> Iterator[tuple[str, Any]]:
    """The span events :func:`_per_message` reads, as (name, body)."""
    for event in events:
        name = event.get("name")
        if isinstance(name, str) and name in _RECORD_NAMES:
            yield name, event_record(event)[1]


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


def _tool_definitions(
    sources: Sequence[Mapping[str, object]], flat: Sequence[str] | None = None
) -> tuple[str, ...]:
    """Each tool definition offered to the model as JSON text. ``flat``: the keys of the
    first source (the span's attributes) that are flattened attributes, when listed."""
    for attributes in sources:
        decoded = json_value(attributes.get("gen_ai.tool.definitions"))
        if isinstance(decoded, list):
            return tuple(text for text in map(json_text, decoded) if text is not None)
    for index, attributes in enumerate(sources):
        if index == 0 and not (flat if flat is not None else _flat_keys(attributes)):
            continue
        found = openinference_tool_definitions(attributes) or openllmetry_tool_definitions(
            attributes
        )
        if found:
            return found
    return ()
