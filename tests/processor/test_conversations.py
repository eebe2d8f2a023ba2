"""Conversations end to end: real instrumentations → collector → ``process`` → table.

The end-to-end tests (marked ``integration``) drive real clients (the ``openai`` SDK, in a
hand-written loop or through pydantic-ai) against
:class:`~tests.support.openai_loopback.OpenAILoopback`, instrumented by a real library in
one mode, export through the real OTLP exporter into the real collector, run
:func:`processor.run.process` on the live store and reads the ``conversations`` rows back
with SQL. A row must hold the first ask, later user turns, the assistant's text turns, the
steps (tool, call id, arguments, result, status, error, how they were bound), the final
reply, the failed model call, the tokens of the model calls counted once, the agent name,
the model version and where it came from, and the source traces; content that capture
did not record is ``NULL`` and the row is marked ``content_missing``, never filled in.

Grouping: spans belong to the conversation named by ``gen_ai.conversation.id`` (or
``session.id``, ``conversation.id``, ``thread.id``) on the root span of their trace, else
to their trace. A hand-written agent loop that opens one trace per model call, with the
id on each root span only, gives one conversation spanning all its traces.

A few assembly rules that no installed library exercises (a rewritten system prompt, a
tool span of another call, an agent run failing for its own reason) are checked on spans
built by hand, through :func:`processor.assemble.assemble`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import openai
import pytest
from opentelemetry.trace import Tracer
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from processor.assemble import assemble
from processor.records import Binding, SpanRow, Step
from processor.run import ProcessOptions, process
from processor.transcript import chat_messages
from tests.conftest import RunningCollector
from tests.support.instrumented import (
    CALL_ID,
    FINAL_TEXT,
    REQUEST_MODEL,
    RESPONSE_MODEL,
    SYSTEM_PROMPT,
    TEXT_TURN_USAGE,
    TOOL_ARGUMENTS,
    TOOL_NAME,
    TOOL_RESULT,
    TOOL_TURN_USAGE,
    TOOLS,
    USER_PROMPT,
    Telemetry,
    clean_genai_environment,
    get_weather,
    instrument_openai,
    run_weather_agent,
    run_weather_conversation,
    telemetry_for,
    weather_script,
)
from tests.support.openai_loopback import (
    OpenAILoopback,
    Reply,
    TextReply,
    ToolCall,
    ToolCallReply,
    Usage,
)

integration = pytest.mark.integration

ARGUMENTS = json.dumps(TOOL_ARGUMENTS, separators=(",", ":"))
"""The arguments as the loopback sends them (compact JSON)."""
CLIENT_RESULT = json.dumps(TOOL_RESULT)
"""The result as :func:`run_weather_conversation` sends it back (``json.dumps``)."""
COMPACT_RESULT = json.dumps(TOOL_RESULT, separators=(",", ":"))
"""The result as pydantic-ai sends it back (compact JSON)."""
INPUT_TOKENS = TOOL_TURN_USAGE.prompt_tokens + TEXT_TURN_USAGE.prompt_tokens
OUTPUT_TOKENS = TOOL_TURN_USAGE.completion_tokens + TEXT_TURN_USAGE.completion_tokens
SERVICE_VERSION = "1.2.3"
"""The service.version :func:`telemetry_for` puts on the resource."""


@pytest.fixture(autouse=True)
def _clean_genai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    clean_genai_environment(monkeypatch)


@pytest.fixture
def telemetry(collector_server: RunningCollector) -> Iterator[Telemetry]:
    # What is stored does not depend on the transport (tests/collector runs both).
    with telemetry_for(collector_server, "grpc") as providers:
        yield providers


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Row:
    """One row of the ``conversations`` table (the columns this module checks)."""

    conversation_id: str
    trace_ids: tuple[str, ...]
    session_id: str | None
    first_ask: str | None
    user_turns: tuple[str | None, ...]
    assistant_turns: tuple[str | None, ...]
    final_reply: str | None
    steps: tuple[Step, ...]
    errors: tuple[str, ...]
    input_tokens: int | None
    output_tokens: int | None
    agent_name: str | None
    model_version: str | None
    model_version_source: str | None
    content_missing: bool


_ROWS = """
SELECT conversation_id, trace_ids, session_id, first_ask, user_turns, assistant_turns,
       final_reply, steps, errors, input_tokens, output_tokens, agent_name, model_version,
       model_version_source, content_missing
