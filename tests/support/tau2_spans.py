"""Emit tau2-stream conversations through the real OpenTelemetry SDK, in two layouts.

:class:`Emitter` owns one ``TracerProvider`` per (service, layout, model version), each
exporting to an ``InMemorySpanExporter`` through a ``SimpleSpanProcessor``, with ids from
a seeded generator (deterministic for a seed) and explicit timestamps. Finished spans are
taken in the order they ended and encoded with the SDK's own OTLP protobuf encoder
(``opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans``) into
``ExportTraceServiceRequest`` bytes, 128-512 spans per request as a batch processor sends.

Layouts:

``genai``
    OpenTelemetry GenAI semantic conventions: a root ``invoke_agent support`` span
    (``gen_ai.conversation.id``, ``gen_ai.agent.version``) per agent run; ``chat <model>``
    spans with ``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON in ``parts``
    form; ``execute_tool <name>`` spans with ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
    ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result`` (a failed call: status
    ERROR, ``error.type`` and an ``exception`` event, no result). The outcome is a
    ``gen_ai.evaluation.result`` event on the last run's root span.
``openinference``
    OpenInference flattened attributes: a root ``AGENT`` span; ``LLM`` spans with
    ``llm.input_messages.N.message.role/content/tool_calls.K.tool_call.*`` /
    ``tool_call_id`` and ``llm.output_messages.0.message.*``; ``TOOL`` spans with
    ``tool.name``, ``input.value`` (arguments), ``output.value`` (result); ``session.id``
    on every span; the model version only in the resource's ``service.version``. The
    outcome is a ``reward`` attribute (1.0 / 0.0) on the last root span.

A conversation is one agent run per user turn: a retry after the person corrected an
identifier starts a new trace with the same conversation id.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

LAYOUTS: tuple[str, ...] = ("genai", "openinference")
"""The instrumentation layouts a stream mixes."""

MAX_SPANS_PER_REQUEST = 512
"""No request holds more spans (the SDK's default export batch size)."""

MODELS: dict[str, tuple[str, str]] = {"v1": ("gpt-4o", "gpt-4o-2024-08-06"),
                                      "v2": ("gpt-4.1", "gpt-4.1-2025-04-14")}
"""Request and response model per model version (other version names use v2's)."""


@dataclass(frozen=True)
class Turn:
    """One tool call as the agent made it and what came back."""

    tool: str
    """The tool called."""
    arguments: str
    """Its arguments as JSON text."""
    result: str | None
    """The result text the agent saw (for a failed span: the error text it was given)."""
    fault: tuple[str, str] | None = None
    """(error type, message) when the tool span failed; None when it returned."""
    said_before: str | None = None
    """A user message that came before this call (the person corrected something)."""
    asked_before: str | None = None
    """The assistant's question that came before that user message."""


@dataclass(frozen=True)
class Rendered:
    """What :class:`Emitter` needs of one conversation."""

    conversation_id: str
    """gen_ai.conversation.id / session.id."""
    service: str
    """service.name of the agent (one per tau2 domain)."""
    version: str
    """The model version (``gen_ai.agent.version`` and ``service.version``)."""
    layout: str
    """One of :data:`LAYOUTS`."""
    system: str
    """The system prompt."""
    ask: str
    """The person's first message."""
    turns: tuple[Turn, ...]
    """The tool calls in order."""
    interim: tuple[str | None, ...]
    """Text the assistant wrote beside each tool call (None: none)."""
    reply: str
    """The assistant's final reply."""
    passed: bool | None
    """The outcome (None: ungraded)."""
    evaluation: str
    """The evaluation's name (genai layout)."""


class _SeededIds(IdGenerator):
    """Trace and span ids from one seeded stream (the SDK's default is os.urandom)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def generate_span_id(self) -> int:
        return self._rng.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._rng.getrandbits(128) or 1


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


class Emitter:
    """Render conversations as SDK spans; collect them in export order."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(f"tracemill-tau2:{seed}:spans")
        self._ids = _SeededIds(random.Random(f"tracemill-tau2:{seed}:ids"))
        self._providers: dict[tuple[str, str, str], tuple[TracerProvider,
                                                          InMemorySpanExporter]] = {}
        self.clock = 1_760_000_000_000_000_000
        self.spans: list[ReadableSpan] = []

    def _tracer(self, service: str, layout: str, version: str) -> tuple[trace.Tracer,
                                                                        InMemorySpanExporter]:
        key = (service, layout, version)
        if key not in self._providers:
            resource = Resource.create({  # the SDK would draw a random instance id
                "service.name": service, "service.version": version,
                "service.instance.id": f"{service}-{layout}-{version}-0",
                "deployment.environment.name": "production"})
            provider = TracerProvider(resource=resource, id_generator=self._ids)
            exporter = InMemorySpanExporter()
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            self._providers[key] = (provider, exporter)
        provider, exporter = self._providers[key]
        scope = ("pydantic-ai", "1.0.10") if layout == "genai" else (
            "openinference.instrumentation.openai", "0.1.30")
        return provider.get_tracer(*scope), exporter

    def close(self) -> None:
        """Shut every provider down."""
        for provider, _ in self._providers.values():
            provider.shutdown()

    def _tick(self, low_ms: int, high_ms: int) -> int:
        self.clock += self._rng.randint(low_ms, high_ms) * 1_000_000
        return self.clock

    def emit(self, conversation: Rendered) -> None:
        """Render one conversation (its spans are appended to :attr:`spans`)."""
        tracer, exporter = self._tracer(conversation.service, conversation.layout,
                                        conversation.version)
        self.clock += int(self._rng.expovariate(1 / 30.0) * 1e9) + 1_000_000
        if conversation.layout == "genai":
            self._genai(tracer, conversation)
        else:
            self._openinference(tracer, conversation)
        self.spans.extend(exporter.get_finished_spans())
        exporter.clear()

    # ----------------------------------------------------------------- segments

    @staticmethod
    def _segments(conversation: Rendered) -> list[list[int]]:
        """Turn indices per agent run: a new run starts where the person spoke again."""
        segments: list[list[int]] = [[]]
        for index, turn in enumerate(conversation.turns):
            if turn.said_before is not None:
                segments.append([])
            segments[-1].append(index)
        return segments

    # ----------------------------------------------------------------- genai layout

    def _genai(self, tracer: trace.Tracer, c: Rendered) -> None:
        request_model, response_model = MODELS.get(c.version, MODELS["v2"])
        history: list[dict[str, Any]] = [_text("system", c.system), _text("user", c.ask)]
        segments = self._segments(c)
        for number, indices in enumerate(segments):
            last = number == len(segments) - 1
            if number:
                turn = c.turns[indices[0]]
                history.append(_text("assistant", turn.asked_before or "Could you check that?"))
                history.append(_text("user", turn.said_before or ""))
                self.clock += self._rng.randint(20, 180) * 1_000_000_000
            root = tracer.start_span("invoke_agent support", kind=SpanKind.INTERNAL,
                                     start_time=self._tick(1, 5), attributes={
                                         "gen_ai.operation.name": "invoke_agent",
                                         "gen_ai.agent.name": "support",
                                         "gen_ai.agent.version": c.version,
                                         "gen_ai.conversation.id": c.conversation_id,
                                         "gen_ai.request.model": request_model})
            context = trace.set_span_in_context(root)
            tokens = [0, 0]
            for index in indices:
                turn = c.turns[index]
                call_id = f"call_{self._rng.getrandbits(96):024x}"
                parts: list[dict[str, Any]] = []
                if c.interim[index]:
                    parts.append({"type": "text", "content": c.interim[index]})
                parts.append({"type": "tool_call", "id": call_id, "name": turn.tool,
                              "arguments": orjson.loads(turn.arguments)})
                self._genai_chat(tracer, context, history, parts, "tool_call", tokens,
                                 request_model, response_model)
                history.append({"role": "assistant", "parts": parts})
                self._genai_tool(tracer, context, turn, call_id)
                response: object = turn.result
                if turn.result is not None and turn.result.startswith(("{", "[")):
                    response = orjson.loads(turn.result)
                history.append({"role": "tool", "parts": [
                    {"type": "tool_call_response", "id": call_id, "response": response}]})
            if last:
                self._genai_chat(tracer, context, history, [{"type": "text", "content": c.reply}],
                                 "stop", tokens, request_model, response_model)
                history.append(_text("assistant", c.reply))
            root.set_attribute("gen_ai.usage.input_tokens", tokens[0])
            root.set_attribute("gen_ai.usage.output_tokens", tokens[1])
            end = self._tick(1, 4)
            if last and c.passed is not None:
                root.add_event("gen_ai.evaluation.result", {
                    "gen_ai.evaluation.name": c.evaluation,
                    "gen_ai.evaluation.score.value": 1.0 if c.passed else 0.0,
                    "gen_ai.evaluation.score.label": "pass" if c.passed else "fail",
                }, timestamp=end)
            root.end(end_time=end)

    def _genai_chat(self, tracer: trace.Tracer, context: Any, history: list[dict[str, Any]],
                    parts: list[dict[str, Any]], finish: str, tokens: list[int],
                    request_model: str, response_model: str) -> None:
        start = self._tick(2, 20)
        inputs = _json(history)
        outputs = _json([{"role": "assistant", "parts": parts, "finish_reason": finish}])
        used = (len(inputs) // 4 + 150, len(outputs) // 4 + 3)
        tokens[0] += used[0]
        tokens[1] += used[1]
        span = tracer.start_span(f"chat {request_model}", context=context, kind=SpanKind.CLIENT,
                                 start_time=start, attributes={
                                     "gen_ai.operation.name": "chat",
                                     "gen_ai.provider.name": "openai",
                                     "gen_ai.request.model": request_model,
                                     "gen_ai.response.model": response_model,
                                     "gen_ai.response.id":
                                         f"chatcmpl-{self._rng.getrandbits(96):024x}",
                                     "gen_ai.usage.input_tokens": used[0],
                                     "gen_ai.usage.output_tokens": used[1],
                                     "gen_ai.response.finish_reasons":
                                         ["tool_calls" if finish == "tool_call" else "stop"],
                                     "gen_ai.input.messages": inputs,
                                     "gen_ai.output.messages": outputs,
                                     "server.address": "api.openai.com"})
        span.end(end_time=self._tick(300, 2200))

    def _genai_tool(self, tracer: trace.Tracer, context: Any, turn: Turn, call_id: str) -> None:
        start = self._tick(1, 3)
        span = tracer.start_span(f"execute_tool {turn.tool}", context=context,
                                 kind=SpanKind.INTERNAL, start_time=start, attributes={
                                     "gen_ai.operation.name": "execute_tool",
                                     "gen_ai.tool.name": turn.tool,
                                     "gen_ai.tool.call.id": call_id,
                                     "gen_ai.tool.type": "function",
                                     "gen_ai.tool.call.arguments": turn.arguments})
        if turn.fault is None:
            span.set_attribute("gen_ai.tool.call.result", turn.result or "")
            span.end(end_time=self._tick(20, 700))
            return
        error_type, message = turn.fault
        took = (10_000, 30_000) if "imeout" in error_type else (15, 200)
        end = self._tick(*took)
        span.set_attribute("error.type", error_type)
        span.add_event("exception", {"exception.type": error_type,
                                     "exception.message": message}, timestamp=end)
        span.set_status(Status(StatusCode.ERROR, f"{error_type}: {message}"))
        span.end(end_time=end)

    # ----------------------------------------------------------------- openinference layout

    def _openinference(self, tracer: trace.Tracer, c: Rendered) -> None:
        request_model, response_model = MODELS.get(c.version, MODELS["v2"])
        history: list[dict[str, Any]] = [{"role": "system", "content": c.system},
                                         {"role": "user", "content": c.ask}]
        segments = self._segments(c)
        for number, indices in enumerate(segments):
            last = number == len(segments) - 1
            if number:
                turn = c.turns[indices[0]]
                history.append({"role": "assistant",
                                "content": turn.asked_before or "Could you check that?"})
                history.append({"role": "user", "content": turn.said_before or ""})
                self.clock += self._rng.randint(20, 180) * 1_000_000_000
            said = history[-1]["content"]
            root = tracer.start_span("support_agent", kind=SpanKind.INTERNAL,
                                     start_time=self._tick(1, 5), attributes={
                                         "openinference.span.kind": "AGENT",
                                         "session.id": c.conversation_id,
                                         "input.value": said,
                                         "input.mime_type": "text/plain"})
            context = trace.set_span_in_context(root)
            for index in indices:
                turn = c.turns[index]
                call_id = f"call_{self._rng.getrandbits(96):024x}"
                call = {"id": call_id, "type": "function",
                        "function": {"name": turn.tool, "arguments": turn.arguments}}
                output = {"role": "assistant", "content": c.interim[index], "tool_calls": [call]}
                self._oi_llm(tracer, context, c.conversation_id, history, output,
                             request_model, response_model)
                history.append(output)
                self._oi_tool(tracer, context, c.conversation_id, turn)
                history.append({"role": "tool", "tool_call_id": call_id,
                                "content": turn.result or ""})
            final = c.reply if last else None
            if final is not None:
                output = {"role": "assistant", "content": final}
                self._oi_llm(tracer, context, c.conversation_id, history, output,
                             request_model, response_model)
                history.append(output)
                root.set_attribute("output.value", final)
                root.set_attribute("output.mime_type", "text/plain")
                if c.passed is not None:
                    root.set_attribute("reward", 1.0 if c.passed else 0.0)
            root.end(end_time=self._tick(1, 4))

    def _oi_llm(self, tracer: trace.Tracer, context: Any, session: str,
                history: Sequence[dict[str, Any]], output: dict[str, Any],
                request_model: str, response_model: str) -> None:
        attributes: dict[str, Any] = {
            "openinference.span.kind": "LLM", "session.id": session,
            "llm.model_name": response_model, "llm.provider": "openai", "llm.system": "openai",
            "llm.invocation_parameters": _json({"model": request_model, "temperature": 0.2}),
        }
        for prefix, messages in (("llm.input_messages", history), ("llm.output_messages",
                                                                   [output])):
            for n, message in enumerate(messages):
                key = f"{prefix}.{n}.message"
                attributes[f"{key}.role"] = message["role"]
                if message.get("content") is not None:
                    attributes[f"{key}.content"] = message["content"]
                if "tool_call_id" in message:
                    attributes[f"{key}.tool_call_id"] = message["tool_call_id"]
                for k, call in enumerate(message.get("tool_calls", ())):
                    base = f"{key}.tool_calls.{k}.tool_call"
                    attributes[f"{base}.id"] = call["id"]
                    attributes[f"{base}.function.name"] = call["function"]["name"]
                    attributes[f"{base}.function.arguments"] = call["function"]["arguments"]
        prompt = sum(len(str(m.get("content") or "")) for m in history) // 4 + 150
        completion = len(_json(output)) // 4 + 3
        attributes.update({"llm.token_count.prompt": prompt,
                           "llm.token_count.completion": completion,
                           "llm.token_count.total": prompt + completion})
        span = tracer.start_span("ChatCompletion", context=context, kind=SpanKind.INTERNAL,
                                 start_time=self._tick(2, 20), attributes=attributes)
        span.end(end_time=self._tick(300, 2200))

    def _oi_tool(self, tracer: trace.Tracer, context: Any, session: str, turn: Turn) -> None:
        span = tracer.start_span(turn.tool, context=context, kind=SpanKind.INTERNAL,
                                 start_time=self._tick(1, 3), attributes={
                                     "openinference.span.kind": "TOOL", "session.id": session,
                                     "tool.name": turn.tool, "input.value": turn.arguments,
                                     "input.mime_type": "application/json"})
        if turn.fault is None:
            span.set_attribute("output.value", turn.result or "")
            span.end(end_time=self._tick(20, 700))
            return
        error_type, message = turn.fault
        took = (10_000, 30_000) if "imeout" in error_type else (15, 200)
        end = self._tick(*took)
        span.add_event("exception", {"exception.type": error_type,
                                     "exception.message": message,
                                     "exception.escaped": "False"}, timestamp=end)
        span.set_status(Status(StatusCode.ERROR, f"{error_type}: {message}"))
        span.end(end_time=end)

    # ----------------------------------------------------------------- requests

    def requests(self, seed: int) -> Iterator[bytes]:
        """The collected spans as serialized export requests of 128-512 spans each."""
        rng = random.Random(f"tracemill-tau2:{seed}:batches")
        start = 0
        while start < len(self.spans):
            size = rng.randint(128, MAX_SPANS_PER_REQUEST)
            yield encode_spans(self.spans[start:start + size]).SerializeToString()
            start += size
