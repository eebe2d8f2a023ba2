"""The dialect readers, against what the real instrumentations emit and against hand-built
spans for the dialects no installed library writes.

End to end (marked ``integration``): the weather conversation of
:mod:`tests.support.instrumented` runs under one real instrumentation in one mode, its
telemetry goes through the real OTLP exporter into the real collector, comes back out of
the store as :class:`~processor.records.SpanRow` / :class:`~processor.records.LogRow`, and
:func:`~processor.dialects.read_span` must find in it the user's ask, the tool call (name,
call id, arguments), the result bound to that call id in the next model call's input, the
final answer and the finish reasons, the failed call as a model call without output, and,
with content capture off, the content marked missing rather than invented.

Unit tests build spans by hand: Strands-style span events, OpenLLMetry's older indexed
attributes, OpenInference tool spans, malformed JSON.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest
from pydantic_ai.models.instrumented import InstrumentationSettings

from processor.dialects import read_span, span_kind
from processor.records import LogRow, Message, SpanContent, SpanRow, ToolCall
from tests.support.instrumented import (
    CALL_ID,
    FINAL_TEXT,
    SYSTEM_PROMPT,
    TOOL_ARGUMENTS,
    TOOL_NAME,
    TOOL_RESULT,
    USER_PROMPT,
    CollectorServer,
    Telemetry,
    clean_genai_environment,
    instrument_openai,
    run_weather_agent,
    run_weather_conversation,
    telemetry_for,
    weather_script,
)
from tests.support.openai_loopback import OpenAILoopback
from tests.support.rows import load_log_rows, load_span_rows


@pytest.fixture(autouse=True)
def _clean_genai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    clean_genai_environment(monkeypatch)


@pytest.fixture
def telemetry(collector_server: CollectorServer) -> Iterator[Telemetry]:
    # One transport is enough here: what is stored does not depend on it (the collector's
    # own tests run every library over both).
    with telemetry_for(collector_server, "grpc") as providers:
        yield providers


# --------------------------------------------------------------------------- end to end




def converse(
    mode: str,
    telemetry: Telemetry,
    collector: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
    *,
    stream: bool,
) -> list[tuple[SpanRow, SpanContent]]:
    """Run the weather conversation under ``mode``; every stored span, read."""
    with (
        instrument_openai(mode, telemetry, monkeypatch),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv, stream=stream)
    telemetry.flush()
    return read_store(collector)


def read_store(collector: CollectorServer) -> list[tuple[SpanRow, SpanContent]]:
    spans = load_span_rows(collector.query)
    logs = load_log_rows(collector.query)
    return [(span, read_span(span, logs)) for span in spans]


def three_calls(
    read: list[tuple[SpanRow, SpanContent]],
) -> tuple[SpanContent, SpanContent, tuple[SpanRow, SpanContent]]:
    """The tool-call turn, the text turn and the failed call, each a model call."""
    assert [content.kind for _, content in read] == ["model", "model", "model"]
    (_, tool_turn), (_, text_turn), failed = read
    return tool_turn, text_turn, failed


def assert_tool_call(message: Message, *, arguments: bool = True) -> None:
    """The assistant asks for get_weather(city=Oslo) under the scripted call id."""
    assert message.role == "assistant"
    assert message.text is None
    (call,) = message.tool_calls
    assert (call.name, call.call_id) == (TOOL_NAME, CALL_ID)
    if arguments:
        assert call.arguments is not None
        assert json.loads(call.arguments) == TOOL_ARGUMENTS
    else:
        assert call.arguments is None


def assert_failed(failed: tuple[SpanRow, SpanContent], *, captured: bool) -> None:
    """The 500: a model call that failed and returned nothing."""
    span, content = failed
    assert span.status_code == 2
    assert content.kind == "model"
    assert content.output_messages == ()
    assert content.content_captured is captured


@dataclass(frozen=True)
class Captured:
    """What a mode with content capture on gives."""

    channel: str
    stream: bool = False
    tool_definitions: bool = False
    result_call_id: str | None = CALL_ID
    """OpenLLMetry's per-message log records carry no call id on the tool message."""


