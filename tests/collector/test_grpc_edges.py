"""OTLP/gRPC edge cases over a raw channel: bad input, limits, auth, back-pressure, retries."""

from __future__ import annotations

import threading

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import RunningCollector, StartCollector
from tests.support.otlp import genai_span, log_request, trace_request

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LOGS = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def _call(server: RunningCollector, payload: bytes, method: str = TRACES,
          metadata: tuple[tuple[str, str], ...] = ()) -> bytes:
    with grpc.insecure_channel(server.grpc_endpoint, options=[
            ("grpc.max_send_message_length", 256 * 1024 * 1024)]) as channel:
        stub = channel.unary_unary(method)
        response: bytes = stub(payload, timeout=30, metadata=metadata)
        return response


def _span_count(server: RunningCollector) -> int:
    return int(server.query("SELECT count(*) FROM spans")[0][0])


def test_retried_export_is_stored_once(collector_server: RunningCollector) -> None:
    payload = trace_request([genai_span() for _ in range(5)]).SerializeToString()
    for _ in range(3):
        response = ExportTraceServiceResponse.FromString(_call(collector_server, payload))
        assert not response.HasField("partial_success")
    assert _span_count(collector_server) == 5
    assert collector_server.collector.metrics.items("traces", "duplicates") == 10
    audit = collector_server.query(
        "SELECT sum(requests), sum(stored_items), sum(duplicate_items) FROM collector_commits")
    assert audit == [(3, 5, 10)]


def test_duplicates_inside_one_request_are_stored_once(
        collector_server: RunningCollector) -> None:
    span = genai_span()
    payload = trace_request([span, span, genai_span()]).SerializeToString()
    _call(collector_server, payload)
    assert _span_count(collector_server) == 2


def test_retried_log_export_is_stored_once(collector_server: RunningCollector) -> None:
    payload = log_request(["a", "b", "b"]).SerializeToString()  # distinct timestamps
    for _ in range(2):
        ExportLogsServiceResponse.FromString(_call(collector_server, payload, LOGS))
    assert collector_server.query("SELECT count(*) FROM log_records") == [(3,)]
    assert collector_server.collector.metrics.items("logs", "duplicates") == 3


def test_invalid_ids_are_rejected_and_explained_while_the_rest_is_kept(
        collector_server: RunningCollector) -> None:
    spans = [genai_span("good"), genai_span("short trace", trace_id=b"\x01" * 15),
             genai_span("zero trace", trace_id=bytes(16)),
             genai_span("zero span", span_id=bytes(8)), genai_span("good too")]
    response = ExportTraceServiceResponse.FromString(
        _call(collector_server, trace_request(spans).SerializeToString()))
    assert response.partial_success.rejected_spans == 3
    message = response.partial_success.error_message
    assert "'short trace'" in message and "15 bytes, expected 16" in message
    assert "'zero trace'" in message and "all zeros" in message
    assert "'zero span'" in message
    names = collector_server.query("SELECT name FROM spans ORDER BY name")
    assert names == [("good",), ("good too",)]


def test_malformed_protobuf_is_invalid_argument_and_harms_nothing(
        collector_server: RunningCollector) -> None:
    _call(collector_server, trace_request([genai_span()]).SerializeToString())
    with pytest.raises(grpc.RpcError) as caught:
        _call(collector_server, b"\x0a\xff\xff\xff\xff\x0f garbage")
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid protobuf ExportTraceServiceRequest" in (caught.value.details() or "")
    _call(collector_server, trace_request([genai_span()]).SerializeToString())
    assert _span_count(collector_server) == 2


def test_truncated_json_in_string_attributes_is_stored_as_it_came(
        collector_server: RunningCollector) -> None:
    span = genai_span()
    broken = '[{"role": "user", "parts": [{"type": "text", "content": "cut'
    span.attributes[-1].value.string_value = broken
    _call(collector_server, trace_request([span]).SerializeToString())
    stored = collector_server.query(
        "SELECT attributes->>'$.\"gen_ai.input.messages\"' FROM spans")
    assert stored == [(broken,)]


def test_oversize_message_gets_a_clear_error(start_collector: StartCollector) -> None:
    server = start_collector(max_message_bytes=10_000)
    payload = trace_request([genai_span() for _ in range(100)]).SerializeToString()
    assert len(payload) > 10_000
    with pytest.raises(grpc.RpcError) as caught:
        _call(server, payload)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "larger than max" in (caught.value.details() or "")
    _call(server, trace_request([genai_span()]).SerializeToString())
    assert _span_count(server) == 1


def test_bearer_token_is_required_when_configured(start_collector: StartCollector) -> None:
    server = start_collector(auth_token="s3cret")
    payload = trace_request([genai_span()]).SerializeToString()
    for metadata in ((), (("authorization", "Bearer wrong"),)):
        with pytest.raises(grpc.RpcError) as caught:
            _call(server, payload, metadata=metadata)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    _call(server, payload, metadata=(("authorization", "Bearer s3cret"),))
    assert _span_count(server) == 1


def test_full_queue_answers_unavailable_with_retry_info(start_collector: StartCollector) -> None:
    server = start_collector(max_queue_bytes=1000, retry_after_seconds=2)
    writer = server.collector.pipeline.writer
    writer.admit(1000)  # another request's bytes hold the whole budget
    payload = trace_request([genai_span()]).SerializeToString()
    with pytest.raises(grpc.RpcError) as caught:
        _call(server, payload)
    error = caught.value
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    trailers = dict(error.trailing_metadata() or ())
    retry = error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"])
    assert retry.retry_delay.seconds == 2
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    assert status.details[0].Is(error_details_pb2.RetryInfo.DESCRIPTOR)
    assert server.query("SELECT count(*) FROM spans") == [(0,)]
    writer.release(1000)
    _call(server, payload)
    assert _span_count(server) == 1


def test_sdk_exporter_retries_through_backpressure(start_collector: StartCollector) -> None:
    server = start_collector(max_queue_bytes=1000, retry_after_seconds=1)
    writer = server.collector.pipeline.writer
    writer.admit(1000)
    threading.Timer(1.5, writer.release, args=(1000,)).start()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(
        OTLPSpanExporter(endpoint=server.grpc_endpoint, insecure=True, timeout=20)))
    with provider.get_tracer("t").start_as_current_span("held back"):
        pass
    provider.shutdown()
    assert server.query("SELECT name FROM spans") == [("held back",)]
    requests = server.collector.metrics.render()
    assert 'outcome="backpressure"} ' in requests


def test_many_concurrent_exports_are_all_committed(collector_server: RunningCollector) -> None:
    payloads = [trace_request([genai_span() for _ in range(50)]).SerializeToString()
                for _ in range(16)]
    errors: list[BaseException] = []

    def send(payload: bytes) -> None:
        try:
            _call(collector_server, payload)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=send, args=(p,)) for p in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _span_count(collector_server) == 800


def test_decode_worker_processes_serve_exports(start_collector: StartCollector) -> None:
    server = start_collector(decode_workers=2)
    for _ in range(3):
        _call(server, trace_request([genai_span() for _ in range(20)]).SerializeToString())
    _call(server, log_request(["x"]).SerializeToString(), LOGS)
    assert _span_count(server) == 60
    assert server.query("SELECT count(*) FROM log_records") == [(1,)]
