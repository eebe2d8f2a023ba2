"""Spans and log records of one conversation → a :class:`Conversation`.

Each span is read by its dialect (:func:`processor.dialects.read_span`). Model calls are
walked in time order to build one transcript: each call's input is the history as the
agent sent it, so the part already in the transcript is skipped and the rest appended,
followed by the call's output. An agent span holds its run's history too; it is read when
the run ends, and adds only what its model calls did not show (pydantic-ai records the ask
of a run whose model call failed on the agent span alone). Steps are the tool calls of the
transcript, each bound to its result by call id, then by tool name, then by order; tool
spans whose calls never appeared in a transcript (content capture off) become steps of
their own. Usage is summed over model-call spans only, since agent spans repeat their
children's totals. Errors are the failed model calls and the failed agent runs, except a
run that failed with the error of a model call under it (one failure, not two).

An assistant message that is a text reply (not a tool call) whose text was not captured is
an assistant turn of ``None``: missing, not dropped.

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
    transcript: tuple[Message, ...] = ()
    """Every message once, in the order it happened (for ``conversations.messages``:
    :mod:`processor.transcript`)."""


def _key(message: Message) -> tuple[object, ...]:
    return (message.role, message.text, message.tool_call_id,
            tuple(call.call_id or call.name for call in message.tool_calls))


def _extend(transcript: list[Message], keys: list[tuple[object, ...]],
            history: Sequence[Message], key_of: dict[int, tuple[object, ...]]) -> None:
    """Append the part of a call's history that the transcript lacks.

    The history's messages are matched in order against the transcript; those after the
    last one found are new. This covers the history sent whole (the transcript is its
    prefix), sent again (a retry: it is a prefix of the transcript), framed differently
    (a rewritten system prompt, a window: the unmatched framing is not appended) and only
    the new turn (nothing matches).

    ``keys`` are the transcript's messages' keys (kept up to date here); ``key_of`` the
    keys of messages already seen, by id: histories share their leading messages' objects
    (:mod:`processor._messages` reads a list that extends one read before only past it).
    """
    wanted = []
    for message in history:
        key = key_of.get(id(message))
        if key is None:
            key = key_of[id(message)] = _key(message)
        wanted.append(key)
    known = len(keys)
    if wanted[:known] == keys:
        # the history sent whole: each of its first messages is found where the one
        # before was, and none after them is (the transcript has nothing past them)
        new_from = known
    else:
        position = 0
        new_from = 0
        for index, key in enumerate(wanted):
            try:
                found = keys.index(key, position)
            except ValueError:
                continue
            position = found + 1
            new_from = index + 1
    transcript.extend(history[new_from:])
    keys.extend(wanted[new_from:])


def _take_result(call: ToolCall, results: list[Message]) -> tuple[Message | None, Binding]:
    """Remove and return the result answering ``call``: by call id, else the next unkeyed."""
    for index, message in enumerate(results):
        if call.call_id is not None and message.tool_call_id == call.call_id:
            return results.pop(index), "call_id"
    for index, message in enumerate(results):
        if message.tool_call_id is None:
            return results.pop(index), "order"
    return None, "none"


def _take_span(call: ToolCall,
               tool_spans: list[SpanContent]) -> tuple[SpanContent | None, Binding]:
    """Remove and return the tool span that ran ``call``: by call id, else by name (a span
    and a call that both carry call ids, different ones, are different calls)."""
    for index, content in enumerate(tool_spans):
        if call.call_id is not None and content.tool_call_id == call.call_id:
            return tool_spans.pop(index), "call_id"
    for index, content in enumerate(tool_spans):
        if content.tool_name == call.name and None in (call.call_id, content.tool_call_id):
            return tool_spans.pop(index), "name"
    return None, "none"


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
            text = result.text if result is not None else None
            if text is None and span is not None:
                text = span.tool_result
            # A result sent back is an answer even when its text was not captured.
            steps.append(_step(call.name, call.call_id, call.arguments, text, span, spans,
                               bound, answered=result is not None))
    for content in tool_spans:  # tool runs whose calls no transcript showed
        steps.append(_step(content.tool_name or "unknown_tool", content.tool_call_id,
                           content.tool_arguments, content.tool_result, content, spans, "span"))
    return steps


def _step(name: str, call_id: str | None, arguments: str | None, result: str | None,
          content: SpanContent | None, spans: dict[str, SpanRow], bound: Binding, *,
          answered: bool = False) -> Step:
    span = spans.get(content.span_id) if content is not None else None
    error = None
    status: StepStatus
    if span is not None and span.status_code == 2:
        status = "error"
        error = _error(span)
    elif answered or result is not None or span is not None:
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


def _is_reply(message: Message) -> bool:
    """A text reply of the assistant: text, or no text captured and no tool call asked."""
    if message.role != "assistant":
        return False
    if message.text is not None:
        return bool(message.text)
    return not message.tool_calls and message.finish_reason != "tool_calls"


def _under(span: SpanRow, ancestor: str, by_id: dict[str, SpanRow]) -> bool:
    """Whether ``ancestor`` is a parent, grandparent, ... of ``span``."""
    seen: set[str] = set()
    parent = span.parent_span_id
    while parent is not None and parent not in seen:
        if parent == ancestor:
            return True
        seen.add(parent)
        found = by_id.get(parent)
        parent = found.parent_span_id if found is not None else None
    return False


def _error(span: SpanRow) -> str:
    return span.error_type or span.status_message or "error"


def _errors(ordered: Sequence[SpanRow], contents: Sequence[SpanContent],
            by_id: dict[str, SpanRow]) -> list[str]:
    """Failed model calls and failed agent runs, in time order; an agent run that failed
    with the error of a failed model call under it is that call's failure, not another."""
    failed_models = [span for span, content in zip(ordered, contents, strict=True)
                     if content.kind == "model" and span.status_code == 2]
    errors = []
    for span, content in zip(ordered, contents, strict=True):
        if span.status_code != 2 or content.kind not in ("model", "agent"):
            continue
        if content.kind == "agent" and any(
                _error(model) == _error(span) and _under(model, span.span_id, by_id)
                for model in failed_models):
            continue
        errors.append(_error(span))
    return errors


