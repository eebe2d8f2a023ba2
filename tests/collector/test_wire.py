"""Chunked decoding reads the same rows as a whole parse, whatever the wire holds."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from collector.decode import Signal, decode, decode_chunks
from tests.support.otlp import genai_span, kv, log_request, trace_request


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


# unknown fields of every wire type, a group holding a nested message among them
_UNKNOWN = (_varint(90 << 3 | 0) + _varint(300) + _varint(91 << 3 | 1) + b"\1" * 8
            + _varint(92 << 3 | 5) + b"\2" * 4 + _field(93, b"opaque")
            + _varint(94 << 3 | 3) + _varint(1 << 3 | 0) + _varint(7) + _field(2, b"x")
            + _varint(94 << 3 | 4))


def _rows(signal: Signal, payload: bytes, chunk: int) -> tuple[pa.Table, pa.Table, int, int]:
    whole = decode(signal, payload, 42)
    chunks = list(decode_chunks(signal, payload, 42, chunk))
    assert all(batch.rows.num_rows <= chunk for batch in chunks)
    assert sum(batch.received for batch in chunks) == whole.received
    assert sum(batch.rejected for batch in chunks) == whole.rejected
    assert sum(batch.payload_bytes for batch in chunks) == whole.payload_bytes
    return (whole.rows, pa.concat_tables([batch.rows for batch in chunks]), whole.received,
            whole.rejected)


def _spans(count: int, prefix: str) -> list[Span]:
    spans = []
    for index in range(count):
        span = genai_span(f"{prefix} {index}", conversation=f"{prefix}-{index % 3}")
        span.events.add(name="exception", time_unix_nano=5).attributes.append(
            kv("exception.type", "ValueError"))
        span.links.add(trace_id=os.urandom(16), span_id=os.urandom(8))
        spans.append(span)
    spans[1].span_id = b"\0" * 8  # rejected in both readings
    return spans


@pytest.mark.parametrize("chunk", [1, 4, 1000])
def test_chunked_traces_match_a_whole_parse(chunk: int) -> None:
    request = trace_request(_spans(7, "a"), service="first")
    second = trace_request(_spans(5, "b"), service="second").resource_spans[0]
    second.scope_spans.add().spans.extend(_spans(3, "c"))
    request.resource_spans.append(second)
    whole, chunked, received, rejected = _rows("traces", request.SerializeToString(), chunk)
    assert (received, rejected) == (15, 3)
    assert chunked.equals(whole)


def test_unknown_fields_groups_and_field_order_read_alike() -> None:
    scope = ScopeSpans()
    scope.scope.name = "first name"
    scope.spans.extend(_spans(4, "s"))
    scope_bytes = (_UNKNOWN + scope.SerializeToString()
                   + _field(1, b"\x0a\x0blast name  ")  # a second scope: protobuf merges
                   + _field(3, b"https://schema/after-the-spans") + _UNKNOWN)
    resource = ResourceSpans()
    resource.resource.attributes.append(kv("service.name", "svc"))
    resource_bytes = _field(2, scope_bytes) + _UNKNOWN + resource.SerializeToString()
    payload = _UNKNOWN + _field(1, resource_bytes) + _field(1, resource_bytes)
    ExportTraceServiceRequest.FromString(payload)  # what the intake checks first
    whole, chunked, received, _ = _rows("traces", payload, 3)
    assert received == 8
    assert chunked.equals(whole)
    assert set(whole["scope_name"].to_pylist()) == {"last name  "}
    assert set(whole["scope_schema_url"].to_pylist()) == {"https://schema/after-the-spans"}


def test_chunked_logs_match_a_whole_parse() -> None:
    request: ExportLogsServiceRequest = log_request([f"message {i}" for i in range(9)])
    request.resource_logs.append(log_request(["other"], service="two").resource_logs[0])
    request.resource_logs[0].scope_logs[0].log_records[2].trace_id = b"short"
    whole, chunked, received, rejected = _rows("logs", request.SerializeToString(), 2)
    assert (received, rejected) == (10, 1)
    assert chunked.equals(whole)  # including each record's identity hash
