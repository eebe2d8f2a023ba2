"""Spans and log records of one conversation → a :class:`Conversation`.

Each span is read by its dialect (:func:`processor.dialects.read_span`). Model calls are
walked in time order to build one transcript: each call's input is the history as the
agent sent it, so the part already in the transcript is skipped and the rest appended,
followed by the call's output. Steps are the tool calls of the transcript, each bound to
its result by call id, then by tool name, then by order; tool spans whose calls never
appeared in a transcript (content capture off) become steps of their own. Usage is summed
over model-call spans only, since agent spans repeat their children's totals.

Model version: the first of :data:`VERSION_SOURCES` (in the configured order) that any
span of the conversation carries, earliest span first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from processor.dialects import read_span
from processor.records import (
    Binding,
    Conversation,
    LogRow,
    Message,
    SpanContent,
    SpanRow,
    Step,
    StepStatus,
    ToolCall,
)

VERSION_SOURCES: tuple[str, ...] = (
    "agent_version", "service_version", "response_model", "request_model")
"""Where a model version may come from, in the default order of precedence."""

_VERSION_NAMES = {"agent_version": "gen_ai.agent.version",
                  "service_version": "service.version",
                  "response_model": "gen_ai.response.model",
                  "request_model": "gen_ai.request.model"}


@dataclass(frozen=True)
class Assembled:
    """A conversation together with what it was read from."""

    conversation: Conversation
    """The conversation."""
    contents: tuple[SpanContent, ...]
    """What each span said, in time order (for tool schemas and exemplars)."""
    session_id: str | None
    """session.id, when the agent records one apart from the conversation id."""
    user_id: str | None
    """user.id / enduser.id, when recorded."""


def _key(message: Message) -> tuple[object, ...]:
    return (message.role, message.text, message.tool_call_id,
            tuple(call.call_id or call.name for call in message.tool_calls))


def _extend(transcript: list[Message], inputs: Sequence[Message]) -> None:
    """Append the part of a call's input history that the transcript lacks."""
    common = 0
    for mine, theirs in zip(transcript, inputs, strict=False):
        if _key(mine) != _key(theirs):
            break
        common += 1
    if common == len(transcript) or (common == 0 and not transcript):
        transcript.extend(inputs[common:])
        return
    # The history was framed differently (a rewritten system prompt, a window, or only
    # the new turn): append the messages not already at the transcript's end.
    tail = [_key(message) for message in transcript[-len(inputs):]]
    start = 0
    while start < len(inputs) and _key(inputs[start]) in tail:
        start += 1
    transcript.extend(inputs[start:])


def _take_result(call: ToolCall, results: list[Message]) -> tuple[Message | None, Binding]:
    """Remove and return the result answering ``call``: by call id, else the next unkeyed."""
    for index, message in enumerate(results):
        if call.call_id is not None and message.tool_call_id == call.call_id:
            return results.pop(index), "call_id"
    for index, message in enumerate(results):
        if message.tool_call_id is None:
            return results.pop(index), "order"
    return None, "order"


def _take_span(call: ToolCall,
               tool_spans: list[SpanContent]) -> tuple[SpanContent | None, Binding]:
    """Remove and return the tool span that ran ``call``: by call id, else by name."""
    for index, content in enumerate(tool_spans):
        if call.call_id is not None and content.tool_call_id == call.call_id:
            return tool_spans.pop(index), "call_id"
    for index, content in enumerate(tool_spans):
        if content.tool_name == call.name:
            return tool_spans.pop(index), "name"
    return None, "order"


