"""The receivers with the real OpenTelemetry SDK exporters as clients."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import StatusCode

from tests.conftest import RunningCollector


def _exporters(server: RunningCollector, transport: str) -> tuple[object, object]:
    if transport == "grpc":
        return (GrpcSpanExporter(endpoint=server.grpc_endpoint, insecure=True),
                GrpcLogExporter(endpoint=server.grpc_endpoint, insecure=True))
    return (HttpSpanExporter(endpoint=f"{server.http_endpoint}/v1/traces"),
            HttpLogExporter(endpoint=f"{server.http_endpoint}/v1/logs"))


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_sdk_spans_and_logs_arrive_complete(collector_server: RunningCollector,
                                            transport: str) -> None:
    span_exporter, log_exporter = _exporters(collector_server, transport)
    resource = Resource.create({"service.name": "support-bot", "service.version": "2.1.0"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))  # type: ignore[arg-type]
    tracer = tracer_provider.get_tracer("agent", "1.0")
    with tracer.start_as_current_span("invoke_agent support", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support",
        "gen_ai.agent.version": "v7", "gen_ai.conversation.id": "conv-1",
    }) as agent_span:
        with tracer.start_as_current_span("chat gpt-4o", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30,
            "gen_ai.request.temperature": 0.2, "gen_ai.response.finish_reasons": ["tool_calls"],
        }) as chat:
            chat.add_event("gen_ai.content.prompt", {"gen_ai.prompt": "hello"})
        with tracer.start_as_current_span("execute_tool lookup_order", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
            "gen_ai.tool.call.id": "call_1", "error.type": "TimeoutError",
        }) as tool:
            tool.set_status(StatusCode.ERROR, "timed out")
        agent_span.set_attribute("reward", 0.0)
    tracer_provider.shutdown()

    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))  # type: ignore[arg-type]
    logger = logger_provider.get_logger("agent")
    logger.emit(body={"content": "hi", "role": "user"}, event_name="gen_ai.user.message",
                attributes={"gen_ai.conversation.id": "conv-1"})
    logger_provider.shutdown()

    rows = collector_server.query(
        "SELECT name, operation, service_name, service_version, conversation_id, agent_name, "
        "agent_version, request_model, response_model, provider, tool_name, tool_call_id, "
        "input_tokens, output_tokens, error_type, status_code, status_message, scope_name, "
        "parent_span_id IS NULL FROM spans ORDER BY start_time_unix_nano")
    assert [row[0] for row in rows] == [
        "invoke_agent support", "chat gpt-4o", "execute_tool lookup_order"]
    agent, chat_row, tool_row = rows
    assert agent[1:7] == ("invoke_agent", "support-bot", "2.1.0", "conv-1", "support", "v7")
    assert agent[-1] is True
    assert chat_row[7:14] == ("gpt-4o", "gpt-4o-2024-08-06", "openai", None, None, 120, 30)
    assert tool_row[10:17] == ("lookup_order", "call_1", None, None, "TimeoutError", 2,
                               "timed out")
    assert chat_row[17] == "agent"
    typed = collector_server.query(
        "SELECT json_type(attributes, '$.\"gen_ai.request.temperature\"'), "
        "attributes->'$.\"gen_ai.response.finish_reasons\"', "
        "events->>'$[0].name', events->>'$[0].attributes.\"gen_ai.prompt\"' "
        "FROM spans WHERE name = 'chat gpt-4o'")
    assert typed == [("DOUBLE", '["tool_calls"]', "gen_ai.content.prompt", "hello")]

    logs = collector_server.query(
        "SELECT event_name, body->>'$.content', conversation_id, service_name FROM log_records")
    assert logs == [("gen_ai.user.message", "hi", "conv-1", "support-bot")]
    metrics = collector_server.collector.metrics
    assert metrics.items("traces", "accepted") == 3
    assert metrics.items("logs", "accepted") == 1
