"""Over gRPC too, requests refused for their content are logged with counts, peer and
reason, and never with their payload: a malformed request (INVALID_ARGUMENT) and one with
a span whose id protobuf takes but the store cannot (per-span rejection in
``partial_success``, the rest stored). tests/collector/test_refusals.py does the same
over HTTP and for tokens."""

from __future__ import annotations

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceResponse,
)

from tests.collector.test_refusals import _Records
from tests.collector.test_refusals import intake_log as intake_log  # the fixture
from tests.conftest import StartCollector
from tests.support.otlp import genai_span, trace_request

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
SECRET = "span-name-with-a-customer-secret"


def test_grpc_refusals_are_logged_with_peer_counts_and_reason_never_the_payload(
        start_collector: StartCollector, intake_log: _Records) -> None:
    server = start_collector()
    bad = genai_span(SECRET)
    bad.span_id = b"\x01" * 7
    partly = trace_request([genai_span("kept"), bad]).SerializeToString()
    garbage = b"\x0a\xff\xff\xff\xff\x0f" + SECRET.encode()
    with grpc.insecure_channel(server.grpc_endpoint) as channel:
        export = channel.unary_unary(TRACES)
        with pytest.raises(grpc.RpcError) as refused:
            export(garbage, timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        answer = ExportTraceServiceResponse.FromString(export(partly, timeout=10))
    assert answer.partial_success.rejected_spans == 1
    assert "span_id has 7 bytes" in answer.partial_success.error_message
    assert server.query("SELECT name FROM spans") == [("kept",)]

    lines = intake_log.lines()
    invalid = [fields for message, fields in lines if message == "export refused"]
    assert [(f["transport"], f["outcome"]) for f in invalid] == [("grpc", "invalid")]
    assert "not a valid protobuf ExportTraceServiceRequest" in invalid[0]["reason"]
    rejected = [fields for message, fields in lines if message == "export partly rejected"]
    assert [(f["transport"], f["accepted"], f["rejected"]) for f in rejected] == [
        ("grpc", 1, 1)]
    assert "span_id has 7 bytes" in rejected[0]["reason"]
    assert all("127.0.0.1" in fields["peer"] for fields in [*invalid, *rejected])
    for message, fields in lines:
        assert SECRET not in message + repr(fields)
    metrics = httpx.get(f"{server.http_endpoint}/metrics", timeout=10).text
    for outcome in ("invalid", "partly_rejected"):
        assert (f'tracemill_requests_total{{signal="traces",transport="grpc",'
                f'outcome="{outcome}"}} 1') in metrics, metrics
