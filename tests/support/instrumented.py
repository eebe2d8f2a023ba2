"""Drive the real instrumentation libraries through one weather conversation.

The harness behind the end-to-end instrumentation tests (``tests/collector/`` checks what
the collector stores, ``tests/processor/`` what the processor reads from it):

* the conversation: :func:`weather_script` for the loopback server and
  :func:`run_weather_conversation` for the client (the real ``openai`` SDK), or
  :func:`run_weather_agent` for the same exchange driven by a pydantic-ai agent. The model
  asks for ``get_weather`` (call id ``call_weather_oslo``), the client sends the tool result
  back, the model answers in text; then one more call fails with a 500;
* the telemetry: :func:`telemetry_for` gives fresh SDK tracer and logger providers that
  export to a collector over gRPC or HTTP (nothing is set globally);
* the isolation: :func:`instrumented` instruments for one block and checks the ``openai``
  package is left as it was; :func:`clean_genai_environment`, :func:`latch_semconv_opt_in`
  and :func:`restore_openllmetry_config` undo the process-wide state the libraries keep
  (environment variables, OpenTelemetry's semantic-convention opt-in latch, OpenLLMetry's
  ``Config`` class).

Test modules wrap these in fixtures of their own (pytest fixtures imported from another
module would shadow the test functions' parameters).
"""

from __future__ import annotations

import importlib
import json
import sys
import uuid
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import openai
import pytest
import wrapt
from openinference.instrumentation import TraceConfig
from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInferenceInstrumentor
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetryInstrumentor
from opentelemetry.instrumentation.openai.shared.config import Config as OpenLLMetryConfig
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic.warnings import PydanticDeprecatedSince20
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.support.openai_loopback import (
    ErrorReply,
    OpenAILoopback,
    Reply,
    TextReply,
    ToolCall,
    ToolCallReply,
    Usage,
)

__all__ = [
    "CALL_ID",
    "FINAL_TEXT",
    "GENAI_LATEST",
    "REQUEST_MODEL",
    "RESPONSE_MODEL",
    "SYSTEM_PROMPT",
    "TEXT_TURN_USAGE",
    "TOOLS",
    "TOOL_ARGUMENTS",
    "TOOL_NAME",
    "TOOL_RESULT",
    "TOOL_TURN_USAGE",
    "USER_PROMPT",
    "CollectorServer",
    "Telemetry",
    "clean_genai_environment",
    "get_weather",
    "instrumented",
    "latch_semconv_opt_in",
    "openai_v2_instrumentor",
    "restore_openllmetry_config",
    "run_weather_agent",
    "run_weather_conversation",
    "telemetry_for",
    "weather_script",
]

with warnings.catch_warnings():
    # opentelemetry-instrumentation-openai 0.62.4 (OpenLLMetry) declares a pydantic model
    # with a v1-style inner `class Config` in v1/responses_wrappers.py, and pydantic 2 warns
    # about it once, when the module is first imported (which `instrument()` would
    # otherwise do inside a test). Import it here, with only that warning silenced.
    warnings.filterwarnings(
        "ignore",
        message="Support for class-based `config` is deprecated",
        category=PydanticDeprecatedSince20,
    )
    importlib.import_module("opentelemetry.instrumentation.openai.v1")


# --------------------------------------------------------------------------- the conversation

REQUEST_MODEL = "gpt-4o-mini"
RESPONSE_MODEL = "gpt-4o-mini-2024-07-18"  # the dated snapshot the API names in replies
SYSTEM_PROMPT = "You are a terse weather assistant."
USER_PROMPT = "What is the weather in Oslo?"
CALL_ID = "call_weather_oslo"
TOOL_NAME = "get_weather"
TOOL_ARGUMENTS = {"city": "Oslo"}
TOOL_RESULT = {"city": "Oslo", "temp_c": 4}
FINAL_TEXT = "It is 4 degrees in Oslo."
TOOL_TURN_USAGE = Usage(prompt_tokens=41, completion_tokens=17)
TEXT_TURN_USAGE = Usage(prompt_tokens=73, completion_tokens=9)
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def weather_script() -> list[Reply]:
    """Tool call, then text, then a server error."""
    return [
        ToolCallReply(
            [ToolCall(id=CALL_ID, name=TOOL_NAME, arguments=TOOL_ARGUMENTS)],
            model=RESPONSE_MODEL,
            usage=TOOL_TURN_USAGE,
        ),
        TextReply(FINAL_TEXT, model=RESPONSE_MODEL, usage=TEXT_TURN_USAGE),
        ErrorReply.server_error(),
    ]