CAPTURED = {
    "openinference": Captured("openinference", tool_definitions=True),
    "openinference-genai-semconv": Captured("semconv", stream=True, tool_definitions=True),
    "openai-v2-legacy-logs": Captured("log"),
    "openai-v2-span-only": Captured("semconv", stream=True),
    "openai-v2-event-only": Captured("log"),
    "openllmetry-attributes": Captured("semconv", tool_definitions=True),
    "openllmetry-log-records": Captured("log", result_call_id=None),
}


@pytest.mark.integration
@pytest.mark.parametrize("mode", list(CAPTURED))
def test_conversation_with_content(
    mode: str,
    telemetry: Telemetry,
    collector_server: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = CAPTURED[mode]
    read = converse(mode, telemetry, collector_server, monkeypatch, stream=expected.stream)
    tool_turn, text_turn, failed = three_calls(read)

    for content in (tool_turn, text_turn):
        assert content.channel == expected.channel
        assert content.content_captured
        assert content.system_instructions is None  # a system message, not instructions
        if expected.tool_definitions:
            (definition,) = map(json.loads, content.tool_definitions)
            # As recorded: OpenInference keeps OpenAI's request shape, the conventions
            # flatten it.
            assert definition.get("function", definition)["name"] == TOOL_NAME
        else:
            assert content.tool_definitions == ()

    # The ask, and the tool call it gets.
    assert [(m.role, m.text) for m in tool_turn.input_messages] == [
        ("system", SYSTEM_PROMPT),
        ("user", USER_PROMPT),
    ]
    (asked,) = tool_turn.output_messages
    assert_tool_call(asked)
    assert asked.finish_reason == "tool_calls"

    # The result goes back under the call id; the model answers.
    system, user, assistant, tool = text_turn.input_messages
    assert (system.text, user.text) == (SYSTEM_PROMPT, USER_PROMPT)
    assert_tool_call(assistant)
    assert tool.role == "tool"
    assert tool.tool_call_id == expected.result_call_id
    assert tool.text is not None and json.loads(tool.text) == TOOL_RESULT
    assert text_turn.output_messages == (
        Message(role="assistant", text=FINAL_TEXT, finish_reason="stop"),
    )

    assert_failed(failed, captured=True)
    assert failed[1].input_messages == text_turn.input_messages


@dataclass(frozen=True)
class NotCaptured:
    """What a mode with content capture off gives."""

    structure: bool
    """The messages are there without their text (else there are no messages at all)."""
    arguments: bool = False
    """Tool-call arguments are kept even so."""
    failed_captured: bool = True
    """A failed call with no content at all is not evidence of capture being off."""
    stream: bool = False


NOT_CAPTURED = {
    "openinference-hidden": NotCaptured(structure=False, failed_captured=False),
    "openinference-hidden-text": NotCaptured(structure=True, arguments=True, failed_captured=False),
    "openai-v2-legacy-logs-no-content": NotCaptured(structure=True, failed_captured=False),
    "openai-v2-no-content": NotCaptured(structure=False),
    "openllmetry-no-content": NotCaptured(structure=False, stream=True),
}


@pytest.mark.integration
@pytest.mark.parametrize("mode", list(NOT_CAPTURED))
def test_conversation_without_content(
    mode: str,
    telemetry: Telemetry,
    collector_server: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = NOT_CAPTURED[mode]
    read = converse(mode, telemetry, collector_server, monkeypatch, stream=expected.stream)
    tool_turn, text_turn, failed = three_calls(read)

    for content, reason in ((tool_turn, "tool_calls"), (text_turn, "stop")):
        assert not content.content_captured
        messages = (*content.input_messages, *content.output_messages)
        assert [m.text for m in messages] == [None] * len(messages)
        assert [m.finish_reason for m in content.output_messages] == [reason]
    assert_failed(failed, captured=expected.failed_captured)

    if not expected.structure:
        # Only the finish reasons survive: one output message each, without text.
        for content in (tool_turn, text_turn):
            assert content.channel is None
            assert content.input_messages == ()
            assert [m.tool_calls for m in content.output_messages] == [()]
        return
    assert [m.role for m in tool_turn.input_messages] == ["system", "user"]
    assert_tool_call(tool_turn.output_messages[0], arguments=expected.arguments)
    roles = [m.role for m in text_turn.input_messages]
    assert roles == ["system", "user", "assistant", "tool"]
    assert_tool_call(text_turn.input_messages[2], arguments=expected.arguments)
    assert text_turn.input_messages[3].tool_call_id == CALL_ID


@pytest.mark.integration
@pytest.mark.parametrize("include_content", [True, False], ids=["content", "no-content"])
def test_pydantic_ai_agent(
    telemetry: Telemetry, collector_server: CollectorServer, include_content: bool
) -> None:
    """pydantic-ai: agent, chat and tool spans; tool results sent back in ``user``
    messages are read as ``tool`` messages bound to the call id."""
    settings = InstrumentationSettings(
        tracer_provider=telemetry.tracer_provider, include_content=include_content
    )
    with OpenAILoopback(script=weather_script()) as srv:
        asyncio.run(run_weather_agent(srv, settings))
    telemetry.flush()
    read = read_store(collector_server)
    assert [c.kind for _, c in read] == ["agent", "model", "tool", "model", "agent", "model"]
    agent, tool_chat, tool, text_chat, failed_agent, failed_chat = (c for _, c in read)

    def text(value: str) -> str | None:
        return value if include_content else None

    assert [(m.role, m.text) for m in tool_chat.input_messages] == [("user", text(USER_PROMPT))]
    assert_tool_call(tool_chat.output_messages[0], arguments=include_content)
    assert tool_chat.output_messages[0].finish_reason == "tool_calls"
    user, assistant, result = text_chat.input_messages
    assert (user.role, user.text) == ("user", text(USER_PROMPT))
    assert_tool_call(assistant, arguments=include_content)
    assert (result.role, result.tool_call_id) == ("tool", CALL_ID)
    assert text_chat.output_messages == (
        Message(role="assistant", text=text(FINAL_TEXT), finish_reason="stop"),
    )
    for chat in (tool_chat, text_chat):
        assert chat.channel == "semconv"
        assert chat.system_instructions == text(SYSTEM_PROMPT)
        assert [json.loads(d)["name"] for d in chat.tool_definitions] == [TOOL_NAME]
        assert chat.content_captured is include_content

    assert (tool.tool_name, tool.tool_call_id) == (TOOL_NAME, CALL_ID)
    assert tool.content_captured is include_content
    if include_content:
        assert tool.channel == "tool_span"
        assert result.text is not None and json.loads(result.text) == TOOL_RESULT
        assert tool.tool_arguments is not None and tool.tool_result is not None
        assert json.loads(tool.tool_arguments) == TOOL_ARGUMENTS
        assert json.loads(tool.tool_result) == TOOL_RESULT
    else:
        assert result.text is None
        assert (tool.channel, tool.tool_arguments, tool.tool_result) == (None, None, None)

    # The agent span holds the whole run: its history, and the answer as its output.
    assert [m.role for m in agent.input_messages] == ["user", "assistant", "tool"]
    assert agent.input_messages[2].tool_call_id == CALL_ID
    assert agent.output_messages == text_chat.output_messages
    assert agent.system_instructions == text(SYSTEM_PROMPT)
    assert agent.content_captured is include_content

    # The failed run: pydantic-ai records no messages on the failed chat span.
    assert [(m.role, m.text) for m in failed_agent.input_messages] == [
        ("user", text("And tomorrow?"))
    ]
    assert failed_agent.output_messages == ()
    assert_failed(read[5], captured=True)
    assert failed_chat.input_messages == ()


# --------------------------------------------------------------------------- hand-built spans

_TRACE = "0af7651916cd43dd8448eb211c80319c"


def span(
    operation: str | None,
    attributes: dict[str, object] | None = None,
    events: Sequence[tuple[str, dict[str, object]]] = (),
    *,
    span_id: str = "b7ad6b7169203331",
    status_code: int = 1,
) -> SpanRow:
    """A stored span as the collector would give it back."""
    return SpanRow(
        trace_id=_TRACE,
        span_id=span_id,
        parent_span_id=None,
        name="whatever",
        operation=operation,
        start_unix_nano=1_700_000_000_000_000_000,
        end_unix_nano=1_700_000_001_000_000_000,
        status_code=status_code,
        status_message=None,
        error_type=None,
        attributes=dict(attributes or {}),
        events=tuple(
            {
                "time_unix_nano": 1_700_000_000_000_000_000 + index,
                "name": name,
                "attributes": event_attributes,
                "dropped_attributes_count": 0,
            }
            for index, (name, event_attributes) in enumerate(events)
        ),
    )


def blocks(*items: object) -> str:
    """Bedrock content blocks as Strands serialises them into an event attribute."""
    return json.dumps(list(items), ensure_ascii=False)


STRANDS_TOOL_USE = {
    "toolUse": {"toolUseId": "tooluse_1", "name": TOOL_NAME, "input": TOOL_ARGUMENTS}
}
STRANDS_TOOL_RESULT = {
    "toolResult": {
        "toolUseId": "tooluse_1",
        "status": "success",
        "content": [{"text": "4 degrees, cloudy"}],
    }
}


def test_strands_model_span_events() -> None:
    """Strands (legacy conventions): each message is a span event whose ``content``
    attribute is the message's Bedrock content blocks as JSON; the tool result comes back
    as a user message, recorded as ``gen_ai.tool.message``; the reply is a ``gen_ai.choice``
    with Bedrock's stop reason."""
    content = read_span(
        span(
            "chat",
            {"gen_ai.system": "strands-agents"},
            [
                ("gen_ai.user.message", {"content": blocks({"text": USER_PROMPT})}),
                ("gen_ai.assistant.message", {"content": blocks(STRANDS_TOOL_USE)}),
                ("gen_ai.tool.message", {"content": blocks(STRANDS_TOOL_RESULT)}),
                (
                    "gen_ai.choice",
                    {"finish_reason": "end_turn", "message": blocks({"text": FINAL_TEXT})},
                ),
            ],
        ),
        [],
    )
    assert content.kind == "model"
    assert content.channel == "event"
    assert content.content_captured
    assert content.input_messages == (
        Message(role="user", text=USER_PROMPT),
        Message(
            role="assistant",
            text=None,
            tool_calls=(
                ToolCall(name=TOOL_NAME, call_id="tooluse_1", arguments='{"city":"Oslo"}'),
            ),
        ),
        Message(role="tool", text="4 degrees, cloudy", tool_call_id="tooluse_1"),
    )
    assert content.output_messages == (
        Message(role="assistant", text=FINAL_TEXT, finish_reason="stop"),
    )


def test_strands_choice_asking_for_a_tool() -> None:
    content = read_span(
        span(
            "chat",
            {},
            [
                ("gen_ai.user.message", {"content": blocks({"text": USER_PROMPT})}),
                (
                    "gen_ai.choice",
                    {
                        "finish_reason": "tool_use",
                        "message": blocks({"text": "Checking."}, STRANDS_TOOL_USE),
                    },
                ),
            ],
        ),
        [],
    )
    (reply,) = content.output_messages
    assert (reply.text, reply.finish_reason) == ("Checking.", "tool_calls")
    assert [c.call_id for c in reply.tool_calls] == ["tooluse_1"]


def test_body_like_event_attributes() -> None:
    """Span events whose attributes are the record's body as it would be in a log record
    (plain ``content`` text, ``tool_calls`` and ``id``), or that carry the body as JSON in
    an ``event.body`` attribute."""
    wire_call = {
        "id": CALL_ID,
        "type": "function",
        "function": {"name": TOOL_NAME, "arguments": '{"city":"Oslo"}'},
    }
    content = read_span(
        span(
            "chat",
            {},
            [
                ("gen_ai.system.message", {"content": SYSTEM_PROMPT}),
                ("gen_ai.user.message", {"content": USER_PROMPT}),
                ("gen_ai.assistant.message", {"tool_calls": [wire_call]}),
                ("gen_ai.tool.message", {"content": '{"temp_c": 4}', "id": CALL_ID}),
                (
                    "gen_ai.choice",
                    {
                        "event.body": json.dumps(
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": FINAL_TEXT},
                            }
                        )
                    },
                ),
            ],
        ),
        [],
    )
    assert content.channel == "event"
    assert [(m.role, m.text) for m in content.input_messages] == [
        ("system", SYSTEM_PROMPT),
        ("user", USER_PROMPT),
        ("assistant", None),
        ("tool", '{"temp_c": 4}'),
    ]
    assert content.input_messages[2].tool_calls == (
        ToolCall(name=TOOL_NAME, call_id=CALL_ID, arguments='{"city":"Oslo"}'),
    )
    assert content.input_messages[3].tool_call_id == CALL_ID
    assert content.output_messages == (
        Message(role="assistant", text=FINAL_TEXT, finish_reason="stop"),
    )


def test_strands_legacy_tool_span() -> None:
    """On Strands' tool spans the legacy events mean something else: ``gen_ai.tool.message``
    holds the arguments and ``gen_ai.choice`` the result."""
    content = read_span(
        span(
            "execute_tool",
            {"gen_ai.tool.name": TOOL_NAME, "gen_ai.tool.call.id": "t1"},
            [
                (
                    "gen_ai.tool.message",
                    {"role": "tool", "content": json.dumps(TOOL_ARGUMENTS), "id": "t1"},
                ),
                ("gen_ai.choice", {"message": blocks({"text": "4 degrees"}), "id": "t1"}),
            ],
        ),
        [],
    )
    assert (content.kind, content.channel) == ("tool", "event")
    assert (content.tool_name, content.tool_call_id) == (TOOL_NAME, "t1")
    assert content.tool_arguments == json.dumps(TOOL_ARGUMENTS)
    assert content.tool_result == "4 degrees"
    assert content.input_messages == content.output_messages == ()


def test_strands_agent_span() -> None:
    """The agent span: system prompt as an attribute, the reply as plain text."""
    content = read_span(
        span(
            "invoke_agent",
            {"gen_ai.agent.system_prompt": SYSTEM_PROMPT},
            [
                ("gen_ai.user.message", {"content": blocks({"text": USER_PROMPT})}),
                ("gen_ai.choice", {"message": FINAL_TEXT + "\n", "finish_reason": "end_turn"}),
            ],
        ),
        [],
    )
    assert content.kind == "agent"
    assert content.system_instructions == SYSTEM_PROMPT
    assert content.input_messages == (Message(role="user", text=USER_PROMPT),)
    assert content.output_messages == (
        Message(role="assistant", text=FINAL_TEXT + "\n", finish_reason="stop"),
    )


def test_strands_latest_conventions_in_details_events() -> None:
    """Strands on the latest conventions: ``gen_ai.client.inference.operation.details``
    span events with the messages as JSON strings; tool results in a user message."""
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": USER_PROMPT}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "name": TOOL_NAME, "id": "t1", "arguments": TOOL_ARGUMENTS}
            ],
        },
        {
            "role": "user",
            "parts": [
                {"type": "tool_call_response", "id": "t1", "response": [{"text": "4 degrees"}]}
            ],
        },
    ]
    output = [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": FINAL_TEXT}],
            "finish_reason": "end_turn",
        }
    ]
    details = "gen_ai.client.inference.operation.details"
    content = read_span(
        span(
            "chat",
            {},
            [
                (details, {"gen_ai.input.messages": json.dumps(messages)}),
                (details, {"gen_ai.output.messages": json.dumps(output)}),
            ],
        ),
        [],
    )
    assert content.channel == "event"
    assert [(m.role, m.text, m.tool_call_id) for m in content.input_messages] == [
        ("user", USER_PROMPT, None),
        ("assistant", None, None),
        ("tool", "4 degrees", "t1"),
    ]
    assert content.output_messages == (
        Message(role="assistant", text=FINAL_TEXT, finish_reason="stop"),
    )

    tool = read_span(
        span(
            "execute_tool",
            {"gen_ai.tool.name": TOOL_NAME, "gen_ai.tool.call.id": "t1"},
            [
                (
                    details,
                    {
                        "gen_ai.input.messages": json.dumps(
                            [{"role": "tool", "parts": [messages[1]["parts"][0]]}]
                        )
                    },
                ),
                (
                    details,
                    {
                        "gen_ai.output.messages": json.dumps(
                            [{"role": "tool", "parts": [messages[2]["parts"][0]]}]
                        )
                    },
                ),
            ],
        ),
        [],
    )
    assert (tool.channel, tool.tool_arguments, tool.tool_result) == (
        "event",
        '{"city":"Oslo"}',
        "4 degrees",
    )


