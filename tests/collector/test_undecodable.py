"""Spans the columns cannot hold, and spooled requests that cannot be decoded.

A kind or status code outside 0-255 (the UTINYINT columns) is refused per span at intake,
over gRPC, OTLP/HTTP protobuf and OTLP/JSON, while the rest of the request is stored. A
spooled request that still cannot be decoded (written by an older collector, or a decoder
bug) is moved to the dead-letter file and the requests behind it are stored, instead of
being retried forever.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import grpc
import httpx
import orjson
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from collector import native
from collector.checks import check_request
from collector.dead_letters import INDEX, RECORDS, DeadLetters
from collector.decode import decode_traces
from collector.pipeline import spool_folder
from collector.spool import Spool, SpooledRequest, SpoolEntry
from tests.conftest import RunningCollector, StartCollector
from tests.support.otlp import genai_span, trace_request

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
_PATHS = pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.skipif(
    not native.AVAILABLE, reason=native.MISSING_HINT))], ids=["python", "compiled"])


def _bad_spans() -> list[Span]:
    kind = genai_span("kind 300")
    kind.kind = 300  # type: ignore[assignment]
    negative = genai_span("kind -1")
    negative.kind = -1  # type: ignore[assignment]
    status = genai_span("status 256")
    status.status.code = 256  # type: ignore[assignment]
    return [genai_span("good"), kind, negative, status, genai_span("good too")]


def _assert_refused(rejected: int, message: str) -> None:
    assert rejected == 3
    assert "'kind 300'" in message and "kind 300 is outside 0-255" in message
    assert "'kind -1'" in message and "kind -1 is outside 0-255" in message
    assert "'status 256'" in message and "status.code 256 is outside 0-255" in message


def _names(server: RunningCollector) -> list[tuple[str]]:
    return server.query("SELECT name FROM spans ORDER BY name")


@_PATHS
def test_both_decode_paths_refuse_out_of_range_enums_per_span(compiled: bool) -> None:
    payload = trace_request(_bad_spans()).SerializeToString()
    check = check_request("traces", payload, compiled=compiled)
    _assert_refused(check.rejected, check.rejection_message())
    batch = decode_traces(payload, 1, compiled=compiled)
    assert batch.problems == check.problems
    assert batch.rows["name"].to_pylist() == ["good", "good too"]


def test_grpc_refuses_out_of_range_enums_per_span_and_keeps_storing(
        collector_server: RunningCollector) -> None:
    with grpc.insecure_channel(collector_server.grpc_endpoint) as channel:
        export = channel.unary_unary(TRACES)
        response = ExportTraceServiceResponse.FromString(
            export(trace_request(_bad_spans()).SerializeToString(), timeout=30))
        _assert_refused(response.partial_success.rejected_spans,
                        response.partial_success.error_message)
        export(trace_request([genai_span("after")]).SerializeToString(), timeout=30)
    assert _names(collector_server) == [("after",), ("good",), ("good too",)]
    assert collector_server.collector.metrics.items("traces", "rejected") == 3


def test_http_protobuf_refuses_out_of_range_enums_per_span(
        collector_server: RunningCollector) -> None:
    response = httpx.post(f"{collector_server.http_endpoint}/v1/traces",
                          content=trace_request(_bad_spans()).SerializeToString(),
                          headers={"content-type": "application/x-protobuf"}, timeout=30)
    assert response.status_code == 200
    partial = ExportTraceServiceResponse.FromString(response.content).partial_success
    _assert_refused(partial.rejected_spans, partial.error_message)
    assert _names(collector_server) == [("good",), ("good too",)]


def test_otlp_json_refuses_out_of_range_enums_per_span(
        collector_server: RunningCollector) -> None:
    def span(name: str, kind: int, code: int) -> dict[str, object]:
        return {"traceId": "01" * 16, "spanId": f"{len(name):016x}", "name": name,
                "kind": kind, "status": {"code": code}}

    spans = [span("good", 1, 0), span("kind 300", 300, 0), span("kind -1x", -1, 0),
             span("status 256", 1, 256), span("huge kind", 2**40, 0)]
    document = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    response = httpx.post(f"{collector_server.http_endpoint}/v1/traces",
                          content=json.dumps(document).encode(),
                          headers={"content-type": "application/json"}, timeout=30)
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "4"
    message = partial["errorMessage"]
    assert "kind 300 is outside 0-255" in message and "kind -1 is outside 0-255" in message
    assert "status.code 256 is outside 0-255" in message
    # protobuf would keep the low 32 bits of 2**40 (0): refused, not stored as another kind
    assert "'huge kind'" in message and "outside the int32 range" in message
    assert _names(collector_server) == [("good",)]


def _spool_before_start(db: Path, payloads: list[bytes]) -> None:
    """Requests in the spool as an older collector (that checked less) acknowledged them."""
    spool = Spool(spool_folder(db))
    spool.append([SpooledRequest("traces", payload, 1, time.time_ns()) for payload in payloads])
    spool.close()


def test_an_undecodable_spooled_request_is_moved_aside_and_the_rest_is_stored(
        start_collector: StartCollector, tmp_path: Path) -> None:
    db = tmp_path / "dead.duckdb"
    garbage = b"\x0a\xff\xff\xff\xff\x0f"  # not an ExportTraceServiceRequest
    before = trace_request([genai_span("before")]).SerializeToString()
    enums = trace_request(_bad_spans()).SerializeToString()
    _spool_before_start(db, [before, garbage, enums])
    server = start_collector(db=db)
    with grpc.insecure_channel(server.grpc_endpoint) as channel:
        channel.unary_unary(TRACES)(trace_request([genai_span("after")]).SerializeToString(),
                                    timeout=30)
    assert _names(server) == [("after",), ("before",), ("good",), ("good too",)]
    folder = spool_folder(db)
    index = [orjson.loads(line) for line in (folder / INDEX).read_bytes().splitlines()]
    assert len(index) == 1 and "not a valid protobuf" in index[0]["reason"]
    records = (folder / RECORDS).read_bytes()
    assert records.endswith(garbage) and len(records) == 21 + len(garbage)
    ready = httpx.get(f"{server.http_endpoint}/readyz", timeout=10)
    assert ready.status_code == 200 and ready.json()["dead_letter_requests"] == 1
    metrics = httpx.get(f"{server.http_endpoint}/metrics", timeout=10).text
    assert "tracemill_dead_letter_requests 1" in metrics


def test_dead_letters_are_remembered_across_restarts(
        start_collector: StartCollector, tmp_path: Path) -> None:
    db = tmp_path / "again.duckdb"
    _spool_before_start(db, [b"\x0a\xff\xff\xff\xff\x0f"])
    first = start_collector(db=db)
    assert first.collector.flush(timeout=60)
    first.thread.stop()
    first.store.close()
    # a new spool record behind the dead one; the dead one is neither retried nor copied again
    _spool_before_start(db, [trace_request([genai_span("later")]).SerializeToString()])
    second = start_collector(db=db)
    assert _names(second) == [("later",)]
    assert second.collector.pipeline.materializer.dead_letters.count == 1
    assert len((spool_folder(db) / INDEX).read_bytes().splitlines()) == 1


def _entry(tmp_path: Path, end: int) -> SpoolEntry:
    return SpoolEntry(signal="traces", path=tmp_path / "x.seg", offset=end - 4, length=4,
                      items=1, received_unix_nano=1, end=end)


def test_a_damaged_dead_letter_index_never_stops_the_collector(tmp_path: Path) -> None:
    """A torn or damaged index line (a crash, a full disk) is cut or skipped, never a
    crash at the next start; the next entry starts on a line of its own."""
    letters = DeadLetters(tmp_path)
    letters.add(_entry(tmp_path, 100), b"junk", "undecodable")
    index = tmp_path / INDEX
    with index.open("ab") as handle:
        handle.write(b'{"end": 2')  # torn: written without its newline
    letters.add(_entry(tmp_path, 200), b"more", "undecodable")
    with index.open("ab") as handle:
        handle.write(b"not json at all\n")
    again = DeadLetters(tmp_path)
    assert again.count == 2
    assert _entry(tmp_path, 100) in again and _entry(tmp_path, 200) in again
    assert [json.loads(line)["end"] for line in index.read_text().splitlines()[:2]] == [100, 200]