def _steps(transcript: Sequence[Message], contents: Sequence[SpanContent],
           spans: dict[str, SpanRow]) -> list[Step]:
    results = [message for message in transcript if message.role == "tool"]
    tool_spans = [content for content in contents if content.kind == "tool"]
    steps: list[Step] = []
    for message in transcript:
        if message.role != "assistant":
            continue
        for call in message.tool_calls:
            result, by_result = _take_result(call, results)
            span, by_span = _take_span(call, tool_spans)
            bound: Binding = by_result if by_result == "call_id" or span is None else by_span
            text = result.text if result is not None else (
                span.tool_result if span is not None else None)
            steps.append(_step(call.name, call.call_id, call.arguments, text, span, spans,
                               bound))
    for content in tool_spans:  # tool runs whose calls no transcript showed
        steps.append(_step(content.tool_name or "unknown_tool", content.tool_call_id,
                           content.tool_arguments, content.tool_result, content, spans, "span"))
    return steps


def _step(name: str, call_id: str | None, arguments: str | None, result: str | None,
          content: SpanContent | None, spans: dict[str, SpanRow], bound: Binding) -> Step:
    span = spans.get(content.span_id) if content is not None else None
    error = None
    status: StepStatus
    if span is not None and span.status_code == 2:
        status = "error"
        error = span.error_type or span.status_message or "error"
    elif result is not None or span is not None:
        status = "ok"
    else:
        status = "missing"
    if arguments is None and content is not None:
        arguments = content.tool_arguments
    return Step(tool=name, call_id=call_id, arguments=arguments, result=result,
                status=status, error=error, bound_by=bound,
                span_id=content.span_id if content is not None else None)


def _first_attribute(spans: Sequence[SpanRow], *keys: str) -> str | None:
    for span in spans:
        for key in keys:
            value = span.attributes.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                return str(value)
    return None


def assemble(conversation_id: str, spans: Sequence[SpanRow],
             logs_by_span: dict[str, list[LogRow]],
             version_sources: Sequence[str] = VERSION_SOURCES) -> Assembled:
    """Build one conversation from its spans (any order) and their log records."""
    ordered = sorted(spans, key=lambda span: (span.start_unix_nano, span.end_unix_nano))
    by_id = {span.span_id: span for span in ordered}
    contents = [read_span(span, logs_by_span.get(span.span_id, ())) for span in ordered]
    transcript: list[Message] = []
    content_missing = False
    errors: list[str] = []
    input_tokens = output_tokens = None
    for span, content in zip(ordered, contents, strict=True):
        if not content.content_captured:
            content_missing = True
        if content.kind == "model":
            _extend(transcript, content.input_messages)
            transcript.extend(content.output_messages)
            if span.input_tokens is not None:
                input_tokens = (input_tokens or 0) + span.input_tokens
            if span.output_tokens is not None:
                output_tokens = (output_tokens or 0) + span.output_tokens
        if content.kind in ("model", "agent") and span.status_code == 2:
            errors.append(span.error_type or span.status_message or "error")
    users = [message.text for message in transcript if message.role == "user"]
    replies = [message.text for message in transcript
               if message.role == "assistant" and message.text]
    has_model_calls = any(content.kind == "model" for content in contents)
    if has_model_calls and (not users or users[0] is None):
        content_missing = True
    version, source = None, None
    for name in version_sources:
        version = next((getattr(span, name) for span in ordered if getattr(span, name)), None)
        if version is not None:
            source = _VERSION_NAMES.get(name, name)
            break
    conversation = Conversation(
        conversation_id=conversation_id,
        trace_ids=tuple(dict.fromkeys(span.trace_id for span in ordered)),
        first_ask=users[0] if users else None,
        user_turns=tuple(users[1:]),
        assistant_turns=tuple(replies),
        steps=tuple(_steps(transcript, contents, by_id)),
        final_reply=replies[-1] if replies else None,
        input_tokens=input_tokens, output_tokens=output_tokens,
        agent_name=next((span.agent_name for span in ordered if span.agent_name), None),
        model_version=version, model_version_source=source,
        content_missing=content_missing, errors=tuple(errors),
        start_unix_nano=ordered[0].start_unix_nano if ordered else 0,
        end_unix_nano=max((span.end_unix_nano for span in ordered), default=0),
    )
    return Assembled(conversation, tuple(contents),
                     session_id=_first_attribute(ordered, "session.id"),
                     user_id=_first_attribute(ordered, "user.id", "enduser.id"))
