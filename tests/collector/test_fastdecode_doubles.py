"""Doubles are written in C, byte for byte as orjson (attribute JSON) and repr (promoted text).

``collector/_fastdecode.c`` finds a double's shortest digits with exact double arithmetic
when it has at most 15 significant digits (a temperature, a top_p, a score) and lays them
out as orjson.dumps and Python's repr do; every other double is still formatted by Python.
``format_double`` exposes both texts (None where Python is asked instead).
"""

from __future__ import annotations

import random
import struct

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from collector import native
from collector.decode import decode_traces

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason=native.MISSING_HINT)

_EDGES = (0.0, -0.0, 1.0, 0.5, 0.95, 0.7, 1e15, 1e16, 9.999999999999999e15, 1e-5, 1e-4,
          9.9999e-5, 1.5e-5, 1e-6, 1e-7, 1e-22, 1e37, 5e-324, 0.1, 0.2, 0.3, 1 / 3,
          123456789012345.0, 999999999999999.0, 1e21, 1e22, 1e23, 2.0**60, 2.0**-30,
          1.7976931348623157e308, 2.2250738585072014e-308)


def _assert_like_python(x: float) -> bool:
    made = native.format_double(x)
    if made is None:
        return False
    assert made == (orjson.dumps(x).decode(), repr(x)), x
    return True


@pytest.mark.parametrize("x", [*_EDGES, *(-x for x in _EDGES)])
def test_edge_doubles_read_like_orjson_and_repr(x: float) -> None:
    _assert_like_python(x)


def test_everyday_doubles_are_made_in_c() -> None:
    # the fast path must not quietly fall back to Python for the values spans carry
    for x in (0.7, 0.95, 0.123, 1.0, 2.5, -3.25, 1024.0, 0.001, 36.6, 1e-5, 12345.678):
        assert _assert_like_python(x), x


def test_random_doubles_read_like_python() -> None:
    rng = random.Random(20261202)
    made = 0
    for _ in range(60_000):
        kind = rng.random()
        if kind < 0.3:  # any bit pattern
            x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        elif kind < 0.6:  # a few decimals
            x = round(rng.uniform(-1000, 1000), rng.randrange(0, 8))
        elif kind < 0.8:  # up to 15 digits at any exponent near the fast range
            x = float(f"{rng.randrange(1, 10 ** rng.randrange(1, 16))}e{rng.randrange(-25, 40)}")
        else:  # powers of two, whose rounding interval is lopsided
            x = 2.0 ** rng.randrange(-80, 130) * rng.choice((1, -1, 3, 0.75))
        if x != x or x in (float("inf"), float("-inf")):
            continue
        made += _assert_like_python(x)
    assert made > 25_000  # most of them took the C path


@settings(max_examples=2_000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False)
       | st.decimals(places=6, allow_nan=False, allow_infinity=False,
                     min_value=-10**9, max_value=10**9).map(float))
def test_hypothesis_doubles_read_like_python(x: float) -> None:
    _assert_like_python(x)


def test_span_rows_with_doubles_match_the_python_decoder() -> None:
    rng = random.Random(7)
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for n in range(300):
        span = scope.spans.add(trace_id=(n + 1).to_bytes(16, "big"),
                               span_id=(n + 1).to_bytes(8, "big"), name="chat")
        values = [round(rng.random(), rng.randrange(1, 4)), rng.random(), 1e16 * rng.random(),
                  float(rng.randrange(-50, 50)), rng.choice(_EDGES)]
        span.attributes.extend(
            [KeyValue(key=f"d{k}", value=AnyValue(double_value=v)) for k, v in enumerate(values)]
            + [KeyValue(key="gen_ai.request.model", value=AnyValue(double_value=values[n % 5])),
               KeyValue(key="gen_ai.usage.input_tokens",
                        value=AnyValue(double_value=float(n)))])
    payload = request.SerializeToString()
    assert len(payload) > 16 * 1024  # decoded without the GIL
    python = decode_traces(payload, 1, compiled=False).rows
    compiled = decode_traces(payload, 1, compiled=True).rows
    assert compiled.equals(python)
    assert compiled.column("request_model").null_count == python.column(
        "request_model").null_count