FROM conversations
ORDER BY start_unix_nano
"""


def processed(server: RunningCollector, options: ProcessOptions | None = None) -> list[Row]:
    """Process everything the collector acknowledged; every conversation, oldest first."""
    assert server.collector.flush(timeout=60), "acknowledged requests were not stored"
    process(server.store, options)
    rows = []
    for (conversation_id, trace_ids, session_id, first_ask, user_turns, assistant_turns,
         final_reply, steps, errors, input_tokens, output_tokens, agent_name, model_version,
         model_version_source, content_missing) in server.query(_ROWS):
        rows.append(Row(
            conversation_id=conversation_id,
            trace_ids=tuple(trace_ids),
            session_id=session_id,
            first_ask=first_ask,
            user_turns=tuple(user_turns),
            assistant_turns=tuple(assistant_turns),
            final_reply=final_reply,
            steps=tuple(Step(**step) for step in json.loads(steps)),
            errors=tuple(errors),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            agent_name=agent_name,
            model_version=model_version,
            model_version_source=model_version_source,
            content_missing=content_missing,
        ))
    return rows


def hex_trace_id(trace_id: int) -> str:
    return format(trace_id, "032x")


def hex_span_id(span_id: int) -> str:
    return format(span_id, "016x")


def weather_step(*, arguments: str | None = ARGUMENTS, result: str | None = CLIENT_RESULT,
                 bound_by: Binding = "call_id", span_id: str | None = None) -> Step:
    """The get_weather(city=Oslo) step, answered."""
    return Step(tool=TOOL_NAME, call_id=CALL_ID, arguments=arguments, result=result,
                status="ok", error=None, bound_by=bound_by, span_id=span_id)


# --------------------------------------------------------------------------- openai client




@dataclass(frozen=True)
class Expected:
    """What one library in one mode makes of the weather conversation."""

    error: str
    """The failed call's error type, as the library records it."""
    captured: bool = True
    """Content capture on."""
    structure: bool = False
    """With capture off: the messages are kept without their text (roles, call ids)."""
    bound_by: Binding = "call_id"
    """OpenLLMetry's per-message log records drop the call id of the tool message, so the
    result is bound to its call by order."""
    result: str = CLIENT_RESULT
    """The tool result as recorded (OpenInference's GenAI attributes re-encode it)."""


OPENINFERENCE_ERROR = "openai.InternalServerError"
OTEL_ERROR = "InternalServerError"

MODES = {
    "openinference": Expected(OPENINFERENCE_ERROR),
    "openinference-genai-semconv": Expected(OPENINFERENCE_ERROR, result=COMPACT_RESULT),
    "openinference-hidden": Expected(OPENINFERENCE_ERROR, captured=False),
    "openai-v2-legacy-logs": Expected(OTEL_ERROR),
    "openai-v2-legacy-logs-no-content": Expected(OTEL_ERROR, captured=False, structure=True),
    "openai-v2-span-only": Expected(OTEL_ERROR),
    "openai-v2-event-only": Expected(OTEL_ERROR),
    "openai-v2-no-content": Expected(OTEL_ERROR, captured=False),
    "openllmetry-attributes": Expected(OTEL_ERROR),
    "openllmetry-log-records": Expected(OTEL_ERROR, bound_by="order"),
    "openllmetry-no-content": Expected(OTEL_ERROR, captured=False),
}


def converse_in_session(
    mode: str, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch, conversation_id: str
) -> str:
    """The weather conversation (tool call, answer, a 500) under one root span carrying
    ``gen_ai.conversation.id``, as a hand-written agent loop records a session; returns
    the trace id."""
    tracer = telemetry.tracer_provider.get_tracer("tests.weather_session")
    with (
        instrument_openai(mode, telemetry, monkeypatch),
        OpenAILoopback(script=weather_script()) as srv,
        tracer.start_as_current_span(
            "weather session", attributes={"gen_ai.conversation.id": conversation_id}
        ) as root,
    ):
        run_weather_conversation(srv)
    telemetry.flush()
    return hex_trace_id(root.get_span_context().trace_id)


