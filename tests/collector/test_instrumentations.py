"""Real instrumentation libraries, end to end into the store.

Each test drives the real ``openai`` client (directly, or through pydantic-ai) against
:class:`~tests.support.openai_loopback.OpenAILoopback`, instrumented by one real
instrumentation library in one of its configurations; the spans and log records go out
through the real OTLP exporters (every test runs once over gRPC and once over HTTP) to the
real collector (the ``collector_server`` fixture), and are then read back from the store
with SQL.

The conversation is the same everywhere: the model asks for ``get_weather`` (call id
``call_weather_oslo``), the client sends the tool result back, the model answers in text;
then one more call fails with a 500, so an error span is emitted.

Every library and mode is isolated: fresh tracer and logger providers per test, nothing
set globally, environment variables set with ``monkeypatch``, instrumentors uninstrumented
on the way out, and the process-wide state two libraries keep (OpenTelemetry's semantic
convention opt-in latch, OpenLLMetry's ``Config`` class) restored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import openai
import pytest
from openinference.instrumentation import TraceConfig
from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInferenceInstrumentor
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetryInstrumentor
from pydantic_ai.models.instrumented import InstrumentationSettings

from tests.support.instrumented import (
    CALL_ID,
    FINAL_TEXT,
    GENAI_LATEST,
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
    CollectorServer,
    Telemetry,
    clean_genai_environment,
    instrumented,
    latch_semconv_opt_in,
    openai_v2_instrumentor,
    restore_openllmetry_config,
    run_weather_agent,
    run_weather_conversation,
    telemetry_for,
    weather_script,
)
from tests.support.openai_loopback import ErrorReply, OpenAILoopback, Reply, TextReply, Usage

pytestmark = pytest.mark.integration

# OTLP enums as stored.
SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2


@pytest.fixture(params=["grpc", "http"])
def telemetry(
    request: pytest.FixtureRequest, collector_server: CollectorServer
) -> Iterator[Telemetry]:
    with telemetry_for(collector_server, request.param) as providers:
        yield providers


@pytest.fixture(autouse=True)
def _clean_genai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    clean_genai_environment(monkeypatch)


# --------------------------------------------------------------------------- reading the store


@dataclass(frozen=True)
class StoredSpan:
    """One row of the ``spans`` view, JSON columns parsed."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    status_code: int
    status_message: str | None
    scope_name: str | None
    service_version: str | None
    operation: str | None
    conversation_id: str | None
    agent_name: str | None
    request_model: str | None
    response_model: str | None
    provider: str | None
    tool_name: str | None
    tool_call_id: str | None
    input_tokens: int | None
    output_tokens: int | None
    error_type: str | None
    attributes: dict[str, Any]
    events: list[dict[str, Any]]

    def json_attribute(self, key: str) -> Any:
        """An attribute that the instrumentation sent as a JSON string, decoded."""
        value = self.attributes[key]
        assert isinstance(value, str), f"{key} is {type(value).__name__}, not a JSON string"
        return json.loads(value)


@dataclass(frozen=True)
class StoredLog:
    """One row of the ``log_records`` view, JSON columns parsed."""

    event_name: str | None
    body: Any
    attributes: dict[str, Any]
    trace_id: str | None
    span_id: str | None
    scope_name: str | None


def stored_spans(collector: CollectorServer, telemetry: Telemetry) -> list[StoredSpan]:
    """This test's spans, oldest first."""
    names = [f.name for f in fields(StoredSpan)]
    rows = collector.query(
        f"SELECT {', '.join(names)} FROM spans WHERE service_name = ? "  # noqa: S608 - field names
        "ORDER BY start_time_unix_nano, span_id",
        telemetry.service_name,
    )
    spans = []
    for row in rows:
        values = dict(zip(names, row, strict=True))
        values["attributes"] = json.loads(values["attributes"])
        values["events"] = json.loads(values["events"])
        spans.append(StoredSpan(**values))
    return spans


def stored_logs(collector: CollectorServer, telemetry: Telemetry) -> list[StoredLog]:
    """This test's log records, in the order they were emitted."""
    rows = collector.query(
        "SELECT event_name, body, attributes, trace_id, span_id, scope_name FROM log_records "
        "WHERE service_name = ? ORDER BY observed_time_unix_nano, time_unix_nano",
        telemetry.service_name,
    )
    return [
        StoredLog(
            event_name=event_name,
            body=None if body is None else json.loads(body),
            attributes=json.loads(attributes),
            trace_id=trace_id,
            span_id=span_id,
            scope_name=scope_name,
        )
        for event_name, body, attributes, trace_id, span_id, scope_name in rows
    ]


def logs_of(logs: list[StoredLog], span: StoredSpan) -> list[StoredLog]:
    """The log records emitted in the context of ``span``."""
    return [log for log in logs if (log.trace_id, log.span_id) == (span.trace_id, span.span_id)]


