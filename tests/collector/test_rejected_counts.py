"""Rejected items are counted alike whatever the transport.

The same bad spans sent over OTLP/gRPC, OTLP/HTTP protobuf and OTLP/JSON are answered in
``partial_success`` and counted the same in ``/metrics`` (``tracemill_items_total``) and
in the store (``collector_commits.rejected_items``, what ``tracemill stats`` and ``/stats``
print). OTLP/JSON adds items protobuf cannot even take (an id that is a JSON number, an
enum name that does not exist): those are left out before the request is encoded, and are
counted as rejected there too.
"""

from __future__ import annotations

from typing import Any

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from collector.checks import mark_refused, refused_before
from collector.decode import decode
from collector.otlp_json import document_to_protobuf
from tests.conftest import RunningCollector
from tests.support.otlp import genai_span, trace_request

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def _bad_spans() -> list[Span]:
    """One good span and four that every transport can carry but none may store."""
    zeros = genai_span("zero trace id", trace_id=bytes(16))
    short = genai_span("short span id", span_id=b"\x01" * 7)
    kind = genai_span("kind 300")
    kind.kind = 300  # type: ignore[assignment]
    status = genai_span("status 256")
    status.status.code = 256  # type: ignore[assignment]
    return [genai_span("good"), zeros, short, kind, status]


def _as_json(spans: list[Span]) -> dict[str, Any]:
    """The spans as OTLP/JSON (hex ids, numeric enums), as an exporter would write them."""
    def span(item: Span) -> dict[str, Any]:
        return {"traceId": item.trace_id.hex(), "spanId": item.span_id.hex(), "name": item.name,
                "kind": item.kind, "startTimeUnixNano": str(item.start_time_unix_nano),
                "endTimeUnixNano": str(item.end_time_unix_nano),
                "status": {"code": item.status.code}}
    return {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "support-bot"}}]},
        "scopeSpans": [{"spans": [span(item) for item in spans]}]}]}


def _counted(server: RunningCollector) -> tuple[int, int]:
    """(rejected in /metrics, rejected in /stats), once everything is stored."""
    assert server.collector.flush(timeout=60)
    metrics = httpx.get(f"{server.http_endpoint}/metrics", timeout=10).text
    line = next(line for line in metrics.splitlines()
                if line.startswith('tracemill_items_total{signal="traces",outcome="rejected"}'))
    stats = httpx.get(f"{server.http_endpoint}/stats", timeout=10).json()
    return int(line.rsplit(" ", 1)[1]), int(stats["rejected_items"])


def _grpc(server: RunningCollector, spans: list[Span]) -> int:
    with grpc.insecure_channel(server.grpc_endpoint) as channel:
        response = ExportTraceServiceResponse.FromString(channel.unary_unary(TRACES)(
            trace_request(spans).SerializeToString(), timeout=30))
    return int(response.partial_success.rejected_spans)


def _http_protobuf(server: RunningCollector, spans: list[Span]) -> int:
    response = httpx.post(f"{server.http_endpoint}/v1/traces",
                          content=trace_request(spans).SerializeToString(),
                          headers={"content-type": "application/x-protobuf"}, timeout=30)
    assert response.status_code == 200, response.text
    return int(ExportTraceServiceResponse.FromString(
        response.content).partial_success.rejected_spans)


def _http_json(server: RunningCollector, document: dict[str, Any]) -> int:
    response = httpx.post(f"{server.http_endpoint}/v1/traces", json=document, timeout=30)
    assert response.status_code == 200, response.text
    return int(response.json()["partialSuccess"]["rejectedSpans"])


@pytest.mark.parametrize("transport", ["grpc", "http-protobuf", "http-json"])
def test_the_same_bad_spans_are_counted_alike_on_every_transport(
        collector_server: RunningCollector, transport: str) -> None:
    spans = _bad_spans()
    if transport == "grpc":
        answered = _grpc(collector_server, spans)
    elif transport == "http-protobuf":
        answered = _http_protobuf(collector_server, spans)
    else:
        answered = _http_json(collector_server, _as_json(spans))
    assert answered == 4
    assert _counted(collector_server) == (4, 4)
    assert collector_server.query("SELECT name FROM spans") == [("good",)]
    commits = collector_server.query(
        "SELECT sum(received_items), sum(rejected_items), sum(stored_items) "
        "FROM collector_commits")
    assert commits == [(5, 4, 1)]