def test_mixed_user_message_and_anthropic_blocks() -> None:
    """A user message that returns two results and says something: two tool messages
    (results first), then the user's text; Anthropic's ``tool_use`` / ``tool_result``
    blocks read like parts."""
    messages = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": TOOL_NAME, "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "b", "name": TOOL_NAME, "input": {"city": "Bergen"}},
            ],
        },
        {
            "role": "human",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "4"},
                {"type": "text", "text": "and hurry"},
                {
                    "type": "tool_result",
                    "tool_use_id": "b",
                    "content": [{"type": "text", "text": "7"}],
                },
            ],
        },
    ]
    content = read_span(span("chat", {"gen_ai.input.messages": json.dumps(messages)}), [])
    assert [(m.role, m.text, m.tool_call_id) for m in content.input_messages] == [
        ("assistant", None, None),
        ("tool", "4", "a"),
        ("tool", "7", "b"),
        ("user", "and hurry", None),
    ]
    assert [c.arguments for c in content.input_messages[0].tool_calls] == [
        '{"city":"Oslo"}',
        '{"city":"Bergen"}',
    ]
    assert not content.content_captured  # a successful call without output


def test_openllmetry_indexed_attributes() -> None:
    """OpenLLMetry before ``gen_ai.input.messages``: ``gen_ai.prompt.N.*`` and
    ``gen_ai.completion.N.*``, content blocks as JSON inside the JSON-less attribute."""
    content = read_span(
        span(
            "chat",
            {
                "llm.request.type": "chat",
                "gen_ai.prompt.0.role": "system",
                "gen_ai.prompt.0.content": SYSTEM_PROMPT,
                "gen_ai.prompt.1.role": "user",
                "gen_ai.prompt.1.content": json.dumps([{"type": "text", "text": USER_PROMPT}]),
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "tool_calls",
                "gen_ai.completion.0.tool_calls.0.id": CALL_ID,
                "gen_ai.completion.0.tool_calls.0.name": TOOL_NAME,
                "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Oslo"}',
                "llm.request.functions.0.name": TOOL_NAME,
                "llm.request.functions.0.parameters": '{"type": "object"}',
            },
        ),
        [],
    )
    assert content.channel == "legacy"
    assert [(m.role, m.text) for m in content.input_messages] == [
        ("system", SYSTEM_PROMPT),
        ("user", USER_PROMPT),
    ]
    (reply,) = content.output_messages
    assert reply.finish_reason == "tool_calls"
    assert reply.tool_calls == (ToolCall(TOOL_NAME, CALL_ID, '{"city": "Oslo"}'),)
    assert [json.loads(d) for d in content.tool_definitions] == [
        {"name": TOOL_NAME, "parameters": {"type": "object"}},
    ]