def assert_three_chat_spans(spans: list[StoredSpan]) -> tuple[StoredSpan, StoredSpan, StoredSpan]:
    """One span per chat call, each the root of its own trace (the client has no parent)."""
    assert len(spans) == 3, [s.name for s in spans]
    assert len({s.trace_id for s in spans}) == 3
    for span in spans:
        assert span.parent_span_id is None
        assert len(span.trace_id) == 32 and len(span.span_id) == 16
        assert span.service_version == "1.2.3"
    return spans[0], spans[1], spans[2]


def assert_failed_call(span: StoredSpan, *, error_type: str) -> None:
    """The 500 from the loopback made an error span with no response data."""
    assert span.status_code == STATUS_ERROR
    assert span.error_type == error_type
    assert span.response_model is None
    assert span.input_tokens is None and span.output_tokens is None


def assert_exception_event(span: StoredSpan, exception_type: str) -> None:
    """The span carries the standard ``exception`` event."""
    exceptions = [e for e in span.events if e["name"] == "exception"]
    assert len(exceptions) == 1
    assert exceptions[0]["attributes"]["exception.type"] == exception_type
    assert "500" in exceptions[0]["attributes"]["exception.message"]


def assert_usage(span: StoredSpan, usage: Usage) -> None:
    assert (span.input_tokens, span.output_tokens) == (
        usage.prompt_tokens,
        usage.completion_tokens,
    )


# --------------------------------------------------------------------------- (a) OpenInference