def run_weather_conversation(srv: OpenAILoopback, *, stream: bool = False) -> None:
    """The client side of :func:`weather_script`, with the real ``openai`` client."""
    # Wire-format JSON, as an agent loop keeps its history.
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": USER_PROMPT},
    ]
    with openai.OpenAI(base_url=srv.base_url, api_key="sk-loopback", max_retries=0) as client:
        calls, _ = _complete(client, messages, stream=stream)
        assert [c["id"] for c in calls] == [CALL_ID]
        assert json.loads(calls[0]["function"]["arguments"]) == TOOL_ARGUMENTS
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages.append(
            {"role": "tool", "tool_call_id": CALL_ID, "content": json.dumps(TOOL_RESULT)}
        )

        calls, text = _complete(client, messages, stream=stream)
        assert (calls, text) == ([], FINAL_TEXT)

        with pytest.raises(openai.InternalServerError):
            _complete(client, messages, stream=stream)
    assert srv.pending == 0


def _complete(
    client: openai.OpenAI, messages: list[Any], *, stream: bool
) -> tuple[list[dict[str, Any]], str]:
    """One chat call; returns the tool calls (wire format) and the text of the reply."""
    if not stream:
        completion = client.chat.completions.create(
            model=REQUEST_MODEL, messages=messages, tools=TOOLS
        )
        message = completion.choices[0].message
        return [call.model_dump() for call in message.tool_calls or []], message.content or ""
    chunks = client.chat.completions.create(
        model=REQUEST_MODEL,
        messages=messages,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    # Assemble the reply from its deltas, as an agent loop does.
    text = ""
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(
                    delta.index,
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if delta.id:
                    call["id"] = delta.id
                if delta.function and delta.function.name:
                    call["function"]["name"] += delta.function.name
                if delta.function and delta.function.arguments:
                    call["function"]["arguments"] += delta.function.arguments
    return [calls[index] for index in sorted(calls)], text


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "temp_c": 4}


async def run_weather_agent(srv: OpenAILoopback, settings: InstrumentationSettings) -> None:
    """A pydantic-ai agent with one tool: a run that calls it and answers, then a run whose
    model call fails."""
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
        result = await agent.run(USER_PROMPT)
        assert result.output == FINAL_TEXT
        with pytest.raises(Exception, match="status_code: 500") as failure:
            await agent.run("And tomorrow?")
        assert type(failure.value).__name__ == "ModelServerError"
    assert srv.pending == 0


# --------------------------------------------------------------------------- telemetry plumbing


class CollectorServer(Protocol):
    """What the ``collector_server`` fixture (tests/conftest.py) yields."""

    grpc_endpoint: str
    http_endpoint: str

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]: ...


@dataclass(frozen=True)
class Telemetry:
    """Fresh SDK providers for one test, exporting to the collector over one transport."""

    transport: str
    """grpc or http."""
    service_name: str
    """A service name of this test's own, so queries see only its rows."""
    tracer_provider: TracerProvider
    """Give it to the instrumentor."""
    logger_provider: LoggerProvider
    """Give it to the instrumentor (for libraries that log message content)."""

    def flush(self) -> None:
        """Export everything pending; the collector acknowledges only after commit."""
        assert self.tracer_provider.force_flush(timeout_millis=15_000)
        assert self.logger_provider.force_flush(timeout_millis=15_000)