def test_openinference_tool_span() -> None:
    content = read_span(
        span(
            "tool",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": TOOL_NAME,
                "tool.parameters": '{"type": "object"}',  # the schema, not the arguments
                "tool_call.id": CALL_ID,
                "input.value": '{"city": "Oslo"}',
                "output.value": "4 degrees",
            },
        ),
        [],
    )
    assert (content.kind, content.channel) == ("tool", "openinference")
    assert (content.tool_name, content.tool_call_id) == (TOOL_NAME, CALL_ID)
    assert (content.tool_arguments, content.tool_result) == ('{"city": "Oslo"}', "4 degrees")
    assert content.content_captured


def test_only_this_spans_log_records_are_read() -> None:
    chat = span("chat")
    other = LogRow(_TRACE, "ffffffffffffffff", 1, "gen_ai.user.message", {"content": "no"}, {})
    mine = LogRow(_TRACE, chat.span_id, 2, "gen_ai.user.message", {"content": "yes"}, {})
    content = read_span(chat, [other, mine])
    assert content.input_messages == (Message(role="user", text="yes"),)


def test_repeated_keys_in_structured_log_attributes() -> None:
    """Key-value lists with repeated keys are stored tagged; the last value wins."""
    part = {"kvlistValue": [["type", "text"], ["content", "old"], ["content", USER_PROMPT]]}
    record = LogRow(
        _TRACE,
        "b7ad6b7169203331",
        1,
        "gen_ai.client.inference.operation.details",
        None,
        {"gen_ai.input.messages": [{"role": "user", "parts": [part]}]},
    )
    content = read_span(span("chat"), [record])
    assert content.input_messages == (Message(role="user", text=USER_PROMPT),)


