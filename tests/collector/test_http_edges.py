"""OTLP/HTTP: both encodings, gzip, and every kind of bad request, with httpx as client."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tests.conftest import RunningCollector, StartCollector
from tests.support.otlp import genai_span, trace_request

PROTOBUF = {"content-type": "application/x-protobuf"}
JSON = {"content-type": "application/json"}

OTLP_JSON_TRACES = {
    "resourceSpans": [{
        "resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "json-bot"}}]},
        "scopeSpans": [{
            "scope": {"name": "manual", "version": "1"},
            "spans": [{
                "traceId": "5b8efff798038103d269b633813fc60c",
                "spanId": "eee19b7ec3c1b174",
                "parentSpanId": "eee19b7ec3c1b173",
                "name": "chat gpt-4o",
                "kind": 3,
                "startTimeUnixNano": "1544712660000000000",
                "endTimeUnixNano": "1544712661000000000",
                "attributes": [
                    {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                    {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "42"}},
                    {"key": "ratio", "value": {"doubleValue": 0.5}},
                    {"key": "ok", "value": {"boolValue": True}},
                    {"key": "raw", "value": {"bytesValue": "aGk="}},
                    {"key": "list", "value": {"arrayValue": {"values": [{"intValue": 1}]}}},
                    {"key": "map", "value": {"kvlistValue": {"values": [
                        {"key": "a", "value": {"stringValue": "b"}}]}}},
                ],
                "events": [{"timeUnixNano": "1544712660500000000", "name": "exception",
                            "attributes": [{"key": "exception.type",
                                            "value": {"stringValue": "ValueError"}}]}],
                "links": [{"traceId": "5b8efff798038103d269b633813fc60d",
                           "spanId": "eee19b7ec3c1b175"}],
                "status": {"code": 2, "message": "boom"},
            }],
        }],
    }],
}


def _post(server: RunningCollector, path: str, body: bytes,
          headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{server.http_endpoint}{path}", content=body, headers=headers, timeout=30)


def test_otlp_json_with_hex_ids_string_ints_and_enum_numbers(
        collector_server: RunningCollector) -> None:
    response = _post(collector_server, "/v1/traces",
                     json.dumps(OTLP_JSON_TRACES).encode(), JSON)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {}
    row = collector_server.query(
        "SELECT trace_id, span_id, parent_span_id, kind, start_time_unix_nano, status_code, "
        "status_message, input_tokens, error_type, service_name, scope_name, attributes, "
        "links->>'$[0].trace_id' FROM spans")
    assert row[0][:11] == ("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174",
                           "eee19b7ec3c1b173", 3, 1544712660000000000, 2, "boom", 42,
                           "ValueError", "json-bot", "manual")
    assert json.loads(row[0][11]) == {
        "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 42, "ratio": 0.5,
        "ok": True, "raw": {"bytesValue": "aGk="}, "list": [1], "map": {"a": "b"}}
    assert row[0][12] == "5b8efff798038103d269b633813fc60d"


def test_protobuf_gzip_round_trip(collector_server: RunningCollector) -> None:
    body = gzip.compress(trace_request([genai_span(), genai_span()]).SerializeToString())
    response = _post(collector_server, "/v1/traces", body,
                     {**PROTOBUF, "content-encoding": "gzip"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-protobuf"
    parsed = ExportTraceServiceResponse.FromString(response.content)
    assert not parsed.HasField("partial_success")
    assert collector_server.query("SELECT count(*) FROM spans") == [(2,)]


def test_json_bad_ids_are_partial_success(collector_server: RunningCollector) -> None:
    document = json.loads(json.dumps(OTLP_JSON_TRACES))
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    bad = dict(spans[0], traceId="not-hex", name="bad")
    spans.append(bad)
    response = _post(collector_server, "/v1/traces", json.dumps(document).encode(), JSON)
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "'bad'" in partial["errorMessage"] and "not a hex string" in partial["errorMessage"]
    assert collector_server.query("SELECT name FROM spans") == [("chat gpt-4o",)]


@pytest.mark.parametrize(("headers", "body", "status", "needle"), [
    (JSON, b"{not json", 400, "not valid JSON"),
    (JSON, b"[1, 2]", 400, "is a JSON object"),
    (JSON, b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": {"x": 1}}]}]}]}', 400,
     "not an OTLP/JSON traces request"),
    (PROTOBUF, b"\x0a\xff\xff\xff\xff\x0f", 400, "not a valid protobuf"),
    ({"content-type": "text/plain"}, b"hello", 415, "unsupported Content-Type"),
    ({**PROTOBUF, "content-encoding": "br"}, b"x", 415, "unsupported Content-Encoding"),
    ({**PROTOBUF, "content-encoding": "gzip"}, b"not gzip", 400, "not valid gzip"),
])
def test_bad_requests_get_clear_errors_and_harm_nothing(
        collector_server: RunningCollector, headers: dict[str, str], body: bytes,
        status: int, needle: str) -> None:
    _post(collector_server, "/v1/traces", trace_request([genai_span()]).SerializeToString(),
          PROTOBUF)
    response = _post(collector_server, "/v1/traces", body, headers)
    assert response.status_code == status
    if headers["content-type"] == "application/json":
        message = response.json()["message"]
    else:
        message = status_pb2.Status.FromString(response.content).message
    assert needle in message
    assert _post(collector_server, "/v1/traces",
                 trace_request([genai_span()]).SerializeToString(), PROTOBUF).status_code == 200
    assert collector_server.query("SELECT count(*) FROM spans") == [(2,)]


def test_oversize_bodies_are_413(start_collector: StartCollector) -> None:
    server = start_collector(max_message_bytes=5_000)
    big = trace_request([genai_span() for _ in range(50)]).SerializeToString()
    assert _post(server, "/v1/traces", big, PROTOBUF).status_code == 413
    bomb = gzip.compress(b"\x00" * 1_000_000)
    response = _post(server, "/v1/traces", bomb, {**PROTOBUF, "content-encoding": "gzip"})
    assert response.status_code == 413
    assert "more than 5000 bytes" in status_pb2.Status.FromString(response.content).message


def test_auth_backpressure_and_routes(start_collector: StartCollector) -> None:
    server = start_collector(auth_token="tok", max_queue_bytes=100)
    body = trace_request([genai_span()]).SerializeToString()
    assert _post(server, "/v1/traces", body, PROTOBUF).status_code == 401
    authorized = {**PROTOBUF, "authorization": "Bearer tok"}
    server.collector.pipeline.writer.admit(100)
    busy = _post(server, "/v1/traces", body, authorized)
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    server.collector.pipeline.writer.release(100)
    assert _post(server, "/v1/traces", body, authorized).status_code == 200
    base = server.http_endpoint
    assert httpx.get(f"{base}/healthz").status_code == 200
    assert httpx.get(f"{base}/readyz").json() == {"status": "ready", "dead_letter_requests": 0}
    assert httpx.get(f"{base}/metrics").status_code == 401
    metrics = httpx.get(f"{base}/metrics", headers={"authorization": "Bearer tok"}).text
    assert 'tracemill_items_total{signal="traces",outcome="accepted"} 1' in metrics
    assert 'outcome="backpressure"} 1' in metrics
    stats = httpx.get(f"{base}/stats", headers={"authorization": "Bearer tok"}).json()
    assert stats["spans"] == 1 and stats["services"] == 1
    assert httpx.get(f"{base}/v1/traces").status_code == 405
    assert httpx.get(f"{base}/nope").status_code == 404


def test_logs_over_otlp_json(collector_server: RunningCollector) -> None:
    document = {"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": [{
        "timeUnixNano": "1544712660000000000", "severityNumber": 9,
        "eventName": "gen_ai.client.inference.operation.details",
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
        "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hi"}}]}},
    }]}]}]}
    response = _post(collector_server, "/v1/logs", json.dumps(document).encode(), JSON)
    assert response.status_code == 200
    rows = collector_server.query(
        "SELECT event_name, severity_number, trace_id, span_id, body FROM log_records")
    assert rows == [("gen_ai.client.inference.operation.details", 9,
                     "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174",
                     '{"content":"hi"}')]
