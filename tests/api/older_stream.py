"""A second production stream, moved in time to end before another one starts, so that
one store holds more than two model versions in a known order (for ``since``)."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.support.synthetic import production_stream

HOUR_NS = 3600 * 10**9


def _times(requests: list[bytes]) -> tuple[int, int]:
    low, high = 1 << 64, 0
    for raw in requests:
        request = ExportTraceServiceRequest.FromString(raw)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    low = min(low, span.start_time_unix_nano)
                    high = max(high, span.end_time_unix_nano,
                               *(e.time_unix_nano for e in span.events))
    return low, high


def older_stream(seed: int, versions: tuple[str, str], before: list[bytes]) -> list[bytes]:
    """``production_stream(seed, versions=versions)``'s requests with every time moved so
    that its last span ends an hour before the first span of ``before`` starts."""
    requests = production_stream(seed=seed, conversations_per_version=400,
                                 versions=versions).requests
    _, end = _times(requests)
    start, _ = _times(before)
    shift = end - start + HOUR_NS
    moved = []
    for raw in requests:
        request = ExportTraceServiceRequest.FromString(raw)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    span.start_time_unix_nano -= shift
                    span.end_time_unix_nano -= shift
                    for event in span.events:
                        event.time_unix_nano -= shift
        moved.append(request.SerializeToString())
    return moved
