"""The compiled decoder builds a large request's rows without holding the GIL.

While one thread turns a request of fat spans into a chunk of rows (one call of
``TraceDecoder.next_chunk``, tens of milliseconds), a second, pure-Python thread must keep
running: it only can if ``collector/_fastdecode.c`` gave the interpreter lock away for the
walk (with the lock held through the call it does not run at all until the call ends).
Rare values that need Python (a 17-digit double, non-ASCII text to lower-case) take the
lock back briefly (and keep it for the next few spans); the rows stay those of the
pure-Python decoder.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import orjson
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from collector import native
from collector.decode import decode_traces
from collector.promote import PROMOTED_SOURCES, invocation_model

pytestmark = [
    pytest.mark.skipif(not native.AVAILABLE, reason=native.MISSING_HINT),
    pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores to run side by side"),
]


def _request(spans: int, rare: bool) -> bytes:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value="svc")))
    scope = resource.scope_spans.add()
    for n in range(spans):
        span = scope.spans.add(trace_id=(n + 1).to_bytes(16, "big"),
                               span_id=(n + 1).to_bytes(8, "big"), name="chat")
        span.attributes.extend([
            KeyValue(key="gen_ai.operation.name",
                     value=AnyValue(string_value="ÉXECUTE" if rare and n % 100 == 0 else "Chat")),
            KeyValue(key="gen_ai.request.temperature",
                     value=AnyValue(double_value=0.1 + n / 3 if rare and n % 50 == 1 else 0.7)),
            KeyValue(key="gen_ai.usage.input_tokens", value=AnyValue(int_value=n)),
            KeyValue(key="gen_ai.input.messages",
                     value=AnyValue(string_value='[{"role": "user", "content": "hi"}]' * 60)),
        ])
    return request.SerializeToString()


def _spinner_ran_mid_call(payload: bytes) -> bool:
    """Whether a Python thread ran in the middle half of one next_chunk call."""
    from collector import _fastdecode

    decoder = _fastdecode.TraceDecoder(payload, 1, tuple(PROMOTED_SOURCES.values()),
                                       orjson.dumps, invocation_model)
    stop = threading.Event()
    stamps: list[float] = []

    def spin() -> None:
        clock = time.perf_counter
        while not stop.is_set():
            stamps.append(clock())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        time.sleep(0.02)
        started = time.perf_counter()
        done, rows, *_ = decoder.next_chunk(1_000_000, 1 << 40)
        ended = time.perf_counter()
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert done and rows > 0
    third = (ended - started) / 3
    # with the GIL held through the call the spinner cannot run a single bytecode in it
    # (only before the call enters C)
    return any(started + third < stamp < ended - third for stamp in stamps)


@pytest.mark.parametrize("rare", [False, True], ids=["common-values", "rare-values"])
def test_another_thread_runs_while_a_request_decodes(rare: bool) -> None:
    payload = _request(2_000, rare)
    assert decode_traces(payload, 1, compiled=True).rows.equals(
        decode_traces(payload, 1, compiled=False).rows)
    # A busy machine can fool one try either way: the OS may stop the spinner for the whole
    # call, or stop it while it holds the GIL so that the call starts late. Holding the GIL
    # through the call passes a try about one time in eight on a loaded 2-core machine.
    ran = [_spinner_ran_mid_call(payload) for _ in range(5)]
    assert sum(ran) >= 4, ran
