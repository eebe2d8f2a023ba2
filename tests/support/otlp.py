"""Build OTLP export requests for tests: realistic GenAI spans with unique ids."""

from __future__ import annotations

import json
import os

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


def kv(key: str, value: object) -> KeyValue:
    """A KeyValue for a str, bool, int or float."""
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def genai_span(name: str = "chat gpt-4o", *, trace_id: bytes | None = None,
               span_id: bytes | None = None, conversation: str = "conv-1") -> Span:
    """A chat span shaped like current GenAI semantic conventions."""
    messages = json.dumps([{"role": "user", "parts": [{"type": "text",
                                                        "content": "where is order 123?"}]}])
    span = Span(
        trace_id=trace_id or os.urandom(16), span_id=span_id or os.urandom(8), name=name,
        kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=1_700_000_000_000_000_000,
        end_time_unix_nano=1_700_000_001_000_000_000,
    )
    span.attributes.extend([
        kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", "gpt-4o"),
        kv("gen_ai.conversation.id", conversation), kv("gen_ai.usage.input_tokens", 12),
        kv("gen_ai.input.messages", messages),
    ])
    return span


def trace_request(spans: list[Span], service: str = "support-bot") -> ExportTraceServiceRequest:
    """One request holding ``spans`` under one resource and scope."""
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(kv("service.name", service))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "tests"
    scope_spans.spans.extend(spans)
    return request


def log_request(bodies: list[str], service: str = "support-bot") -> ExportLogsServiceRequest:
    """One request holding a user-message log record per body."""
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.append(kv("service.name", service))
    scope_logs = resource_logs.scope_logs.add()
    for index, body in enumerate(bodies):
        record = scope_logs.log_records.add()
        record.time_unix_nano = 1_700_000_000_000_000_000 + index
        record.event_name = "gen_ai.user.message"
        record.body.string_value = body
    return request