@integration
@pytest.mark.parametrize("mode", list(MODES))
def test_weather_conversation(
    mode: str,
    telemetry: Telemetry,
    collector_server: RunningCollector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three model calls of one session: the ask, the step bound to its result, the
    answer, the failed call, and the usage of the two calls that answered."""
    expected = MODES[mode]
    trace_id = converse_in_session(mode, telemetry, monkeypatch, f"weather-{mode}")

    (row,) = processed(collector_server)
    if expected.captured:
        text: tuple[str | None, ...] = (FINAL_TEXT,)
        steps: tuple[Step, ...] = (
            weather_step(result=expected.result, bound_by=expected.bound_by),
        )
    elif expected.structure:
        # The step is there (name, call id, answered) without arguments or result.
        text = (None,)
        steps = (weather_step(arguments=None, result=None),)
    else:
        # Only the finish reasons survive: a text turn that was not captured, no steps.
        text = (None,)
        steps = ()
    assert row == Row(
        conversation_id=f"weather-{mode}",
        trace_ids=(trace_id,),
        session_id=None,
        first_ask=USER_PROMPT if expected.captured else None,
        user_turns=(),
        assistant_turns=text,
        final_reply=text[-1],
        steps=steps,
        errors=(expected.error,),
        input_tokens=INPUT_TOKENS,
        output_tokens=OUTPUT_TOKENS,
        agent_name=None,
        model_version=SERVICE_VERSION,
        model_version_source="service.version",
        content_missing=not expected.captured,
    )


@integration
@pytest.mark.parametrize(
    ("sources", "version", "source"),
    [
        (("agent_version", "response_model", "request_model"), RESPONSE_MODEL,
         "gen_ai.response.model"),
        (("request_model",), REQUEST_MODEL, "gen_ai.request.model"),
    ],
    ids=["response-model", "request-model"],
)
def test_model_version_sources_are_configurable(
    sources: tuple[str, ...],
    version: str,
    source: str,
    telemetry: Telemetry,
    collector_server: RunningCollector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    converse_in_session("openai-v2-span-only", telemetry, monkeypatch, "weather")
    (row,) = processed(collector_server, ProcessOptions(version_sources=sources))
    assert (row.model_version, row.model_version_source) == (version, source)


@integration
def test_calls_without_a_conversation_id_are_one_conversation_per_trace(
    telemetry: Telemetry,
    collector_server: RunningCollector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bare client makes one trace per call and names no conversation: each call is a
    conversation of its own, named by its trace id, holding the history it was sent."""
    with (
        instrument_openai("openinference", telemetry, monkeypatch),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()
    traces = [trace_id for (trace_id,) in collector_server.query(
        "SELECT trace_id FROM spans WHERE service_name = ? ORDER BY start_time_unix_nano",
        telemetry.service_name)]
    assert len(set(traces)) == 3

    tool_turn, text_turn, failed = processed(collector_server)
    for row, trace_id in zip((tool_turn, text_turn, failed), traces, strict=True):
        assert (row.conversation_id, row.trace_ids) == (trace_id, (trace_id,))
        assert (row.first_ask, row.user_turns) == (USER_PROMPT, ())
        assert not row.content_missing
    # The tool call with no result yet.
    unanswered = replace(weather_step(result=None, bound_by="none"), status="missing")
    assert tool_turn.steps == (unanswered,)
    assert (tool_turn.assistant_turns, tool_turn.errors) == ((), ())
    assert (tool_turn.input_tokens, tool_turn.output_tokens) == (
        TOOL_TURN_USAGE.prompt_tokens, TOOL_TURN_USAGE.completion_tokens)
    # The history sent back: the step answered, then the reply.
    assert text_turn.steps == (weather_step(),)
    assert (text_turn.assistant_turns, text_turn.final_reply) == ((FINAL_TEXT,), FINAL_TEXT)
    assert (text_turn.input_tokens, text_turn.output_tokens) == (
        TEXT_TURN_USAGE.prompt_tokens, TEXT_TURN_USAGE.completion_tokens)
    # The failed call: its history, its error, no usage.
    assert failed.steps == (weather_step(),)
    assert (failed.assistant_turns, failed.errors) == ((), (OPENINFERENCE_ERROR,))
    assert (failed.input_tokens, failed.output_tokens) == (None, None)


# --------------------------------------------------------------------------- pydantic-ai


def stored_roots(server: RunningCollector, telemetry: Telemetry) -> list[tuple[str, str]]:
    """(trace id, conversation id) of each root span of this test, oldest first."""
    return [
        (trace_id, conversation_id)
        for trace_id, conversation_id in server.query(
            "SELECT trace_id, conversation_id FROM spans WHERE service_name = ? "
            "AND parent_span_id IS NULL ORDER BY start_time_unix_nano",
            telemetry.service_name,
        )
    ]


def tool_span_ids(server: RunningCollector, telemetry: Telemetry) -> list[str]:
    return [
        span_id
        for (span_id,) in server.query(
            "SELECT span_id FROM spans WHERE service_name = ? AND operation = 'execute_tool' "
            "ORDER BY start_time_unix_nano",
            telemetry.service_name,
        )
    ]


@integration
@pytest.mark.parametrize("include_content", [True, False], ids=["content", "no-content"])
def test_pydantic_ai_agent(
    telemetry: Telemetry, collector_server: RunningCollector, include_content: bool
) -> None:
    """Each agent run is a conversation of its own (pydantic-ai gives each run an id). The
    agent span repeats its model calls' usage as ``gen_ai.aggregated_usage.*``: counted
    once. The failed run's ask is recorded on the agent span only; its error once, though
    both the chat span and the agent span failed."""
    settings = InstrumentationSettings(
        tracer_provider=telemetry.tracer_provider, include_content=include_content
    )
    with OpenAILoopback(script=weather_script()) as srv:
        asyncio.run(run_weather_agent(srv, settings))
    telemetry.flush()
    (ok_trace, ok_id), (failed_trace, failed_id) = stored_roots(collector_server, telemetry)
    (tool_span,) = tool_span_ids(collector_server, telemetry)
    (aggregated,) = collector_server.query(
        "SELECT attributes->>'$.\"gen_ai.aggregated_usage.input_tokens\"' FROM spans "
        "WHERE trace_id = ? AND parent_span_id IS NULL", ok_trace)
    assert aggregated == (str(INPUT_TOKENS),)  # the repeat that must not be counted again

    def text(value: str) -> str | None:
        return value if include_content else None

    ok_run, failed_run = processed(collector_server)
    assert ok_run == Row(
        conversation_id=ok_id,
        trace_ids=(ok_trace,),
        session_id=None,
        first_ask=text(USER_PROMPT),
        user_turns=(),
        assistant_turns=(text(FINAL_TEXT),),
        final_reply=text(FINAL_TEXT),
        steps=(weather_step(arguments=text(ARGUMENTS), result=text(COMPACT_RESULT),
                            span_id=tool_span),),
        errors=(),
        input_tokens=INPUT_TOKENS,
        output_tokens=OUTPUT_TOKENS,
        agent_name="weather_agent",
        model_version=SERVICE_VERSION,
        model_version_source="service.version",
        content_missing=not include_content,
    )
    # pydantic-ai gives its instructions apart (gen_ai.system_instructions); the tool ran
    # under a span; without content capture every text and argument is null, not "".
    expected = weather_messages(text(COMPACT_RESULT))
    if not include_content:
        expected = [{**message, "content": None} for message in expected[1:]]
        expected[1]["tool_calls"][0]["function"]["arguments"] = None
    assert stored_messages(collector_server, ok_id) == expected
    assert failed_run == Row(
        conversation_id=failed_id,
        trace_ids=(failed_trace,),
        session_id=None,
        first_ask=text("And tomorrow?"),
        user_turns=(),
        assistant_turns=(),
        final_reply=None,
        steps=(),
        errors=("pydantic_ai.exceptions.ModelServerError",),
        input_tokens=None,
        output_tokens=None,
        agent_name="weather_agent",
        model_version=SERVICE_VERSION,
        model_version_source="service.version",
        content_missing=not include_content,
    )


RETRY_MESSAGE = "weather service timed out"
APOLOGY = "The weather service is down; please try again later."
APOLOGY_USAGE = Usage(prompt_tokens=80, completion_tokens=7)


async def run_failing_tool_agent(
    srv: OpenAILoopback, settings: InstrumentationSettings, failure: BaseException
) -> str | None:
    """A pydantic-ai agent whose tool raises ``failure``; the run's output, or None when
    the failure ended the run."""

    def get_weather(city: str) -> dict[str, Any]:
        """Current weather for a city."""
        raise failure

    async with openai.AsyncOpenAI(
        base_url=srv.base_url, api_key="sk-loopback", max_retries=0
    ) as client:
        model = OpenAIChatModel(REQUEST_MODEL, provider=OpenAIProvider(openai_client=client))
        agent = Agent(
            model,
            name="weather_agent",
            instructions=SYSTEM_PROMPT,
            tools=[get_weather],
            capabilities=[Instrumentation(settings=settings)],
        )
        if isinstance(failure, ModelRetry):
            result = await agent.run(USER_PROMPT)
            return result.output
        with pytest.raises(type(failure)):
            await agent.run(USER_PROMPT)
        return None


@integration
def test_failed_tool_call_the_agent_recovers_from(
    telemetry: Telemetry, collector_server: RunningCollector
) -> None:
    """The tool asks for a retry (``ModelRetry``): its span fails, the model is told why
    and answers; the step is the failed call, with what the model was told as its result;
    the run itself did not fail."""
    settings = InstrumentationSettings(tracer_provider=telemetry.tracer_provider)
    script: list[Reply] = [
        ToolCallReply([ToolCall(CALL_ID, TOOL_NAME, TOOL_ARGUMENTS)], model=RESPONSE_MODEL,
                      usage=TOOL_TURN_USAGE),
        TextReply(APOLOGY, model=RESPONSE_MODEL, usage=APOLOGY_USAGE),
    ]
    with OpenAILoopback(script=script) as srv:
        output = asyncio.run(run_failing_tool_agent(srv, settings, ModelRetry(RETRY_MESSAGE)))
        assert srv.pending == 0
    assert output == APOLOGY
    telemetry.flush()
    (tool_span,) = tool_span_ids(collector_server, telemetry)

    (row,) = processed(collector_server)
    assert row.steps == (
        Step(tool=TOOL_NAME, call_id=CALL_ID, arguments=ARGUMENTS, result=RETRY_MESSAGE,
             status="error", error="pydantic_ai.exceptions.ToolRetryError",
             bound_by="call_id", span_id=tool_span),
    )
    assert (row.first_ask, row.assistant_turns, row.final_reply) == (
        USER_PROMPT, (APOLOGY,), APOLOGY)
    assert row.errors == ()
    assert (row.input_tokens, row.output_tokens) == (
        TOOL_TURN_USAGE.prompt_tokens + APOLOGY_USAGE.prompt_tokens,
        TOOL_TURN_USAGE.completion_tokens + APOLOGY_USAGE.completion_tokens,
    )
    assert not row.content_missing


@integration
def test_failed_tool_call_that_ends_the_run(
    telemetry: Telemetry, collector_server: RunningCollector
) -> None:
    """The tool raises: its span and the agent span fail with the exception's type; the
    step is the failed call with no result, the run's failure is the conversation's
    error, and only the one model call that answered is counted."""
    settings = InstrumentationSettings(tracer_provider=telemetry.tracer_provider)
    script: list[Reply] = [
        ToolCallReply([ToolCall(CALL_ID, TOOL_NAME, TOOL_ARGUMENTS)], model=RESPONSE_MODEL,
                      usage=TOOL_TURN_USAGE),
    ]
    with OpenAILoopback(script=script) as srv:
        failure = RuntimeError("weather service unavailable")
        assert asyncio.run(run_failing_tool_agent(srv, settings, failure)) is None
        assert srv.pending == 0
    telemetry.flush()
    (tool_span,) = tool_span_ids(collector_server, telemetry)
    ((trace_id, conversation_id),) = stored_roots(collector_server, telemetry)

    (row,) = processed(collector_server)
    assert row == Row(
        conversation_id=conversation_id,
        trace_ids=(trace_id,),
        session_id=None,
        first_ask=USER_PROMPT,
        user_turns=(),
        assistant_turns=(),
        final_reply=None,
        steps=(Step(tool=TOOL_NAME, call_id=CALL_ID, arguments=ARGUMENTS, result=None,
                    status="error", error="RuntimeError", bound_by="call_id",
                    span_id=tool_span),),
        errors=("RuntimeError",),
        input_tokens=TOOL_TURN_USAGE.prompt_tokens,
        output_tokens=TOOL_TURN_USAGE.completion_tokens,
        agent_name="weather_agent",
        model_version=SERVICE_VERSION,
        model_version_source="service.version",
        content_missing=False,
    )


# --------------------------------------------------------------------------- grouping

SECOND_ASK = "And in Bergen?"
BERGEN_CALL_ID = "call_weather_bergen"
BERGEN_TEXT = "It is 4 degrees in Bergen too."
BERGEN_USAGE = (Usage(prompt_tokens=90, completion_tokens=16),
                Usage(prompt_tokens=120, completion_tokens=10))
AGENT_VERSION = "weather-bot@7"


def two_turn_script() -> list[Reply]:
    """Oslo (tool call, answer), then Bergen (tool call, answer)."""
    return [
        ToolCallReply([ToolCall(CALL_ID, TOOL_NAME, TOOL_ARGUMENTS)], model=RESPONSE_MODEL,
                      usage=TOOL_TURN_USAGE),
        TextReply(FINAL_TEXT, model=RESPONSE_MODEL, usage=TEXT_TURN_USAGE),
        ToolCallReply([ToolCall(BERGEN_CALL_ID, TOOL_NAME, {"city": "Bergen"})],
                      model=RESPONSE_MODEL, usage=BERGEN_USAGE[0]),
        TextReply(BERGEN_TEXT, model=RESPONSE_MODEL, usage=BERGEN_USAGE[1]),
    ]


@dataclass
class WeatherLoop:
    """A hand-written agent loop: the real ``openai`` client (instrumented), a root span
    per model call (or none, inside a caller's span), and an ``execute_tool`` span of its
    own per tool run, with the GenAI attributes a hand-written agent records."""

    client: openai.OpenAI
    tracer: Tracer
    root_attributes: Mapping[str, str]
    """Attributes of each per-call root span (the conversation id, say)."""
    messages: list[Any]
    trace_ids: list[str]
    tool_spans: list[str]

    def ask(self, question: str) -> None:
        """One user turn: model calls until the model answers in text."""
        self.messages.append({"role": "user", "content": question})
        while True:
            with self.tracer.start_as_current_span(
                "agent step", attributes=dict(self.root_attributes)
            ) as step:
                self.trace_ids.append(hex_trace_id(step.get_span_context().trace_id))
                completion = self.client.chat.completions.create(
                    model=REQUEST_MODEL, messages=self.messages, tools=TOOLS
                )
                message = completion.choices[0].message
                if not message.tool_calls:
                    self.messages.append({"role": "assistant", "content": message.content})
                    return
                calls = [call.model_dump() for call in message.tool_calls]
                self.messages.append({"role": "assistant", "content": None, "tool_calls": calls})
                for call in calls:
                    self.messages.append(self._run_tool(call))

    def _run_tool(self, call: dict[str, Any]) -> dict[str, Any]:
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        with self.tracer.start_as_current_span(
            f"execute_tool {name}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call["id"],
                "gen_ai.tool.call.arguments": arguments,
            },
        ) as span:
            result = json.dumps(get_weather(**json.loads(arguments)))
            span.set_attribute("gen_ai.tool.call.result", result)
            self.tool_spans.append(hex_span_id(span.get_span_context().span_id))
        return {"role": "tool", "tool_call_id": call["id"], "content": result}


def weather_loop(
    client: openai.OpenAI, telemetry: Telemetry, root_attributes: Mapping[str, str]
) -> WeatherLoop:
    return WeatherLoop(
        client=client,
        tracer=telemetry.tracer_provider.get_tracer("tests.weather_loop"),
        root_attributes=root_attributes,
        messages=[{"role": "system", "content": SYSTEM_PROMPT}],
        trace_ids=[],
        tool_spans=[],
    )


def loop_steps(tool_spans: list[str]) -> tuple[Step, ...]:
    oslo, bergen = tool_spans
    return (
        weather_step(span_id=oslo),
        Step(tool=TOOL_NAME, call_id=BERGEN_CALL_ID, arguments='{"city":"Bergen"}',
             result=json.dumps({"city": "Bergen", "temp_c": 4}), status="ok", error=None,
             bound_by="call_id", span_id=bergen),
    )


@integration
@pytest.mark.parametrize(
    "key", ["gen_ai.conversation.id", "session.id", "conversation.id", "thread.id"]
)
def test_one_conversation_across_traces(
    key: str,
    telemetry: Telemetry,
    collector_server: RunningCollector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One trace per model call, the conversation id on each root span only (the chat and
    tool spans under it carry none): one conversation spanning every trace, rebuilt as
    traces arrive, with both user turns, both steps bound to their tool spans, and the
    agent version (on the root spans) as the model version."""
    conversation_id = f"chat-{key}"
    attributes = {key: conversation_id, "gen_ai.agent.version": AGENT_VERSION}
    with (
        instrument_openai("openai-v2-span-only", telemetry, monkeypatch),
        OpenAILoopback(script=two_turn_script()) as srv,
        openai.OpenAI(base_url=srv.base_url, api_key="sk-loopback", max_retries=0) as client,
    ):
        loop = weather_loop(client, telemetry, attributes)
        loop.ask(USER_PROMPT)
        telemetry.flush()
        (first,) = processed(collector_server)
        loop.ask(SECOND_ASK)
        telemetry.flush()
    assert len(set(loop.trace_ids)) == 4
    assert first.trace_ids == tuple(loop.trace_ids[:2])
    assert first.steps == loop_steps(loop.tool_spans)[:1]

    (row,) = processed(collector_server)
    assert row == Row(
        conversation_id=conversation_id,
        trace_ids=tuple(loop.trace_ids),
        session_id=conversation_id if key == "session.id" else None,
        first_ask=USER_PROMPT,
        user_turns=(SECOND_ASK,),
        assistant_turns=(FINAL_TEXT, BERGEN_TEXT),
        final_reply=BERGEN_TEXT,
        steps=loop_steps(loop.tool_spans),
        errors=(),
        input_tokens=INPUT_TOKENS + sum(u.prompt_tokens for u in BERGEN_USAGE),
        output_tokens=OUTPUT_TOKENS + sum(u.completion_tokens for u in BERGEN_USAGE),
        agent_name=None,
        model_version=AGENT_VERSION,
        model_version_source="gen_ai.agent.version",
        content_missing=False,
    )


@integration
def test_spans_without_a_conversation_id_group_by_trace(
    telemetry: Telemetry,
    collector_server: RunningCollector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No id anywhere: the loop's per-call traces are a conversation each, named by the
    trace id, and a loop run inside one span of the caller is one conversation."""
    tracer = telemetry.tracer_provider.get_tracer("tests.weather_loop")
    with (
        instrument_openai("openai-v2-span-only", telemetry, monkeypatch),
        OpenAILoopback(script=two_turn_script() + two_turn_script()) as srv,
        openai.OpenAI(base_url=srv.base_url, api_key="sk-loopback", max_retries=0) as client,
    ):
        apart = weather_loop(client, telemetry, {})
        apart.ask(USER_PROMPT)
        apart.ask(SECOND_ASK)
        together = weather_loop(client, telemetry, {})
        with tracer.start_as_current_span("weather session") as session:
            together.ask(USER_PROMPT)
            together.ask(SECOND_ASK)
    telemetry.flush()
    session_trace = hex_trace_id(session.get_span_context().trace_id)
    assert len(set(apart.trace_ids)) == 4
    assert set(together.trace_ids) == {session_trace}

    *separate, whole = processed(collector_server)
    assert [(row.conversation_id, row.trace_ids) for row in separate] == [
        (trace_id, (trace_id,)) for trace_id in apart.trace_ids
    ]
    # Each call alone: the history it was sent, its output, its own usage; the first
    # call's step is bound to the tool run in its trace, the result taken from the span.
    assert separate[0].steps == (weather_step(span_id=apart.tool_spans[0]),)
    assert [row.user_turns for row in separate] == [(), (), (SECOND_ASK,), (SECOND_ASK,)]
    assert [row.assistant_turns for row in separate] == [
        (), (FINAL_TEXT,), (FINAL_TEXT,), (FINAL_TEXT, BERGEN_TEXT)]
    usages = (TOOL_TURN_USAGE, TEXT_TURN_USAGE, *BERGEN_USAGE)
    assert [(row.input_tokens, row.output_tokens) for row in separate] == [
        (u.prompt_tokens, u.completion_tokens) for u in usages]
    assert [row.model_version_source for row in separate] == ["service.version"] * 4

    assert (whole.conversation_id, whole.trace_ids) == (session_trace, (session_trace,))
    assert (whole.first_ask, whole.user_turns) == (USER_PROMPT, (SECOND_ASK,))
    assert whole.assistant_turns == (FINAL_TEXT, BERGEN_TEXT)
    assert whole.steps == loop_steps(together.tool_spans)
    assert (whole.input_tokens, whole.output_tokens) == (
        sum(u.prompt_tokens for u in usages), sum(u.completion_tokens for u in usages))


# --------------------------------------------------------------------------- hand-built spans
# The assembly rules the instrumentations above do not reach, on spans built by hand.

_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def span_row(span_id: str, start: int, operation: str, attributes: Mapping[str, object], *,
             parent: str | None = None, end: int | None = None,
             error: str | None = None) -> SpanRow:
    return SpanRow(
        trace_id=_TRACE, span_id=span_id, parent_span_id=parent, name=operation,
        operation=operation, start_unix_nano=start,
        end_unix_nano=end if end is not None else start + 1,
        status_code=2 if error else 0, status_message=None, error_type=error,
        attributes={"gen_ai.operation.name": operation, **attributes}, events=(),
    )


def chat_row(span_id: str, start: int, inputs: list[Any], outputs: list[Any], *,
             parent: str | None = None, error: str | None = None) -> SpanRow:
    attributes = {"gen_ai.input.messages": json.dumps(inputs)}
    if outputs:
        attributes["gen_ai.output.messages"] = json.dumps(outputs)
    return span_row(span_id, start, "chat", attributes, parent=parent, error=error)


def test_history_framed_differently_is_not_appended_again() -> None:
    """The second call's system prompt was rewritten (a date in it, say); the history
    after it is the transcript's, and only the new turn is appended."""
    first = chat_row("a" * 16, 10, [text_message("system", "Today is Monday."),
                                    text_message("user", USER_PROMPT)],
                     [text_message("assistant", FINAL_TEXT)])
    second = chat_row("b" * 16, 20, [text_message("system", "Today is Tuesday."),
                                     text_message("user", USER_PROMPT),
                                     text_message("assistant", FINAL_TEXT),
                                     text_message("user", SECOND_ASK)],
                      [text_message("assistant", BERGEN_TEXT)])
    conversation = assemble("c", [second, first], {}).conversation
    assert (conversation.first_ask, conversation.user_turns) == (USER_PROMPT, (SECOND_ASK,))
    assert conversation.assistant_turns == (FINAL_TEXT, BERGEN_TEXT)


def test_only_the_new_turn_sent() -> None:
    """A client that sends only the new turn (the provider keeps the history)."""
    first = chat_row("a" * 16, 10, [text_message("user", USER_PROMPT)],
                     [text_message("assistant", FINAL_TEXT)])
    second = chat_row("b" * 16, 20, [text_message("user", SECOND_ASK)],
                      [text_message("assistant", BERGEN_TEXT)])
    conversation = assemble("c", [first, second], {}).conversation
    assert (conversation.first_ask, conversation.user_turns) == (USER_PROMPT, (SECOND_ASK,))
    assert conversation.assistant_turns == (FINAL_TEXT, BERGEN_TEXT)


def test_a_tool_span_with_another_call_id_is_not_bound_by_name() -> None:
    """Two calls of one tool; only the second ran under a span (with its call id). The
    first is not bound to that span by name: it has no result."""
    calls = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "first", "name": TOOL_NAME, "arguments": {"city": "Oslo"}},
        {"type": "tool_call", "id": "second", "name": TOOL_NAME,
         "arguments": {"city": "Bergen"}},
    ]}
    chat = chat_row("a" * 16, 10, [text_message("user", USER_PROMPT)], [calls])
    tool = span_row("b" * 16, 20, "execute_tool", {
        "gen_ai.tool.name": TOOL_NAME, "gen_ai.tool.call.id": "second",
        "gen_ai.tool.call.arguments": '{"city":"Bergen"}', "gen_ai.tool.call.result": "7"})
    conversation = assemble("c", [chat, tool], {}).conversation
    assert conversation.steps == (
        Step(tool=TOOL_NAME, call_id="first", arguments='{"city":"Oslo"}', result=None,
             status="missing", error=None, bound_by="none", span_id=None),
        Step(tool=TOOL_NAME, call_id="second", arguments='{"city":"Bergen"}', result="7",
             status="ok", error=None, bound_by="call_id", span_id="b" * 16),
    )