@pytest.mark.parametrize("arguments", [True, False], ids=["with", "without"])
def test_tool_call_without_arguments_is_missing_content(arguments: bool) -> None:
    """The one sign of capture being off may be a tool call that lost its arguments."""
    call: dict[str, object] = {"type": "tool_call", "id": CALL_ID, "name": TOOL_NAME}
    if arguments:
        call["arguments"] = TOOL_ARGUMENTS
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": USER_PROMPT}]},
        {"role": "assistant", "parts": [call]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": CALL_ID, "result": TOOL_RESULT}],
        },
    ]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": FINAL_TEXT}]}]
    content = read_span(
        span(
            "chat",
            {
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(output),
            },
        ),
        [],
    )
    assert content.input_messages[1].tool_calls[0].arguments == (
        '{"city":"Oslo"}' if arguments else None
    )
    assert content.input_messages[2].text == '{"city":"Oslo","temp_c":4}'
    assert content.content_captured is arguments


# --------------------------------------------------------------------------- malformed input

TRUNCATED = '[{"role": "user", "parts": [{"type": "text", "content": "What is the wea'


def test_malformed_message_list_is_missing_content() -> None:
    """A message list that is not JSON (truncated by an attribute length limit, say) is
    unreadable: no messages from it, content marked missing; nothing raises."""
    output = [{"role": "assistant", "parts": [{"type": "text", "content": FINAL_TEXT}]}]
    content = read_span(
        span(
            "chat",
            {
                "gen_ai.input.messages": TRUNCATED,
                "gen_ai.output.messages": json.dumps(output),
                "gen_ai.system_instructions": '[{"type": "text", "content": "You',
                "gen_ai.tool.definitions": '[{"name": "get_wea',
                "gen_ai.response.finish_reasons": ["stop"],
            },
        ),
        [],
    )
    assert content.input_messages == ()
    assert content.output_messages == (
        Message(role="assistant", text=FINAL_TEXT, finish_reason="stop"),
    )
    assert content.system_instructions is None
    assert content.tool_definitions == ()
    assert not content.content_captured


