"""The compiled decoder validates large requests without the GIL, on many threads at once.

``collector/_fastdecode.c`` gives the interpreter lock away while it walks a request of
64 KiB or more, so the reason a walk failed is kept per thread: two threads refusing
different requests at the same moment must each name their own request's fault.
"""

from __future__ import annotations

import threading

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from collector import native
from collector.decode import SPAN_SCHEMA, decode_traces
from collector.promote import PROMOTED_SOURCES

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason=native.MISSING_HINT)

_UTF8 = "a string field holds invalid UTF-8"
_VARINT = "a varint runs past the end of its message"


def _large_request(spans: int = 64) -> bytes:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for n in range(spans):
        span = scope.spans.add(trace_id=(n + 1).to_bytes(16, "big"),
                               span_id=(n + 1).to_bytes(8, "big"), name=f"span {n}",
                               start_time_unix_nano=1_700_000_000_000_000_000 + n)
        span.attributes.append(KeyValue(key="gen_ai.input.messages",
                                        value=AnyValue(string_value="x" * 2048)))
    body = request.SerializeToString()
    assert len(body) > 64 * 1024  # large enough to be walked without the GIL
    return body


def test_faults_are_named_per_thread_while_walking_without_the_gil() -> None:
    valid = _large_request()
    # a ResourceSpans whose schema_url is not UTF-8 / a varint field cut off at the end
    bad_utf8 = valid + b"\x0a\x03\x1a\x01\xff"
    cut_varint = valid + b"\x08\xff"
    expected = {bad_utf8: _UTF8, cut_varint: _VARINT}
    wrong: list[str] = []
    start = threading.Barrier(4)

    def refuse(payload: bytes) -> None:
        start.wait()
        for _ in range(300):
            for check in (native.check_traces, _decoder):
                try:
                    check(payload)
                except native.MalformedRequest as exc:
                    if str(exc) != expected[payload]:
                        wrong.append(str(exc))
                else:
                    wrong.append("accepted a malformed request")

    threads = [threading.Thread(target=refuse, args=(payload,))
               for payload in (bad_utf8, cut_varint, bad_utf8, cut_varint)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def _decoder(payload: bytes) -> None:
    # the decoder validates the whole request before its first chunk
    next(native.trace_chunks(payload, 1, schema=SPAN_SCHEMA,
                             promoted=tuple(PROMOTED_SOURCES.values()),
                             invocation_model=lambda _: None, max_rows=1_000,
                             max_bytes=1 << 20))


def test_valid_large_requests_decode_alike_on_many_threads() -> None:
    payloads = [_large_request(48 + n) for n in range(4)]
    expected = [decode_traces(p, 7, compiled=True).rows for p in payloads]
    failures: list[str] = []

    def decode(index: int) -> None:
        for _ in range(10):
            got = decode_traces(payloads[index], 7, compiled=True)
            if not got.rows.equals(expected[index]):
                failures.append(f"payload {index}: rows differ")
            if native.check_traces(payloads[index]) != (48 + index, 0, ()):
                failures.append(f"payload {index}: check differs")

    threads = [threading.Thread(target=decode, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