def test_json_items_protobuf_cannot_take_are_counted_in_the_store(
        collector_server: RunningCollector) -> None:
    """Ids of the wrong JSON type and unknown enum names are refused before encoding; they
    count as rejected in the store as in /metrics (they were missing from the store)."""
    document = _as_json(_bad_spans())
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    extra = [dict(spans[0], name="number id", spanId=1234),
             dict(spans[0], name="bogus kind", kind="bogus"),
             dict(spans[0], name="bogus status", status={"code": "STATUS_CODE_BOGUS"}),
             dict(spans[0], name="huge kind", kind=2**40)]
    spans.extend(extra)
    assert _http_json(collector_server, document) == 8
    assert _counted(collector_server) == (8, 8)
    commits = collector_server.query(
        "SELECT sum(received_items), sum(rejected_items) FROM collector_commits")
    assert commits == [(9, 8)]
    # and once more: the counts add up per request, not per process
    assert _http_json(collector_server, document) == 8
    assert _counted(collector_server) == (16, 16)


def test_json_log_records_refused_before_encoding_are_counted_in_the_store(
        collector_server: RunningCollector) -> None:
    records = [{"timeUnixNano": "1", "body": {"stringValue": "kept"}},
               {"timeUnixNano": "2", "severityNumber": "LOUD"},
               {"timeUnixNano": "3", "traceId": 7},
               {"timeUnixNano": "4", "spanId": "abcd"}]  # 2 bytes: refused by the decoder
    document = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    response = httpx.post(f"{collector_server.http_endpoint}/v1/logs", json=document,
                          timeout=30)
    assert response.json()["partialSuccess"]["rejectedLogRecords"] == "3"
    assert collector_server.collector.flush(timeout=60)
    stats = httpx.get(f"{collector_server.http_endpoint}/stats", timeout=10).json()
    assert stats["rejected_items"] == 3 and stats["log_records"] == 1


def test_a_refusal_count_is_only_read_where_the_json_intake_puts_it() -> None:
    """The count travels as an unknown field at the very start of the encoded request;
    the same field anywhere else (a client could send one) counts nothing, and an
    absurd count is ignored."""
    converted = document_to_protobuf("traces", _as_json([genai_span("a")])
                                     | {"resourceSpans": [{"scopeSpans": [{"spans": [
                                         {"traceId": "01" * 16, "spanId": 5}]}]}]})
    assert converted.refused.rejected == 1
    assert refused_before(converted.payload) == 1
    batch = decode("traces", converted.payload, 1)
    assert (batch.received, batch.rejected) == (1, 1)
    marker = mark_refused(b"", 1)
    forged = trace_request([genai_span("b")]).SerializeToString() + marker
    assert refused_before(forged) == 0
    assert (decode("traces", forged, 1).received, decode("traces", forged, 1).rejected) == (
        1, 0)
    assert refused_before(mark_refused(forged, 2**40)) == 0
    logs = ExportLogsServiceRequest()
    logs.resource_logs.add().scope_logs.add().log_records.add(time_unix_nano=1)
    batch = decode("logs", mark_refused(logs.SerializeToString(), 3), 1)
    assert (batch.received, batch.rejected, batch.rows.num_rows) == (4, 3, 1)


@pytest.mark.parametrize("transport", ["grpc", "http-protobuf"])
def test_a_client_cannot_forge_the_refusal_count(collector_server: RunningCollector,
                                                 transport: str) -> None:
    """A protobuf body that starts with the collector's own count field (a client copying
    it, or a hostile one) is stored as its items say: the count is dropped at intake."""
    body = mark_refused(trace_request([genai_span("good")]).SerializeToString(), 60_000_000)
    if transport == "grpc":
        with grpc.insecure_channel(collector_server.grpc_endpoint) as channel:
            answer = ExportTraceServiceResponse.FromString(channel.unary_unary(TRACES)(
                body, timeout=30))
        assert answer.partial_success.rejected_spans == 0
    else:
        response = httpx.post(f"{collector_server.http_endpoint}/v1/traces", content=body,
                              headers={"content-type": "application/x-protobuf"}, timeout=30)
        assert response.status_code == 200, response.text
    assert _counted(collector_server) == (0, 0)
    commits = collector_server.query(
        "SELECT sum(received_items), sum(rejected_items), sum(stored_items) "
        "FROM collector_commits")
    assert commits == [(1, 0, 1)]