def assemble(conversation_id: str, spans: Sequence[SpanRow],
             logs_by_span: dict[str, list[LogRow]],
             version_sources: Sequence[str] = VERSION_SOURCES) -> Assembled:
    """Build one conversation from its spans (any order) and their log records."""
    ordered = sorted(spans, key=lambda span: (span.start_unix_nano, span.end_unix_nano))
    by_id = {span.span_id: span for span in ordered}
    contents = [read_span(span, logs_by_span.get(span.span_id, ())) for span in ordered]
    # Model calls are read when they start, agent runs when they end (after their calls).
    readings = sorted(
        ((span.end_unix_nano if content.kind == "agent" else span.start_unix_nano, index)
         for index, (span, content) in enumerate(zip(ordered, contents, strict=True))
         if content.kind in ("model", "agent")))
    transcript: list[Message] = []
    keys: list[tuple[object, ...]] = []
    # every message read stays referenced by ``contents`` until the end, so ids are unique
    key_of: dict[int, tuple[object, ...]] = {}
    input_tokens = output_tokens = None
    for _, index in readings:
        span, content = ordered[index], contents[index]
        if content.kind == "agent":
            _extend(transcript, keys, (*content.input_messages, *content.output_messages),
                    key_of)
            continue
        _extend(transcript, keys, content.input_messages, key_of)
        transcript.extend(content.output_messages)
        keys.extend(_key(message) for message in content.output_messages)
        if span.input_tokens is not None:
            input_tokens = (input_tokens or 0) + span.input_tokens
        if span.output_tokens is not None:
            output_tokens = (output_tokens or 0) + span.output_tokens
    content_missing = any(not content.content_captured for content in contents)
    users = [message.text for message in transcript if message.role == "user"]
    replies = [message.text for message in transcript if _is_reply(message)]
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
        content_missing=content_missing, errors=tuple(_errors(ordered, contents, by_id)),
        start_unix_nano=ordered[0].start_unix_nano if ordered else 0,
        end_unix_nano=max((span.end_unix_nano for span in ordered), default=0),
    )
    return Assembled(conversation, tuple(contents),
                     session_id=_first_attribute(ordered, "session.id"),
                     user_id=_first_attribute(ordered, "user.id", "enduser.id"),
                     transcript=tuple(transcript))
