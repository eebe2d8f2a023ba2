"""Mangled real-looking requests: the compiled decoder refuses and accepts what Python does.

Fat GenAI requests (the shape the load benchmark sends: JSON strings, doubles, token counts,
events, a link) are cut, have bytes flipped, inserted or deleted, and have length prefixes
blown up; the compiled path (which decodes them without the GIL) must give the Python
path's outcome: the same InvalidRequest, or the same counts and rows. The seeded loop runs
``TRACEMILL_FUZZ_ITERATIONS`` mutations (default 400; 5000 before changing the decoder).
"""

from __future__ import annotations

import json
import os
import random

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from collector import native
from collector.checks import check_request
from collector.decode import decode_chunks, decode_traces
from collector.errors import InvalidRequest

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason=native.MISSING_HINT)
_ITERATIONS = int(os.environ.get("TRACEMILL_FUZZ_ITERATIONS", "400"))


def _kv(key: str, value: str | int | float) -> KeyValue:
    if isinstance(value, str):
        return KeyValue(key=key, value=AnyValue(string_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(int_value=value))


def _fat_request(rng: random.Random, spans: int) -> bytes:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.extend([_kv("service.name", "support-bot"),
                                         _kv("service.version", "2.1"),
                                         _kv("thread.id", "t-1")])
    scope = resource.scope_spans.add()
    scope.scope.name, scope.scope.version = "openai.agents", "0.4"
    for n in range(spans):
        span = scope.spans.add(
            trace_id=rng.randbytes(15) + b"\x01", span_id=rng.randbytes(7) + b"\x02",
            parent_span_id=rng.choice((b"", rng.randbytes(8))), name=f"chat gpt-{n}",
            kind=3, start_time_unix_nano=1_700_000_000_000_000_000 + n,
            end_time_unix_nano=1_700_000_001_000_000_000 + n,
            status=Status(code=Status.StatusCode.ValueType(rng.choice((0, 1, 2))),
                          message="é" * (n % 3)))
        span.attributes.extend([
            _kv("gen_ai.operation.name", rng.choice(("Chat", "invoke_agent", "ÉXECUTE"))),
            _kv("gen_ai.request.model", "gpt-4o"),
            _kv("gen_ai.request.temperature", round(rng.random(), 2)),
            _kv("gen_ai.request.top_p", rng.random()),
            _kv("gen_ai.usage.input_tokens", rng.choice((rng.randrange(9999), "12", " 7"))),
            _kv("gen_ai.usage.output_tokens", float(rng.randrange(600))),
            _kv("gen_ai.input.messages", json.dumps(
                [{"role": "user", "content": "tell me \"why\"\n\t" * rng.randrange(1, 20)}])),
            _kv("llm.invocation_parameters", '{"model": "gpt-x", "t": 0.1}'),
        ])
        event = span.events.add(time_unix_nano=5, name="exception")
        event.attributes.extend([_kv("exception.type", "Timeout"), _kv("score", 0.125)])
        span.links.add(trace_id=b"\x03" * 16, span_id=b"\x04" * 8, trace_state="a=b")
    return request.SerializeToString()


def _mutate(rng: random.Random, body: bytes) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(data))
        action = rng.randrange(6)
        if action == 0:
            del data[rng.randrange(1, len(data)):]  # truncated
        elif action == 1:
            data[at] = rng.randrange(256)
        elif action == 2:
            data[at:at] = rng.randbytes(rng.randrange(1, 6))
        elif action == 3:
            del data[at:at + rng.randrange(1, 8)]
        elif action == 4:  # a huge length or a varint that never ends
            data[at:at + 1] = rng.choice((b"\xff\xff\xff\xff\x0f", b"\x80" * 11, b"\x0b"))
        else:  # a wrong wire type on a known field
            data[at] = (data[at] & ~7) | rng.choice((0, 1, 3, 4, 5, 6, 7))
        if not data:
            data = bytearray(b"\x0a")
    return bytes(data)


def _outcome(payload: bytes, compiled: bool) -> object:
    try:
        checked = check_request("traces", payload, compiled=compiled)
    except InvalidRequest as exc:
        assert "not a valid protobuf ExportTraceServiceRequest" in str(exc)
        return "invalid"
    batch = decode_traces(payload, 9, compiled=compiled)
    assert (batch.received, batch.rejected) == (checked.received, checked.rejected)
    return batch.received, batch.rejected, batch.problems, batch.rows


def test_mutated_fat_requests_get_the_python_outcome() -> None:
    rng = random.Random(1202)
    bodies = [_fat_request(rng, spans) for spans in (1, 3, 100)]
    assert len(bodies[-1]) > 64 * 1024  # validated and decoded without the GIL
    outcomes = {"invalid": 0, "valid": 0}
    for _ in range(_ITERATIONS):
        payload = _mutate(rng, rng.choice(bodies))
        python, compiled = _outcome(payload, False), _outcome(payload, True)
        if python == "invalid":
            assert compiled == "invalid"
            outcomes["invalid"] += 1
            continue
        assert compiled != "invalid"
        assert isinstance(python, tuple) and isinstance(compiled, tuple)
        assert python[:3] == compiled[:3]
        assert python[3].equals(compiled[3])
        outcomes["valid"] += 1
    assert min(outcomes.values()) > _ITERATIONS // 20, outcomes  # both kinds were tried


def test_unmutated_fat_requests_decode_alike_in_chunks() -> None:
    rng = random.Random(5)
    payload = _fat_request(rng, 60)
    python = decode_traces(payload, 9, compiled=False)
    compiled = decode_traces(payload, 9, compiled=True)
    assert python.rows.equals(compiled.rows)
    assert compiled.rows.num_rows == 60
    chunks = list(decode_chunks("traces", payload, 9, 7, compiled=True))
    assert sum(chunk.rows.num_rows for chunk in chunks) == 60