@contextmanager
def telemetry_for(collector: CollectorServer, transport: str) -> Iterator[Telemetry]:
    """Providers exporting to ``collector`` over ``transport`` (grpc or http), shut down on
    the way out."""
    # A service name of its own per test, so queries see only this test's rows even if the
    # collector is shared between tests.
    service_name = f"instrumentation-test-{uuid.uuid4().hex[:12]}"
    resource = Resource.create({"service.name": service_name, "service.version": "1.2.3"})
    if transport == "grpc":
        span_exporter: Any = GrpcSpanExporter(endpoint=collector.grpc_endpoint, insecure=True)
        log_exporter: Any = GrpcLogExporter(endpoint=collector.grpc_endpoint, insecure=True)
    elif transport == "http":
        span_exporter = HttpSpanExporter(endpoint=f"{collector.http_endpoint}/v1/traces")
        log_exporter = HttpLogExporter(endpoint=f"{collector.http_endpoint}/v1/logs")
    else:
        raise ValueError(f"unknown transport {transport!r}: use 'grpc' or 'http'")
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
    try:
        yield Telemetry(transport, service_name, tracer_provider, logger_provider)
    finally:
        tracer_provider.shutdown()
        logger_provider.shutdown()


# --------------------------------------------------------------------------- isolation

GENAI_LATEST = "gen_ai_latest_experimental"
"""The ``OTEL_SEMCONV_STABILITY_OPT_IN`` value for the latest GenAI conventions."""

_GENAI_ENVIRONMENT = (
    "OTEL_SEMCONV_STABILITY_OPT_IN",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
    "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT",
    "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK",
    "OTEL_INSTRUMENTATION_GENAI_UPLOAD_BASE_PATH",
    "TRACELOOP_TRACE_CONTENT",
    "OPENINFERENCE_HIDE_INPUTS",
    "OPENINFERENCE_HIDE_OUTPUTS",
    "OPENINFERENCE_HIDE_INPUT_MESSAGES",
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES",
    "OPENINFERENCE_ENABLE_GENAI_SEMCONV",
)


def clean_genai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start from the libraries' defaults, whatever the shell exported."""
    for name in _GENAI_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


def latch_semconv_opt_in(monkeypatch: pytest.MonkeyPatch, opt_in: str | None) -> None:
    """Set ``OTEL_SEMCONV_STABILITY_OPT_IN`` for this test and make it take effect.

    opentelemetry-instrumentation reads the variable once per process and latches the
    result in ``_OpenTelemetrySemanticConventionStability`` (the first ``instrument()``
    does it), so changing the variable between tests would otherwise do nothing. The
    latch is reset for this test and restored by ``monkeypatch`` afterwards.
    """
    if opt_in is None:
        monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
    else:
        monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", opt_in)
    latch = _OpenTelemetrySemanticConventionStability
    monkeypatch.setattr(latch, "_initialized", False)
    monkeypatch.setattr(latch, "_OTEL_SEMCONV_STABILITY_SIGNAL_MAPPING", {})
    latch._initialize()  # type: ignore[no-untyped-call]