def test_openinference_flattened_attributes(
    telemetry: Telemetry, collector_server: CollectorServer
) -> None:
    """openinference-instrumentation-openai: one LLM span per call, content flattened into
    ``llm.input_messages.N.*`` / ``llm.output_messages.N.*``; no log records."""
    with (
        instrumented(
            OpenInferenceInstrumentor(),
            tracer_provider=telemetry.tracer_provider,
            config=TraceConfig(),
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()

    tool_turn, text_turn, failed = assert_three_chat_spans(
        stored_spans(collector_server, telemetry)
    )
    for span in (tool_turn, text_turn, failed):
        assert span.name == "ChatCompletion"
        assert span.kind == SPAN_KIND_INTERNAL
        assert span.scope_name == "openinference.instrumentation.openai"
        assert span.operation == "llm"
        assert span.provider == "openai"
        assert json.loads(span.attributes["llm.invocation_parameters"]) == {"model": REQUEST_MODEL}
        assert span.attributes["llm.input_messages.0.message.role"] == "system"
        assert span.attributes["llm.input_messages.0.message.content"] == SYSTEM_PROMPT
        assert span.attributes["llm.input_messages.1.message.content"] == USER_PROMPT
        assert span.tool_call_id is None  # call ids live only inside the flattened messages

    # OpenInference has no request-model attribute: the collector reads the requested
    # model from llm.invocation_parameters, and llm.model_name (the model the *response*
    # names) is the response model.
    for span, usage in ((tool_turn, TOOL_TURN_USAGE), (text_turn, TEXT_TURN_USAGE)):
        assert span.status_code == STATUS_OK
        assert span.request_model == REQUEST_MODEL
        assert span.response_model == RESPONSE_MODEL
        assert_usage(span, usage)
        assert span.attributes["llm.token_count.total"] == usage.total_tokens

    out = "llm.output_messages.0.message"
    assert tool_turn.attributes[f"{out}.tool_calls.0.tool_call.id"] == CALL_ID
    assert tool_turn.attributes[f"{out}.tool_calls.0.tool_call.function.name"] == TOOL_NAME
    assert (
        json.loads(tool_turn.attributes[f"{out}.tool_calls.0.tool_call.function.arguments"])
        == TOOL_ARGUMENTS
    )
    assert tool_turn.attributes["llm.finish_reason"] == "tool_calls"
    assert json.loads(tool_turn.attributes["llm.tools.0.tool.json_schema"]) == TOOLS[0]

    assert text_turn.attributes["llm.input_messages.2.message.tool_calls.0.tool_call.id"] == CALL_ID
    assert text_turn.attributes["llm.input_messages.3.message.role"] == "tool"
    assert text_turn.attributes["llm.input_messages.3.message.tool_call_id"] == CALL_ID
    assert json.loads(text_turn.attributes["llm.input_messages.3.message.content"]) == TOOL_RESULT
    assert text_turn.attributes[f"{out}.content"] == FINAL_TEXT
    output_value = json.loads(text_turn.attributes["output.value"])
    assert output_value["id"] == srv.requests[1].response_id

    assert_failed_call(failed, error_type="openai.InternalServerError")
    assert_exception_event(failed, "openai.InternalServerError")
    assert failed.request_model == REQUEST_MODEL
    assert failed.response_model is None  # no response, so no llm.model_name
    assert failed.status_message is not None and "500" in failed.status_message

    assert stored_logs(collector_server, telemetry) == []


def test_openinference_hidden_content(
    telemetry: Telemetry, collector_server: CollectorServer
) -> None:
    """``TraceConfig(hide_inputs, hide_outputs)`` (env ``OPENINFERENCE_HIDE_INPUTS`` /
    ``_OUTPUTS``): messages are dropped, ``input.value``/``output.value`` redacted, usage
    kept."""
    with (
        instrumented(
            OpenInferenceInstrumentor(),
            tracer_provider=telemetry.tracer_provider,
            config=TraceConfig(hide_inputs=True, hide_outputs=True),
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()

    tool_turn, text_turn, failed = assert_three_chat_spans(
        stored_spans(collector_server, telemetry)
    )
    for span in (tool_turn, text_turn, failed):
        assert span.operation == "llm"
        assert span.attributes["input.value"] == "__REDACTED__"
        leaked = [k for k in span.attributes if k.startswith(("llm.input_messages", "llm.output"))]
        assert leaked == []
        assert not any(
            SYSTEM_PROMPT in str(v) or FINAL_TEXT in str(v) for v in span.attributes.values()
        )
    for span, usage in ((tool_turn, TOOL_TURN_USAGE), (text_turn, TEXT_TURN_USAGE)):
        assert span.attributes["output.value"] == "__REDACTED__"
        assert span.request_model == REQUEST_MODEL  # invocation parameters are not content
        assert span.response_model == RESPONSE_MODEL
        assert_usage(span, usage)
    assert_failed_call(failed, error_type="openai.InternalServerError")


def test_openinference_with_genai_semconv(
    telemetry: Telemetry, collector_server: CollectorServer
) -> None:
    """``TraceConfig(enable_genai_semconv=True)`` (env ``OPENINFERENCE_ENABLE_GENAI_SEMCONV``):
    the same span also carries ``gen_ai.*`` attributes, with JSON messages in parts form."""
    with (
        instrumented(
            OpenInferenceInstrumentor(),
            tracer_provider=telemetry.tracer_provider,
            config=TraceConfig(enable_genai_semconv=True),
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv, stream=True)
    telemetry.flush()

    tool_turn, text_turn, failed = assert_three_chat_spans(
        stored_spans(collector_server, telemetry)
    )
    for span in (tool_turn, text_turn, failed):
        assert span.operation == "chat"  # gen_ai.operation.name wins over the span kind
        assert span.attributes["openinference.span.kind"] == "LLM"
        assert span.provider == "openai"
    for span, usage in ((tool_turn, TOOL_TURN_USAGE), (text_turn, TEXT_TURN_USAGE)):
        assert span.response_model == RESPONSE_MODEL
        # openinference 0.1.66 copies llm.model_name (the response's model) into
        # gen_ai.request.model on success; on the failed call it is the requested one.
        assert span.request_model == RESPONSE_MODEL
        assert_usage(span, usage)
    assert failed.request_model == REQUEST_MODEL

    assert tool_turn.json_attribute("gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "name": TOOL_NAME, "arguments": TOOL_ARGUMENTS, "id": CALL_ID}
            ],
            # mapped to the convention's value, unlike llm.finish_reason ("tool_calls")
            "finish_reason": "tool_call",
        }
    ]
    text_input = text_turn.json_attribute("gen_ai.input.messages")
    assert [m["role"] for m in text_input] == ["system", "user", "assistant", "tool"]
    assert text_turn.json_attribute("gen_ai.output.messages")[0]["parts"] == [
        {"type": "text", "content": FINAL_TEXT}
    ]
    assert text_turn.attributes["gen_ai.response.id"] == srv.requests[1].response_id
    assert_failed_call(failed, error_type="openai.InternalServerError")


# --------------------------------------------------------------------------- (b) OTel openai-v2


@pytest.fixture
def openai_v2() -> BaseInstrumentor:
    return openai_v2_instrumentor()


def test_openai_v2_without_content(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
    openai_v2: BaseInstrumentor,
) -> None:
    """opentelemetry-instrumentation-openai-v2 on the latest GenAI conventions with content
    capture off (the default): CLIENT spans ``chat {model}`` with model, usage and response
    id, and no messages anywhere."""
    latch_semconv_opt_in(monkeypatch, GENAI_LATEST)
    with (
        instrumented(
            openai_v2,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()

    spans = stored_spans(collector_server, telemetry)
    tool_turn, text_turn, failed = assert_three_chat_spans(spans)
    for span in (tool_turn, text_turn, failed):
        assert span.name == f"chat {REQUEST_MODEL}"
        assert span.kind == SPAN_KIND_CLIENT
        assert span.operation == "chat"
        assert span.provider == "openai"
        assert span.request_model == REQUEST_MODEL
        assert "gen_ai.input.messages" not in span.attributes
        assert "gen_ai.output.messages" not in span.attributes
    for index, (span, usage) in enumerate(
        ((tool_turn, TOOL_TURN_USAGE), (text_turn, TEXT_TURN_USAGE))
    ):
        assert span.status_code == STATUS_UNSET
        assert span.response_model == RESPONSE_MODEL
        assert_usage(span, usage)
        assert span.attributes["gen_ai.response.id"] == srv.requests[index].response_id
    assert tool_turn.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert text_turn.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert_failed_call(failed, error_type="InternalServerError")
    assert stored_logs(collector_server, telemetry) == []


def test_openai_v2_content_in_span_attributes(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
    openai_v2: BaseInstrumentor,
) -> None:
    """Capture ``span_only``: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` as JSON
    strings in parts form on the span, tool call ids included; streamed calls with
    ``include_usage`` still report usage."""
    latch_semconv_opt_in(monkeypatch, GENAI_LATEST)
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    with (
        instrumented(
            openai_v2,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv, stream=True)
    telemetry.flush()

    tool_turn, text_turn, failed = assert_three_chat_spans(
        stored_spans(collector_server, telemetry)
    )
    assert srv.requests[0].body["stream_options"] == {"include_usage": True}
    for span, usage in ((tool_turn, TOOL_TURN_USAGE), (text_turn, TEXT_TURN_USAGE)):
        assert span.operation == "chat"
        assert span.request_model == REQUEST_MODEL
        assert span.response_model == RESPONSE_MODEL
        assert_usage(span, usage)

    system = {"role": "system", "parts": [{"content": SYSTEM_PROMPT, "type": "text"}]}
    user = {"role": "user", "parts": [{"content": USER_PROMPT, "type": "text"}]}
    call_part = {"arguments": TOOL_ARGUMENTS, "name": TOOL_NAME, "id": CALL_ID, "type": "tool_call"}
    assert tool_turn.json_attribute("gen_ai.input.messages") == [system, user]
    assert tool_turn.json_attribute("gen_ai.output.messages") == [
        {"role": "assistant", "parts": [call_part], "finish_reason": "tool_calls"}
    ]
    assert text_turn.json_attribute("gen_ai.input.messages") == [
        system,
        user,
        {"role": "assistant", "parts": [call_part]},
        {
            "role": "tool",
            "parts": [
                {"response": json.dumps(TOOL_RESULT), "id": CALL_ID, "type": "tool_call_response"}
            ],
        },
    ]
    assert text_turn.json_attribute("gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"content": FINAL_TEXT, "type": "text"}],
            "finish_reason": "stop",
        }
    ]
    assert len(failed.json_attribute("gen_ai.input.messages")) == 4
    assert "gen_ai.output.messages" not in failed.attributes
    assert_failed_call(failed, error_type="InternalServerError")
    assert stored_logs(collector_server, telemetry) == []


def test_openai_v2_content_in_inference_details_log_records(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
    openai_v2: BaseInstrumentor,
) -> None:
    """Capture ``event_only``: spans stay content-free; each call also emits one
    ``gen_ai.client.inference.operation.details`` log record, in the span's context, whose
    *attributes* hold the messages as structured values (not JSON strings); no body."""
    latch_semconv_opt_in(monkeypatch, GENAI_LATEST)
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "event_only")
    with (
        instrumented(
            openai_v2,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()

    spans = stored_spans(collector_server, telemetry)
    *_, failed = assert_three_chat_spans(spans)
    for span in spans:
        assert "gen_ai.input.messages" not in span.attributes
    assert_failed_call(failed, error_type="InternalServerError")

    logs = stored_logs(collector_server, telemetry)
    assert len(logs) == 3
    details = [logs_of(logs, span) for span in spans]
    assert [len(d) for d in details] == [1, 1, 1]
    for (record,) in details:
        assert record.event_name == "gen_ai.client.inference.operation.details"
        assert record.body is None
        assert record.attributes["gen_ai.operation.name"] == "chat"
        assert record.attributes["gen_ai.request.model"] == REQUEST_MODEL
        assert record.attributes["gen_ai.input.messages"][0] == {
            "role": "system",
            "parts": [{"content": SYSTEM_PROMPT, "type": "text"}],
        }
    tool_record, text_record, failed_record = (d[0] for d in details)
    assert tool_record.attributes["gen_ai.output.messages"][0]["parts"] == [
        {"arguments": TOOL_ARGUMENTS, "name": TOOL_NAME, "id": CALL_ID, "type": "tool_call"}
    ]
    assert tool_record.attributes["gen_ai.usage.input_tokens"] == TOOL_TURN_USAGE.prompt_tokens
    assert text_record.attributes["gen_ai.input.messages"][3] == {
        "role": "tool",
        "parts": [
            {"response": json.dumps(TOOL_RESULT), "id": CALL_ID, "type": "tool_call_response"}
        ],
    }
    assert text_record.attributes["gen_ai.output.messages"][0]["parts"] == [
        {"content": FINAL_TEXT, "type": "text"}
    ]
    assert failed_record.attributes["error.type"] == "InternalServerError"
    assert "gen_ai.output.messages" not in failed_record.attributes


@pytest.mark.parametrize("capture", [True, False], ids=["content", "no-content"])
def test_openai_v2_legacy_per_message_log_records(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
    openai_v2: BaseInstrumentor,
    capture: bool,
) -> None:
    """Without ``OTEL_SEMCONV_STABILITY_OPT_IN`` the instrumentation stays on semantic
    conventions v1.30: ``gen_ai.system`` on the span, and one log record per message
    (``gen_ai.{system,user,assistant,tool}.message``, ``gen_ai.choice``) with the content in
    the *body* when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``. With capture
    off the records still come, bodies stripped of content but keeping roles and ids."""
    latch_semconv_opt_in(monkeypatch, None)
    monkeypatch.setenv(
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true" if capture else "false"
    )
    with (
        instrumented(
            openai_v2,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()

    spans = stored_spans(collector_server, telemetry)
    tool_turn, text_turn, failed = assert_three_chat_spans(spans)
    for span in spans:
        assert span.name == f"chat {REQUEST_MODEL}"
        assert span.scope_name == "opentelemetry.instrumentation.openai_v2"
        assert span.attributes["gen_ai.system"] == "openai"
        assert span.provider == "openai"
        assert span.operation == "chat"
        assert span.request_model == REQUEST_MODEL
        assert "gen_ai.input.messages" not in span.attributes
    assert_usage(tool_turn, TOOL_TURN_USAGE)
    assert_usage(text_turn, TEXT_TURN_USAGE)
    assert tool_turn.response_model == RESPONSE_MODEL
    assert_failed_call(failed, error_type="InternalServerError")

    logs = stored_logs(collector_server, telemetry)
    per_span = [logs_of(logs, span) for span in spans]
    assert sum(len(records) for records in per_span) == len(logs)  # every record in a span
    history = ["gen_ai.system.message", "gen_ai.user.message"]
    answered = [*history, "gen_ai.assistant.message", "gen_ai.tool.message"]
    assert [r.event_name for r in per_span[0]] == [*history, "gen_ai.choice"]
    assert [r.event_name for r in per_span[1]] == [*answered, "gen_ai.choice"]
    assert [r.event_name for r in per_span[2]] == answered  # no choice: the call failed
    for record in logs:
        assert record.attributes == {"gen_ai.system": "openai"}
        assert record.scope_name == "opentelemetry.instrumentation.openai_v2"

    function = {"name": TOOL_NAME}
    if capture:
        function["arguments"] = json.dumps(TOOL_ARGUMENTS, separators=(",", ":"))
    wire_call = {"id": CALL_ID, "type": "function", "function": function}
    system, user, choice = per_span[0]
    _, _, assistant, tool, final_choice = per_span[1]
    assert choice.body == {
        "index": 0,
        "finish_reason": "tool_calls",
        "message": {"role": "assistant", "tool_calls": [wire_call]},
    }
    assert assistant.body == {"tool_calls": [wire_call]}
    if capture:
        assert system.body == {"content": SYSTEM_PROMPT}
        assert user.body == {"content": USER_PROMPT}
        assert tool.body == {"content": json.dumps(TOOL_RESULT), "id": CALL_ID}
        assert final_choice.body == {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": FINAL_TEXT},
        }
    else:
        assert system.body is None and user.body is None
        assert tool.body == {"id": CALL_ID}
        assert final_choice.body == {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant"},
        }


# --------------------------------------------------------------------------- (c) OpenLLMetry

# OpenLLMetry 0.62.4's uninstrument() calls unwrap("openai.resources.chat.completions",
# "Completions.create"), which opentelemetry-instrumentation 0.66 reads as the attribute
# "Completions.create" of the module openai.resources.chat.completions: nothing is unwrapped.
# Hence leaves_wrappers=True below; without it, each test would stack another layer of
# OpenLLMetry wrappers on the client for every later test.


@pytest.fixture
def openllmetry_config(monkeypatch: pytest.MonkeyPatch) -> None:
    restore_openllmetry_config(monkeypatch)


def test_openllmetry_content_in_span_attributes(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    openllmetry_config: None,
) -> None:
    """opentelemetry-instrumentation-openai (OpenLLMetry), defaults: CLIENT spans
    ``openai.chat`` with ``gen_ai.input.messages``/``gen_ai.output.messages`` JSON (content is
    on unless ``TRACELOOP_TRACE_CONTENT=false``), and a ``traceparent`` header injected
    into the request."""
    with (
        instrumented(
            OpenLLMetryInstrumentor(),
            leaves_wrappers=True,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()

    spans = stored_spans(collector_server, telemetry)
    tool_turn, text_turn, failed = assert_three_chat_spans(spans)
    for span, request in zip(spans, srv.requests, strict=True):
        assert span.name == "openai.chat"
        assert span.kind == SPAN_KIND_CLIENT
        assert span.scope_name == "opentelemetry.instrumentation.openai.v1"
        assert span.operation == "chat"
        assert span.provider == "openai"
        assert span.request_model == REQUEST_MODEL
        assert span.attributes["gen_ai.is_streaming"] is False
        version, trace_id, parent_id, flags = request.headers["traceparent"].split("-")
        assert (version, trace_id, parent_id) == ("00", span.trace_id, span.span_id)
        assert int(flags, 16) & 0x01  # sampled
    for index, (span, usage) in enumerate(
        ((tool_turn, TOOL_TURN_USAGE), (text_turn, TEXT_TURN_USAGE))
    ):
        assert span.response_model == RESPONSE_MODEL
        assert_usage(span, usage)
        assert span.attributes["gen_ai.usage.total_tokens"] == usage.total_tokens
        assert span.attributes["gen_ai.response.id"] == srv.requests[index].response_id

    call_part = {"type": "tool_call", "name": TOOL_NAME, "id": CALL_ID, "arguments": TOOL_ARGUMENTS}
    assert tool_turn.json_attribute("gen_ai.input.messages") == [
        {"role": "system", "parts": [{"content": SYSTEM_PROMPT, "type": "text"}]},
        {"role": "user", "parts": [{"content": USER_PROMPT, "type": "text"}]},
    ]
    # OpenLLMetry maps OpenAI's finish reason "tool_calls" to the convention's "tool_call".
    assert tool_turn.json_attribute("gen_ai.output.messages") == [
        {"role": "assistant", "parts": [call_part], "finish_reason": "tool_call"}
    ]
    assert tool_turn.attributes["gen_ai.response.finish_reasons"] == ["tool_call"]
    assert tool_turn.json_attribute("gen_ai.tool.definitions")[0]["name"] == TOOL_NAME
    text_input = text_turn.json_attribute("gen_ai.input.messages")
    assert [m["role"] for m in text_input] == ["system", "user", "assistant", "tool"]
    assert text_input[2]["parts"] == [call_part]
    assert text_turn.json_attribute("gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"content": FINAL_TEXT, "type": "text"}],
            "finish_reason": "stop",
        }
    ]

    assert_failed_call(failed, error_type="InternalServerError")
    assert_exception_event(failed, "openai.InternalServerError")
    assert stored_logs(collector_server, telemetry) == []


def test_openllmetry_without_content(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    openllmetry_config: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``TRACELOOP_TRACE_CONTENT=false``: the same spans without messages or tool
    definitions; usage and models stay. Streamed, with ``include_usage``."""
    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "false")
    with (
        instrumented(
            OpenLLMetryInstrumentor(),
            leaves_wrappers=True,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv, stream=True)
    telemetry.flush()

    tool_turn, text_turn, failed = assert_three_chat_spans(
        stored_spans(collector_server, telemetry)
    )
    for span in (tool_turn, text_turn, failed):
        assert span.operation == "chat"
        assert span.attributes["gen_ai.is_streaming"] is True
        assert not [k for k in span.attributes if k.endswith((".messages", ".definitions"))]
    for span, usage in ((tool_turn, TOOL_TURN_USAGE), (text_turn, TEXT_TURN_USAGE)):
        assert span.status_code == STATUS_OK
        assert span.response_model == RESPONSE_MODEL
        assert_usage(span, usage)
    assert_failed_call(failed, error_type="InternalServerError")
    assert stored_logs(collector_server, telemetry) == []


def test_openllmetry_content_in_log_records(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    openllmetry_config: None,
) -> None:
    """``OpenAIInstrumentor(use_attributes=False)``: messages go to per-message log records
    (``gen_ai.*.message``, ``gen_ai.choice``) with ``gen_ai.provider.name``; the tool
    message's record carries no call id in 0.62.4."""
    with (
        instrumented(
            OpenLLMetryInstrumentor(use_attributes=False),
            leaves_wrappers=True,
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider,
        ),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()

    spans = stored_spans(collector_server, telemetry)
    tool_turn, text_turn, failed = assert_three_chat_spans(spans)
    for span in spans:
        assert not [k for k in span.attributes if k.endswith(".messages")]
    assert_usage(tool_turn, TOOL_TURN_USAGE)
    assert_usage(text_turn, TEXT_TURN_USAGE)
    assert_failed_call(failed, error_type="InternalServerError")

    logs = stored_logs(collector_server, telemetry)
    per_span = [logs_of(logs, span) for span in spans]
    assert sum(len(records) for records in per_span) == len(logs)
    history = ["gen_ai.system.message", "gen_ai.user.message"]
    answered = [*history, "gen_ai.assistant.message", "gen_ai.tool.message"]
    assert [r.event_name for r in per_span[0]] == [*history, "gen_ai.choice"]
    assert [r.event_name for r in per_span[1]] == [*answered, "gen_ai.choice"]
    assert [r.event_name for r in per_span[2]] == answered
    for record in logs:
        assert record.attributes == {"gen_ai.provider.name": "openai"}

    wire_call = {
        "id": CALL_ID,
        "function": {
            "arguments": json.dumps(TOOL_ARGUMENTS, separators=(",", ":")),
            "name": TOOL_NAME,
        },
        "type": "function",
    }
    system, user, choice = per_span[0]
    assert system.body == {"content": SYSTEM_PROMPT}
    assert user.body == {"content": USER_PROMPT}
    assert choice.body == {
        "index": 0,
        "message": {"content": None},
        "finish_reason": "tool_calls",
        "tool_calls": [wire_call],
    }
    _, _, assistant, tool, final_choice = per_span[1]
    assert assistant.body == {"content": None, "tool_calls": [wire_call]}
    assert tool.body == {"content": json.dumps(TOOL_RESULT)}
    assert final_choice.body == {
        "index": 0,
        "message": {"content": FINAL_TEXT},
        "finish_reason": "stop",
    }


# --------------------------------------------------------------------------- (d) pydantic-ai


@dataclass(frozen=True)
class AgentRun:
    """The spans of one pydantic-ai agent run."""

    agent: StoredSpan
    chats: list[StoredSpan]
    tools: list[StoredSpan]


def agent_runs(spans: list[StoredSpan]) -> list[AgentRun]:
    """Group spans by trace under their ``invoke_agent`` root, oldest run first."""
    runs = []
    for root in (s for s in spans if s.parent_span_id is None):
        children = [s for s in spans if s.trace_id == root.trace_id and s is not root]
        assert all(s.parent_span_id == root.span_id for s in children)
        runs.append(
            AgentRun(
                agent=root,
                chats=[s for s in children if s.operation == "chat"],
                tools=[s for s in children if s.operation == "execute_tool"],
            )
        )
    assert len(runs) + sum(len(r.chats) + len(r.tools) for r in runs) == len(spans)
    return runs


@pytest.mark.parametrize("include_content", [True, False], ids=["content", "no-content"])
def test_pydantic_ai_agent_with_tool_call(
    telemetry: Telemetry, collector_server: CollectorServer, include_content: bool
) -> None:
    """pydantic-ai's own instrumentation (``InstrumentationSettings``, format version 5):
    ``invoke_agent weather_agent`` over ``chat gpt-4o-mini`` and ``execute_tool
    get_weather``, all sharing ``gen_ai.conversation.id``; content in ``gen_ai.*.messages``
    JSON attributes unless ``include_content=False``, which keeps the message structure and
    call ids but drops text, arguments and results."""
    settings = InstrumentationSettings(
        tracer_provider=telemetry.tracer_provider, include_content=include_content
    )
    with OpenAILoopback(script=weather_script()) as srv:
        asyncio.run(run_weather_agent(srv, settings))
    telemetry.flush()

    spans = stored_spans(collector_server, telemetry)
    assert len(spans) == 6
    ok_run, failed_run = agent_runs(spans)
    for span in spans:
        assert span.scope_name == "pydantic-ai"
        assert span.agent_name == "weather_agent"

    # The successful run: agent → chat (tool call) → tool → chat (text).
    assert ok_run.agent.name == "invoke_agent weather_agent"
    assert ok_run.agent.kind == SPAN_KIND_INTERNAL
    assert ok_run.agent.operation == "invoke_agent"
    assert ok_run.agent.status_code == STATUS_UNSET
    assert ok_run.agent.conversation_id
    for span in (*ok_run.chats, *ok_run.tools):
        assert span.conversation_id == ok_run.agent.conversation_id
    # Usage is summed on the agent span under its own names, not gen_ai.usage.*, so the
    # promoted token columns count each model call once.
    assert ok_run.agent.input_tokens is None and ok_run.agent.output_tokens is None
    assert ok_run.agent.attributes["gen_ai.aggregated_usage.input_tokens"] == (
        TOOL_TURN_USAGE.prompt_tokens + TEXT_TURN_USAGE.prompt_tokens
    )

    tool_chat, text_chat = ok_run.chats
    for span, usage in ((tool_chat, TOOL_TURN_USAGE), (text_chat, TEXT_TURN_USAGE)):
        assert span.name == f"chat {REQUEST_MODEL}"
        assert span.kind == SPAN_KIND_CLIENT
        assert span.provider == "openai"
        assert span.request_model == REQUEST_MODEL
        assert span.response_model == RESPONSE_MODEL
        assert_usage(span, usage)
    assert tool_chat.attributes["gen_ai.response.finish_reasons"] == ["tool_call"]
    assert tool_chat.attributes["gen_ai.response.id"] == srv.requests[0].response_id

    (tool,) = ok_run.tools
    assert tool.name == f"execute_tool {TOOL_NAME}"
    assert tool.kind == SPAN_KIND_INTERNAL
    assert tool.tool_name == TOOL_NAME
    assert tool.tool_call_id == CALL_ID
    assert spans.index(tool_chat) < spans.index(tool) < spans.index(text_chat)

    # What actually reached the model: the tool result went back under the call id.
    tool_message = srv.requests[1].body["messages"][-1]
    assert tool_message == {
        "role": "tool",
        "tool_call_id": CALL_ID,
        "content": json.dumps(TOOL_RESULT, separators=(",", ":")),
    }

    output = tool_chat.json_attribute("gen_ai.output.messages")
    assert output[0]["parts"][0]["id"] == CALL_ID
    assert output[0]["parts"][0]["name"] == TOOL_NAME
    text_input = text_chat.json_attribute("gen_ai.input.messages")
    # Format version 5 sends tool results back in a "user" message.
    assert [m["role"] for m in text_input] == ["user", "assistant", "user"]
    assert text_input[2]["parts"][0]["type"] == "tool_call_response"
    assert text_input[2]["parts"][0]["id"] == CALL_ID
    if include_content:
        assert output[0]["parts"][0]["arguments"] == json.dumps(
            TOOL_ARGUMENTS, separators=(",", ":")
        )
        assert text_chat.json_attribute("gen_ai.output.messages")[0]["parts"] == [
            {"type": "text", "content": FINAL_TEXT}
        ]
        assert tool_chat.json_attribute("gen_ai.system_instructions") == [
            {"type": "text", "content": SYSTEM_PROMPT}
        ]
        assert tool.json_attribute("gen_ai.tool.call.arguments") == TOOL_ARGUMENTS
        assert tool.json_attribute("gen_ai.tool.call.result") == TOOL_RESULT
        assert ok_run.agent.attributes["final_result"] == FINAL_TEXT
    else:
        assert "arguments" not in output[0]["parts"][0]
        assert text_chat.json_attribute("gen_ai.output.messages")[0]["parts"] == [{"type": "text"}]
        assert "gen_ai.system_instructions" not in tool_chat.attributes
        assert "gen_ai.tool.call.arguments" not in tool.attributes
        assert "gen_ai.tool.call.result" not in tool.attributes
        assert "final_result" not in ok_run.agent.attributes
        everything = json.dumps([s.attributes for s in spans])
        assert SYSTEM_PROMPT not in everything and FINAL_TEXT not in everything

    # The failed run: the model call's 500 fails the chat span and the agent span.
    assert failed_run.agent.conversation_id != ok_run.agent.conversation_id
    assert failed_run.tools == []
    (failed_chat,) = failed_run.chats
    for span in (failed_chat, failed_run.agent):
        assert_failed_call(span, error_type="pydantic_ai.exceptions.ModelServerError")
    assert failed_chat.request_model == REQUEST_MODEL

    assert stored_logs(collector_server, telemetry) == []


# --------------------------------------------------------------------------- retries


@pytest.mark.parametrize("library", ["openinference", "openai-v2", "openllmetry"])
def test_client_retry_after_rate_limit_is_one_span(
    telemetry: Telemetry,
    collector_server: CollectorServer,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    library: str,
) -> None:
    """The openai client retries a 429 by itself, after ``retry-after``. All three
    instrumentations wrap the call above that retry loop: the store holds one successful
    span with the usage of the answer that arrived, and no trace of the 429."""
    instrumentor: BaseInstrumentor
    kwargs: dict[str, Any] = {"tracer_provider": telemetry.tracer_provider}
    if library == "openinference":
        instrumentor = OpenInferenceInstrumentor()
    elif library == "openai-v2":
        latch_semconv_opt_in(monkeypatch, GENAI_LATEST)
        instrumentor = request.getfixturevalue("openai_v2")
        kwargs["logger_provider"] = telemetry.logger_provider
    else:
        request.getfixturevalue("openllmetry_config")
        instrumentor = OpenLLMetryInstrumentor()
        kwargs["logger_provider"] = telemetry.logger_provider
    script: list[Reply] = [
        ErrorReply.rate_limited(retry_after_s=0.05),
        TextReply(FINAL_TEXT, model=RESPONSE_MODEL, usage=TEXT_TURN_USAGE),
    ]
    with (
        instrumented(instrumentor, leaves_wrappers=library == "openllmetry", **kwargs),
        OpenAILoopback(script=script) as srv,
        openai.OpenAI(base_url=srv.base_url, api_key="sk-loopback", max_retries=1) as client,
    ):
        completion = client.chat.completions.create(
            model=REQUEST_MODEL, messages=[{"role": "user", "content": USER_PROMPT}]
        )
    assert completion.choices[0].message.content == FINAL_TEXT
    assert [r.headers["x-stainless-retry-count"] for r in srv.requests] == ["0", "1"]
    telemetry.flush()

    (span,) = stored_spans(collector_server, telemetry)
    assert span.status_code != STATUS_ERROR
    assert span.error_type is None
    assert span.events == []
    assert_usage(span, TEXT_TURN_USAGE)
    assert stored_logs(collector_server, telemetry) == []