@pytest.mark.parametrize(
    "value",
    ["{not json", '{"role": "user", "parts": []}', "[1, 2]", '["hello"]', "null", "42"],
)
def test_message_list_of_the_wrong_shape_is_missing_content(value: str) -> None:
    content = read_span(span("agent", {"gen_ai.input.messages": value}), [])
    assert content.input_messages == ()
    assert not content.content_captured


def test_malformed_list_falls_back_to_the_next_channel() -> None:
    """Unreadable semconv JSON does not hide a readable OpenInference copy."""
    content = read_span(
        span(
            "chat",
            {
                "gen_ai.input.messages": TRUNCATED,
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": USER_PROMPT,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": FINAL_TEXT,
            },
        ),
        [],
    )
    assert content.channel == "openinference"
    assert content.input_messages == (Message(role="user", text=USER_PROMPT),)
    assert content.content_captured


def test_free_text_that_is_not_json_is_kept_raw() -> None:
    """Where text is allowed (content, arguments, results), text that looks like JSON but
    is not stays the raw text: it is what was sent."""
    broken_blocks = '[{"text": "unterminated'
    chat = read_span(
        span(
            "chat",
            {},
            [
                ("gen_ai.user.message", {"content": broken_blocks}),
                (
                    "gen_ai.choice",
                    {
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "id": "c",
                                    "function": {"name": TOOL_NAME, "arguments": '{"city": '},
                                }
                            ],
                        },
                    },
                ),
            ],
        ),
        [],
    )
    assert chat.input_messages == (Message(role="user", text=broken_blocks),)
    assert chat.output_messages[0].tool_calls == (ToolCall(TOOL_NAME, "c", '{"city": '),)
    tool = read_span(
        span(
            "execute_tool",
            {
                "gen_ai.tool.name": TOOL_NAME,
                "gen_ai.tool.call.arguments": "{",
                "gen_ai.tool.call.result": "[{oops",
            },
        ),
        [],
    )
    assert (tool.tool_arguments, tool.tool_result) == ("{", "[{oops")


