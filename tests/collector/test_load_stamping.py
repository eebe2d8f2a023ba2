"""The collector load benchmark's requests (bench/_stamping.py): each carries its own ids and
span times of the moment it is sent, and otherwise the template's content byte for byte."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", _BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spans(body: bytes) -> list[Any]:
    request = ExportTraceServiceRequest.FromString(body)
    return [span for resource in request.resource_spans for scope in resource.scope_spans
            for span in scope.spans]


def _times(span: Any) -> list[int]:
    return [span.start_time_unix_nano, span.end_time_unix_nano,
            *(event.time_unix_nano for event in span.events)]


def test_each_request_has_its_own_ids_and_times_of_its_sending() -> None:
    spans_module, stamping = _bench_module("_spans"), _bench_module("_stamping")
    (segments,), _ = spans_module.build_templates(seed=3, templates=1, spans_per_request=64,
                                                  spans_per_trace=8)
    stamper = stamping.Stamper(segments)
    assert (stamper.ids, stamper.times) == (64 + 64 + 56, 64 * 4)
    sent = []
    for number in (7, 0x01020304):
        template = _spans(bytes(4).join(segments))  # cleared below
        now = time.time_ns() + number  # two different sending moments
        body = stamper.request(number, now)
        spans = _spans(body)
        sent.append(spans[0].start_time_unix_nano)
        # ids: the request number in their first 4 bytes, the template's bytes after it
        prefix = number.to_bytes(4, "big")
        assert {span.trace_id[:4] for span in spans} == {span.span_id[:4] for span in spans} == {
            prefix}
        assert [(s.trace_id[4:], s.span_id[4:], s.parent_span_id[4:]) for s in spans] == [
            (s.trace_id[4:], s.span_id[4:], s.parent_span_id[4:]) for s in template]
        # times: all moved by one amount, the latest is the sending moment
        assert max(max(_times(span)) for span in spans) == now
        moved = {a - b for span, old in zip(spans, template, strict=True)
                 for a, b in zip(_times(span), _times(old), strict=True)}
        assert len(moved) == 1
        assert min(span.start_time_unix_nano for span in spans) > now - 120 * 10**9
        # nothing else changed
        for span, old in zip(spans, template, strict=True):
            for message in (span, old):
                message.ClearField("trace_id")
                message.ClearField("span_id")
                message.ClearField("parent_span_id")
                message.ClearField("start_time_unix_nano")
                message.ClearField("end_time_unix_nano")
                for event in message.events:
                    event.ClearField("time_unix_nano")
            assert span == old
    assert sent[0] != sent[1]