@pytest.mark.parametrize(
    ("agent_error", "errors"),
    [
        ("InternalServerError", ("InternalServerError",)),
        ("UsageLimitExceeded", ("UsageLimitExceeded", "InternalServerError")),
    ],
    ids=["same-error", "another-error"],
)
def test_a_run_failed_by_its_model_call_is_one_error(
    agent_error: str, errors: tuple[str, ...]
) -> None:
    agent = span_row("a" * 16, 10, "invoke_agent", {}, end=40, error=agent_error)
    chat = chat_row("b" * 16, 20, [text_message("user", USER_PROMPT)], [],
                    parent="a" * 16, error="InternalServerError")
    assert assemble("c", [agent, chat], {}).conversation.errors == errors


# --------------------------------------------------------------------------- ordered messages


def stored_messages(server: RunningCollector, conversation_id: str) -> list[dict[str, Any]]:
    """``conversations.messages`` of one conversation, decoded."""
    ((messages,),) = server.query(
        "SELECT messages FROM conversations WHERE conversation_id = ?", conversation_id)
    decoded: list[dict[str, Any]] = json.loads(messages)
    return decoded


def weather_messages(result: str | None, *, system: bool = True,
                     result_call_id: str | None = CALL_ID) -> list[dict[str, Any]]:
    """The weather exchange in OpenAI chat format, each message once."""
    call = {"id": CALL_ID, "type": "function",
            "function": {"name": TOOL_NAME, "arguments": ARGUMENTS}}
    return [
        *([{"role": "system", "content": SYSTEM_PROMPT}] if system else []),
        {"role": "user", "content": USER_PROMPT},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": result_call_id,
         "name": TOOL_NAME if result_call_id else None, "content": result},
        {"role": "assistant", "content": FINAL_TEXT},
    ]


