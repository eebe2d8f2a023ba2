"""What the collector refuses, and that it says so: exposure without auth, OTLP/JSON items
protobuf cannot take, and requests refused for their token or their content (logged with
counts, peer and reason, counted in /metrics, never with payloads or tokens)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from pydantic import SecretStr

from collector.server import Collector
from tests.collector.test_http_edges import OTLP_JSON_TRACES
from tests.conftest import RunningCollector, StartCollector
from tests.support.otlp import genai_span, trace_request
from tracemill.cli import main
from tracemill.config import Settings
from tracemill.errors import TracemillError
from tracemill.store import open_store

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
JSON = {"content-type": "application/json"}




@pytest.fixture(autouse=True)
def _keep_logging() -> Iterator[None]:
    """main() points tracemill's logs at the captured stderr; put them back afterwards."""
    logger = logging.getLogger("tracemill")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved


# --------------------------------------------------------------------------- exposure


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "collector.example:4317"])
def test_serve_refuses_to_listen_beyond_loopback_without_auth(
        address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--db", str(tmp_path / "open.duckdb"), "--grpc-address", address,
                 "--http-address", "127.0.0.1:0"], environ={})
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"refusing to listen on {address} without a token or TLS" in lines[0]
    assert "--insecure-listen" in lines[0] and "TRACEMILL_AUTH_TOKEN" in lines[0]