def test_parts_of_the_wrong_shape_do_not_raise() -> None:
    messages = [
        {
            "role": 7,
            "parts": [
                None,
                3,
                "plain",
                {"type": "tool_call"},
                {"type": "image", "uri": "x"},
                {"type": "reasoning", "content": "hmm"},
            ],
        }
    ]
    content = read_span(span("chat", {"gen_ai.input.messages": json.dumps(messages)}), [])
    (user,) = content.input_messages
    assert (user.role, user.text) == ("user", "plain")
    assert user.tool_calls == (ToolCall(name="", call_id=None, arguments=None),)


# --------------------------------------------------------------------------- kind, reasons


@pytest.mark.parametrize(
    ("operation", "kind"),
    [
        ("chat", "model"),
        ("text_completion", "model"),
        ("generate_content", "model"),
        ("llm", "model"),
        ("completion", "model"),
        ("execute_tool", "tool"),
        ("tool", "tool"),
        ("invoke_agent", "agent"),
        ("create_agent", "agent"),
        ("agent", "agent"),
        ("invoke_swarm", "agent"),
        ("embeddings", "other"),
        ("chain", "other"),
        ("workflow", "other"),
        ("CHAT", "model"),
    ],
)
def test_kind_from_operation(operation: str, kind: str) -> None:
    assert span_kind(span(operation)) == kind


def test_kind_without_operation() -> None:
    assert span_kind(span(None, {"gen_ai.input.messages": "[]"})) == "model"
    assert span_kind(span(None, {"gen_ai.tool.call.id": "c"})) == "tool"
    assert span_kind(span(None, {"openinference.span.kind": "AGENT"})) == "agent"
    assert span_kind(span(None, {"http.method": "GET"})) == "other"
    assert read_span(span("embeddings", {"gen_ai.input.messages": "[]"}), []) == SpanContent(
        span_id="b7ad6b7169203331", kind="other", channel=None
    )


@pytest.mark.parametrize(
    ("recorded", "normalised"),
    [
        ("tool_call", "tool_calls"),
        ("tool_use", "tool_calls"),
        ("TOOL_CALLS", "tool_calls"),
        ("end_turn", "stop"),
        ("STOP", "stop"),
        ("max_tokens", "length"),
        ("content_filter", "content_filter"),
    ],
)
def test_finish_reasons(recorded: str, normalised: str) -> None:
    output = [{"role": "assistant", "parts": [], "finish_reason": recorded}]
    content = read_span(span("chat", {"gen_ai.output.messages": json.dumps(output)}), [])
    assert [m.finish_reason for m in content.output_messages] == [normalised]