def restore_openllmetry_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenLLMetry keeps its settings on a class (``Config``) that its constructor and
    ``instrument()`` overwrite; put every field back after the test."""
    for name, value in list(vars(OpenLLMetryConfig).items()):
        if not name.startswith("__"):
            monkeypatch.setattr(OpenLLMetryConfig, name, value)


def openai_v2_instrumentor() -> BaseInstrumentor:
    """The openai-v2 instrumentor, imported on demand so that an environment where it
    cannot be imported fails the tests that use it, with the fix named, and not a whole
    module."""
    try:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    except ImportError as exc:
        pytest.fail(
            f"opentelemetry-instrumentation-openai-v2 cannot be imported: {exc}. Release "
            "2.4b0 needs opentelemetry-util-genai 0.4b0 (1.2b0 and later renamed the "
            "`instruments` module it imports); pin opentelemetry-util-genai==0.4b0."
        )
    instrumentor: BaseInstrumentor = OpenAIInstrumentor()  # type: ignore[no-untyped-call]
    return instrumentor


def _openai_methods() -> dict[tuple[type, str], Any]:
    """Every attribute of the clients and of every class in the loaded ``openai.resources``
    modules: where the instrumentations put their wrappers."""
    classes: list[type] = [openai.OpenAI, openai.AsyncOpenAI]
    for module_name, module in list(sys.modules.items()):
        if module is not None and module_name.startswith("openai.resources"):
            classes += [
                cls
                for cls in list(vars(module).values())
                if isinstance(cls, type) and cls.__module__ == module_name
            ]
    return {(cls, attr): value for cls in classes for attr, value in list(vars(cls).items())}


def _restore_openai_methods(before: dict[tuple[type, str], Any]) -> list[str]:
    """Put back every such method still wrapped by wrapt; name them."""
    left = []
    for (cls, attr), value in _openai_methods().items():
        if not isinstance(value, wrapt.BaseObjectProxy) or before.get((cls, attr)) is value:
            continue
        original = before.get((cls, attr))
        if original is None:  # a module first imported while instrumented
            original = value
            while isinstance(original, wrapt.BaseObjectProxy):
                original = original.__wrapped__
        setattr(cls, attr, original)
        left.append(f"{cls.__module__}.{cls.__qualname__}.{attr}")
    return left


@contextmanager
def instrumented(
    instrumentor: BaseInstrumentor, *, leaves_wrappers: bool = False, **kwargs: Any
) -> Iterator[None]:
    """Instrument for the length of the block, then uninstrument and check that the
    ``openai`` package is as it was.

    ``leaves_wrappers`` is for a library whose ``uninstrument()`` is known to leave methods
    wrapped: they are put back all the same, so later tests see a clean client.
    """
    # BaseInstrumentor is a per-class singleton that ignores a second instrument() with
    # only a log line; a leftover from another test would silently use other providers.
    assert not instrumentor.is_instrumented_by_opentelemetry, (
        f"{type(instrumentor).__name__} was left instrumented by an earlier test"
    )
    before = _openai_methods()
    instrumentor.instrument(**kwargs)
    try:
        yield
    finally:
        instrumentor.uninstrument()
        left = _restore_openai_methods(before)
    assert leaves_wrappers or not left, (
        f"{type(instrumentor).__name__}.uninstrument() left these wrapped: {left}"
    )


def instrument_openai(
    mode: str, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> AbstractContextManager[None]:
    """Instrument the ``openai`` client with one library in one mode.

    Modes: openinference, openinference-hidden, openinference-hidden-text,
    openinference-genai-semconv; openai-v2-legacy-logs, openai-v2-legacy-logs-no-content,
    openai-v2-span-only, openai-v2-event-only, openai-v2-no-content; openllmetry-attributes,
    openllmetry-log-records, openllmetry-no-content.
    """
    providers: dict[str, Any] = {"tracer_provider": telemetry.tracer_provider}
    logs = {**providers, "logger_provider": telemetry.logger_provider}
    if mode.startswith("openinference"):
        config = {
            "openinference": TraceConfig(),
            "openinference-hidden": TraceConfig(hide_inputs=True, hide_outputs=True),
            "openinference-hidden-text": TraceConfig(hide_input_text=True, hide_output_text=True),
            "openinference-genai-semconv": TraceConfig(enable_genai_semconv=True),
        }[mode]
        return instrumented(OpenInferenceInstrumentor(), config=config, **providers)
    if mode.startswith("openai-v2"):
        legacy = mode.startswith("openai-v2-legacy")
        latch_semconv_opt_in(monkeypatch, None if legacy else GENAI_LATEST)
        capture = {
            "openai-v2-legacy-logs": "true",
            "openai-v2-legacy-logs-no-content": "false",
            "openai-v2-span-only": "span_only",
            "openai-v2-event-only": "event_only",
            "openai-v2-no-content": None,
        }[mode]
        if capture is not None:
            monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", capture)
        return instrumented(openai_v2_instrumentor(), **logs)
    assert mode.startswith("openllmetry"), mode
    restore_openllmetry_config(monkeypatch)
    if mode == "openllmetry-no-content":
        monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "false")
    instrumentor = OpenLLMetryInstrumentor(use_attributes=mode != "openllmetry-log-records")
    # OpenLLMetry 0.62.4's uninstrument() leaves its wrappers (see tests/collector).
    return instrumented(instrumentor, leaves_wrappers=True, **logs)