def test_loopback_token_or_the_explicit_flag_may_listen(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ok.duckdb")
    try:
        for settings in (
            Settings(db=store.path, grpc_address="127.0.0.1:0", http_address="[::1]:0"),
            Settings(db=store.path, grpc_address="0.0.0.0:0", auth_token=SecretStr("s3")),
            Settings(db=store.path, grpc_address="0.0.0.0:0", insecure_listen=True),
        ):
            Collector(settings, store).pipeline.spool.close()
        with pytest.raises(TracemillError, match=r"refusing to listen on 0\.0\.0\.0:4318"):
            Collector(Settings(db=store.path, http_address="0.0.0.0:4318"), store)
    finally:
        store.close()


def test_insecure_listen_serves_on_every_interface(start_collector: StartCollector) -> None:
    server = start_collector(grpc_address="0.0.0.0:0", http_address="0.0.0.0:0",
                             insecure_listen=True)
    port = server.http_endpoint.rsplit(":", 1)[1]
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200


# --------------------------------------------------------------------------- OTLP/JSON


def _document(**changes: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """OTLP_JSON_TRACES with a second span (changed as given) after the good one."""
    document: dict[str, Any] = copy.deepcopy(OTLP_JSON_TRACES)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    bad = copy.deepcopy(spans[0])
    bad["name"] = "second span"
    bad["spanId"] = "eee19b7ec3c1b176"
    bad.update(changes)
    spans.append(bad)
    return document, bad


@pytest.mark.parametrize(("changes", "reason"), [
    ({"spanId": 1234}, "spanId is a JSON number; OTLP/JSON ids are hex strings"),
    ({"traceId": ["ab"]}, "traceId is a JSON array"),
    ({"parentSpanId": True}, "parentSpanId is a JSON boolean"),
    ({"links": [{"traceId": 7, "spanId": "eee19b7ec3c1b175"}]}, "links[0].traceId is a JSON"),
    ({"kind": "bogus"}, "kind 'bogus' is not a SpanKind (one of SPAN_KIND_CLIENT"),
    ({"kind": 2.5}, "kind a JSON number is not a SpanKind"),
    ({"status": {"code": "STATUS_CODE_BOGUS"}}, "code 'STATUS_CODE_BOGUS' is not a StatusCode"),
])
def test_json_items_protobuf_cannot_take_are_rejected_one_by_one(
        collector_server: RunningCollector, changes: dict[str, Any], reason: str) -> None:
    document, _ = _document(**changes)
    response = httpx.post(f"{collector_server.http_endpoint}/v1/traces", json=document,
                          timeout=30)
    assert response.status_code == 200, response.text
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "1 of 2 rejected: span 'second span' (resource 0, scope 0, span 1)" in (
        partial["errorMessage"])
    assert reason in partial["errorMessage"]
    assert collector_server.query("SELECT name FROM spans") == [("chat gpt-4o",)]
    metrics = httpx.get(f"{collector_server.http_endpoint}/metrics", timeout=10).text
    assert 'tracemill_items_total{signal="traces",outcome="rejected"} 1' in metrics


def test_json_enum_names_and_numbers_still_work(collector_server: RunningCollector) -> None:
    document, _ = _document(kind="SPAN_KIND_SERVER", status={"code": "STATUS_CODE_OK"})
    response = httpx.post(f"{collector_server.http_endpoint}/v1/traces", json=document,
                          timeout=30)
    assert response.status_code == 200 and response.json() == {}, response.text
    rows = collector_server.query("SELECT name, kind, status_code FROM spans ORDER BY name")
    assert rows == [("chat gpt-4o", 3, 2), ("second span", 2, 1)]


def test_json_log_severity_names_are_checked(collector_server: RunningCollector) -> None:
    records = [{"timeUnixNano": "1", "severityNumber": "SEVERITY_NUMBER_WARN",
                "body": {"stringValue": "kept"}},
               {"timeUnixNano": "2", "severityNumber": "LOUD",
                "body": {"stringValue": "refused"}}]
    document = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    response = httpx.post(f"{collector_server.http_endpoint}/v1/logs", json=document,
                          timeout=30)
    assert response.status_code == 200, response.text
    partial = response.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "1"
    assert "severityNumber 'LOUD' is not a SeverityNumber" in partial["errorMessage"]
    assert collector_server.query("SELECT severity_number FROM log_records") == [(13,)]


# --------------------------------------------------------------------------- logged refusals


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self) -> list[tuple[str, dict[str, Any]]]:
        return [(record.getMessage(), dict(getattr(record, "fields", {})))
                for record in self.records]


@pytest.fixture
def intake_log() -> Iterator[_Records]:
    handler = _Records()
    logger = logging.getLogger("tracemill.collector.intake")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_refused_requests_are_logged_and_counted(start_collector: StartCollector,
                                                 intake_log: _Records) -> None:
    server = start_collector(auth_token="tok-9f8e7d")
    good = {"authorization": "Bearer tok-9f8e7d"}
    secret_name = "span-name-with-a-customer-secret"
    body = trace_request([genai_span(secret_name)]).SerializeToString()
    with grpc.insecure_channel(server.grpc_endpoint) as channel:
        with pytest.raises(grpc.RpcError) as denied:
            channel.unary_unary(TRACES)(body, timeout=10,
                                        metadata=(("authorization", "Bearer guess"),))
        assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
    base = server.http_endpoint
    assert httpx.post(f"{base}/v1/traces", content=body, timeout=10,
                      headers={"content-type": "application/x-protobuf"}).status_code == 401
    malformed = b"{\"resourceSpans\": [" + secret_name.encode()
    assert httpx.post(f"{base}/v1/traces", content=malformed, timeout=10,
                      headers={**JSON, **good}).status_code == 400
    garbage = b"\xff\xff" + secret_name.encode()
    assert httpx.post(f"{base}/v1/traces", content=garbage, timeout=10,
                      headers={"content-type": "application/x-protobuf", **good}
                      ).status_code == 400
    document, _ = _document(kind="bogus", name=secret_name)
    assert httpx.post(f"{base}/v1/traces", json=document, timeout=10,
                      headers=good).status_code == 200

    lines = intake_log.lines()
    unauthenticated = [fields for message, fields in lines if "bearer token" in message]
    assert [(f["transport"], f["reason"]) for f in unauthenticated] == [
        ("grpc", "wrong token"), ("http", "no token")]
    assert all(f["peer"] and "127.0.0.1" in f["peer"] for f in unauthenticated)
    refused = [fields for message, fields in lines if message == "export refused"]
    assert [(f["transport"], f["outcome"]) for f in refused] == [("http", "invalid")] * 2
    assert "not valid JSON" in refused[0]["reason"]
    assert "not a valid protobuf" in refused[1]["reason"]
    partly = [fields for message, fields in lines if message == "export partly rejected"]
    assert len(partly) == 1
    assert (partly[0]["accepted"], partly[0]["rejected"]) == (1, 1)
    assert "is not a SpanKind" in partly[0]["reason"]
    for message, fields in lines:  # never a payload, a span name or a token
        text = message + repr(fields)
        assert secret_name not in text and "tok-9f8e7d" not in text and "guess" not in text

    metrics = httpx.get(f"{base}/metrics", headers=good, timeout=10).text
    for transport, outcome, count in [("grpc", "unauthenticated", 1),
                                      ("http", "unauthenticated", 1),
                                      ("http", "invalid", 2), ("http", "partly_rejected", 1)]:
        assert (f'tracemill_requests_total{{signal="traces",transport="{transport}",'
                f'outcome="{outcome}"}} {count}') in metrics, metrics