@integration
@pytest.mark.parametrize("mode", [mode for mode, expected in MODES.items() if expected.captured])
def test_messages_in_order_each_once(
    mode: str,
    telemetry: Telemetry,
    collector_server: RunningCollector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three model calls each resend the history (the third fails): the stored exchange
    holds every message once, in the order it happened, in OpenAI chat format."""
    expected = MODES[mode]
    converse_in_session(mode, telemetry, monkeypatch, f"weather-{mode}")
    processed(collector_server)
    assert stored_messages(collector_server, f"weather-{mode}") == weather_messages(
        expected.result, result_call_id=None if expected.bound_by == "order" else CALL_ID)


def test_a_result_no_model_was_sent_comes_from_its_tool_span() -> None:
    """The run ended after the tool ran: its result is in the exchange (from the tool
    span), after the call; a call nothing answered has no result message."""
    calls = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "first", "name": TOOL_NAME, "arguments": {"city": "Oslo"}},
        {"type": "tool_call", "id": "second", "name": TOOL_NAME,
         "arguments": {"city": "Bergen"}},
    ]}
    chat = chat_row("a" * 16, 10, [text_message("user", USER_PROMPT)], [calls])
    tool = span_row("b" * 16, 20, "execute_tool", {
        "gen_ai.tool.name": TOOL_NAME, "gen_ai.tool.call.id": "second",
        "gen_ai.tool.call.arguments": '{"city":"Bergen"}', "gen_ai.tool.call.result": "7"})
    assembled = assemble("c", [chat, tool], {})
    messages = chat_messages(assembled.transcript, assembled.conversation.steps,
                             assembled.contents)
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in messages] == [
        ("user", None, USER_PROMPT), ("assistant", None, None), ("tool", "second", "7")]
    assert [c["function"]["arguments"] for c in messages[1]["tool_calls"]] == [
        '{"city":"Oslo"}', '{"city":"Bergen"}']
