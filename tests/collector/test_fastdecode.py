"""The compiled trace decoder and the pure-Python one produce the same rows.

Hypothesis builds random ExportTraceServiceRequests (every AnyValue type, repeated and
promoted keys, ids of every wrong length, messages given in several parts that protobuf
merges, unknown fields, kinds and status codes the columns cannot hold) and random
corruptions of them; both paths must accept and refuse the same bytes and store identical
rows. The Python path is the reference: it is what the protobuf library parses.

The property tests run ``TRACEMILL_PROPERTY_EXAMPLES`` examples each (default 40, about
ten seconds, what CI runs); the long run, before changing the decoder::

    TRACEMILL_PROPERTY_EXAMPLES=1000 python -m pytest -q -p no:cacheprovider \
        tests/collector/test_fastdecode.py
"""

from __future__ import annotations

import math
import os

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from collector import native
from collector.checks import check_request
from collector.decode import decode_chunks, decode_traces
from collector.errors import InvalidRequest
from collector.insert import insert_statement
from collector.promote import PROMOTED_SOURCES

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason=native.MISSING_HINT)
_EXAMPLES = int(os.environ.get("TRACEMILL_PROPERTY_EXAMPLES", "40"))
_PROPERTY = settings(max_examples=_EXAMPLES, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])

_KEYS = (
    "gen_ai.operation.name", "openinference.span.kind", "traceloop.span.kind",
    "llm.request.type", "gen_ai.conversation.id", "session.id", "thread.id",
    "gen_ai.agent.name", "agent_name", "gen_ai.agent.version", "gen_ai.request.model",
    "llm.request.model", "llm.model_name", "gen_ai.provider.name", "gen_ai.system",
    "gen_ai.tool.name", "tool_call.id", "gen_ai.usage.input_tokens", "llm.token_count.prompt",
    "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "error.type",
    "llm.invocation_parameters", "service.name", "service.version", "exception.type",
    "bytesValue", "doubleValue", "kvlistValue", "", "k", "ключ", "a\"b\\c\n",
)
_TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ("INVOKE_Agent", "İstanbul", "ΣΑΣ", " 12 ", "1_000", "-7", "٣", "1e3", "99999999999999999999",
     '{"model": "gpt-x"}', '{"model": 3}', "[1]", "{", "\x00\x1f\x7f", "\u2028"))
_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    (2.0, -0.0, 1e-7, 1.5e-5, 1e16, 1e300, 0.1, 9.3e18))
_KEY = st.sampled_from(_KEYS) | st.sampled_from(("a", "b")) | _TEXT


_LEAVES = st.one_of(
    st.builds(AnyValue),
    _TEXT.map(lambda v: AnyValue(string_value=v)),
    st.booleans().map(lambda v: AnyValue(bool_value=v)),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: AnyValue(int_value=v)),
    _FLOATS.map(lambda v: AnyValue(double_value=v)),
    st.binary(max_size=8).map(lambda v: AnyValue(bytes_value=v)),
    st.integers(0, 5).map(lambda v: AnyValue(string_value_strindex=v)),
)


def _containers(children: st.SearchStrategy[AnyValue]) -> st.SearchStrategy[AnyValue]:
    return st.lists(children, max_size=3).map(_array) | st.lists(
        st.tuples(_KEY, children), max_size=3).map(_kvlist)


def _array(values: list[AnyValue]) -> AnyValue:
    value = AnyValue()
    value.array_value.SetInParent()
    value.array_value.values.extend(values)
    return value


def _kvlist(pairs: list[tuple[str, AnyValue]]) -> AnyValue:
    value = AnyValue()
    value.kvlist_value.SetInParent()
    value.kvlist_value.values.extend(KeyValue(key=k, value=v) for k, v in pairs)
    return value


_VALUES = st.recursive(_LEAVES, _containers, max_leaves=8)
_ATTRIBUTES = st.lists(st.tuples(_KEY, _VALUES | _TEXT.map(lambda v: AnyValue(string_value=v))),
                       max_size=8).map(lambda pairs: [KeyValue(key=k, value=v) for k, v in pairs])
# mostly valid ids (hypothesis favours zero bytes, which are refused), so most spans are rows
_GOOD16 = st.binary(min_size=15, max_size=15).map(lambda tail: b"\x01" + tail)
_GOOD8 = st.binary(min_size=7, max_size=7).map(lambda tail: b"\x02" + tail)
_ID16 = st.one_of(_GOOD16, _GOOD16, _GOOD16, st.sampled_from((b"", bytes(16), b"\x01" * 15)))
_ID8 = st.one_of(_GOOD8, _GOOD8, _GOOD8, st.sampled_from((b"", bytes(8), b"\x01" * 7)))


def _kind(number: int) -> Span.SpanKind.ValueType:
    return Span.SpanKind.ValueType(number)


# mostly defined values; sometimes ones the UTINYINT columns cannot hold (refused per span)
_KINDS = st.integers(0, 5) | st.sampled_from((255, 256, -1, 2**31 - 1, -(2**31)))
_CODES = st.integers(0, 2) | st.sampled_from((255, 256, -1, 2**31 - 1))


@st.composite
def _span(draw: st.DrawFn) -> bytes:
    span = Span(
        trace_id=draw(_ID16), span_id=draw(_ID8),
        parent_span_id=draw(st.sampled_from((b"", bytes(8))) | _ID8),
        trace_state=draw(_TEXT), name=draw(_TEXT), kind=_kind(draw(_KINDS)),
        flags=draw(st.integers(0, 2**32 - 1)),
        start_time_unix_nano=draw(st.integers(0, 2**64 - 1)),
        end_time_unix_nano=draw(st.integers(0, 2**64 - 1)),
        dropped_attributes_count=draw(st.integers(0, 2**32 - 1)),
        dropped_events_count=draw(st.integers(0, 3)),
        dropped_links_count=draw(st.integers(0, 3)),
    )
    span.attributes.extend(draw(_ATTRIBUTES))
    for _ in range(draw(st.integers(0, 3))):
        event = span.events.add(time_unix_nano=draw(st.integers(0, 2**64 - 1)),
                                name=draw(st.sampled_from(("exception", "gen_ai.choice")) | _TEXT),
                                dropped_attributes_count=draw(st.integers(0, 3)))
        event.attributes.extend(draw(_ATTRIBUTES))
    for _ in range(draw(st.integers(0, 2))):
        link = span.links.add(trace_id=draw(_ID16), span_id=draw(_ID8),
                              trace_state=draw(_TEXT), flags=draw(st.integers(0, 2**32 - 1)),
                              dropped_attributes_count=draw(st.integers(0, 3)))
        link.attributes.extend(draw(_ATTRIBUTES))
    if draw(st.booleans()):
        span.status.code = Status.StatusCode.ValueType(draw(_CODES))
        span.status.message = draw(_TEXT)
    payload: bytes = span.SerializeToString()
    # protobuf merges a message given in parts: later scalars win, repeated fields add up
    if draw(st.booleans()):
        extra = Span(name=draw(_TEXT), kind=_kind(draw(_KINDS)))
        extra.attributes.extend(draw(_ATTRIBUTES))
        if draw(st.booleans()):
            extra.status.message = draw(_TEXT)
        payload += extra.SerializeToString()
    # unknown fields are skipped: a varint, a fixed64, a string and a group
    if draw(st.booleans()):
        payload += (b"\xa8\x06\x01" + b"\xb1\x06" + bytes(8) + b"\xba\x06\x02hi"
                    + b"\xc3\x06\xc4\x06")
    return payload


def _length_delimited(number: int, body: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(body)) + body


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@st.composite
def _request(draw: st.DrawFn) -> bytes:
    request = bytearray()
    for _ in range(draw(st.integers(1, 2))):
        resource = ExportTraceServiceRequest().resource_spans.add()
        resource.resource.attributes.extend(draw(_ATTRIBUTES))
        resource.resource.dropped_attributes_count = draw(st.integers(0, 3))
        resource.schema_url = draw(_TEXT)
        body = bytearray(resource.SerializeToString())
        for _ in range(draw(st.integers(0, 2))):
            scope = bytearray()
            scope_fields = ExportTraceServiceRequest().resource_spans.add().scope_spans.add()
            scope_fields.scope.name = draw(_TEXT)
            scope_fields.scope.version = draw(_TEXT)
            scope_fields.scope.attributes.extend(draw(_ATTRIBUTES))
            scope_fields.schema_url = draw(_TEXT)
            scope += scope_fields.SerializeToString()
            for span in draw(st.lists(_span(), max_size=4)):
                scope += _length_delimited(2, span)
            body += _length_delimited(2, bytes(scope))
        if draw(st.booleans()):  # a second part of the resource, merged into the first
            more = ExportTraceServiceRequest().resource_spans.add()
            more.resource.attributes.extend(draw(_ATTRIBUTES))
            body += more.SerializeToString()
        request += _length_delimited(1, bytes(body))
    return bytes(request)


def _same_rows(python: pa.Table, compiled: pa.Table) -> None:
    assert python.schema == compiled.schema
    for name in python.schema.names:
        left, right = python[name].to_pylist(), compiled[name].to_pylist()
        assert left == right or _same_floats(left, right), name


def _same_floats(left: list[object], right: list[object]) -> bool:
    return all(a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                          and math.isnan(b)) for a, b in zip(left, right, strict=True))


def _valid_json(rows: pa.Table) -> None:
    """Every JSON column holds valid JSON: the store takes them typed as JSON, unchecked
    (collector.insert.as_json), so an encoder bug would be stored silently."""
    columns = insert_statement("traces").json_columns
    assert columns
    connection = duckdb.connect()
    try:
        connection.register("decoded", rows.select(list(columns)))
        checks = ", ".join(f'bool_and(json_valid("{name}") OR "{name}" IS NULL)'
                           for name in columns)
        valid = connection.execute(f"SELECT {checks} FROM decoded").fetchone()  # noqa: S608
        assert valid is not None and all(flag in (True, None) for flag in valid), valid
    finally:
        connection.close()


def _both_checks(payload: bytes) -> tuple[object, object]:
    results: list[object] = []
    for compiled in (False, True):
        try:
            results.append(check_request("traces", payload, compiled=compiled))
        except InvalidRequest:
            results.append("invalid")
    return results[0], results[1]


@_PROPERTY
@given(_request())
def test_compiled_rows_equal_python_rows(payload: bytes) -> None:
    python = decode_traces(payload, 1_700_000_000_000_000_000, compiled=False)
    compiled = decode_traces(payload, 1_700_000_000_000_000_000, compiled=True)
    _same_rows(python.rows, compiled.rows)
    _valid_json(compiled.rows)
    assert (python.received, python.rejected, python.problems, python.payload_bytes) == (
        compiled.received, compiled.rejected, compiled.problems, compiled.payload_bytes)
    assert check_request("traces", payload, compiled=True) == check_request(
        "traces", payload, compiled=False)
    chunks = list(decode_chunks("traces", payload, 7, 2, compiled=True))
    assert all(chunk.rows.num_rows <= 2 for chunk in chunks)
    assert sum(chunk.received for chunk in chunks) == python.received
    assert sum(chunk.rejected for chunk in chunks) == python.rejected
    assert pa.concat_tables(chunk.rows for chunk in chunks).drop_columns(
        ["received_unix_nano"]).equals(compiled.rows.drop_columns(["received_unix_nano"]))


@_PROPERTY
@given(_request(), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)),
                            min_size=1, max_size=3),
       st.integers(0, 10_000))
def test_corrupted_requests_are_refused_alike(payload: bytes, flips: list[tuple[int, int]],
                                              cut: int) -> None:
    corrupted = bytearray(payload)
    for offset, byte in flips:
        corrupted[offset % len(corrupted)] = byte
    data = bytes(corrupted[:max(1, len(corrupted) - cut % 4)])
    python, compiled = _both_checks(data)
    assert python == compiled
    if python != "invalid":
        _same_rows(decode_traces(data, 1, compiled=False).rows,
                   decode_traces(data, 1, compiled=True).rows)


def test_depth_limit_matches_the_protobuf_parser() -> None:
    for depth in (46, 47, 48, 49):
        value = AnyValue(string_value="leaf")
        for _ in range(depth):
            value = _array([value])
        request = ExportTraceServiceRequest()
        span = request.resource_spans.add().scope_spans.add().spans.add(
            trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
        span.attributes.append(KeyValue(key="deep", value=value))
        payload = request.SerializeToString()
        python, compiled = _both_checks(payload)
        assert python == compiled, depth


def test_malformed_bytes_name_the_fault() -> None:
    with pytest.raises(InvalidRequest, match="not a valid protobuf ExportTraceServiceRequest"):
        check_request("traces", b"\x0a\xff\xff\xff\xff\x0f", compiled=True)
    bad_utf8 = _length_delimited(1, _length_delimited(3, b"\xc3\x28"))
    with pytest.raises(InvalidRequest, match="invalid UTF-8"):
        check_request("traces", bad_utf8, compiled=True)


def _kv(key: str, value: AnyValue) -> KeyValue:
    return KeyValue(key=key, value=value)


@pytest.mark.parametrize("attributes", [
    [_kv("gen_ai.usage.input_tokens", AnyValue(string_value=" 12 ")),
     _kv("gen_ai.usage.output_tokens", AnyValue(string_value="1_000"))],
    [_kv("llm.token_count.prompt", AnyValue(double_value=2.0)),
     _kv("gen_ai.usage.completion_tokens", AnyValue(double_value=2.5))],
    [_kv("gen_ai.usage.input_tokens", AnyValue(string_value="99999999999999999999")),
     _kv("gen_ai.usage.output_tokens", AnyValue(double_value=1e300))],
    [_kv("gen_ai.usage.input_tokens", AnyValue(bool_value=True)),
     _kv("llm.token_count.prompt", AnyValue(int_value=7))],
    [_kv("gen_ai.operation.name", AnyValue(string_value="İNVOKE_Agent")),
     _kv("gen_ai.request.model", AnyValue()),
     _kv("llm.request.model", AnyValue(double_value=1e16))],
    [_kv("llm.invocation_parameters", AnyValue(string_value='{"model": "gpt-x"}')),
     _kv("openinference.span.kind", AnyValue(string_value="LLM"))],
    [_kv("gen_ai.request.model", _kvlist([("a", AnyValue(string_value="x"))])),
     _kv("llm.invocation_parameters", AnyValue(string_value='{"model": "gpt-x"}'))],
    [_kv("error.type", AnyValue(int_value=500)), _kv("session.id", AnyValue(bool_value=False))],
    [_kv("k", AnyValue(string_value="first")), _kv("k2", AnyValue(int_value=1)),
     _kv("k", AnyValue(double_value=math.nan))],
    [_kv("tag", _kvlist([("bytesValue", AnyValue(string_value="x"))])),
     _kv("twice", _kvlist([("a", AnyValue(int_value=1)), ("a", AnyValue()),
                           ("b", _array([AnyValue(bytes_value=b"\xff\x00")]))])),
     _kv("floats", _array([AnyValue(double_value=v) for v in (1e-7, 1.5e-5, -0.0, math.inf)]))],
])
def test_promoted_columns_agree_on_awkward_values(attributes: list[KeyValue]) -> None:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.extend([_kv("service.name", AnyValue(int_value=3)),
                                         _kv("conversation.id", AnyValue(string_value="c-9"))])
    span = resource.scope_spans.add().spans.add(trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
    span.attributes.extend(attributes)
    span.events.add(name="exception")  # no exception.type: the next exception event counts
    span.events.add(name="exception").attributes.append(
        _kv("exception.type", AnyValue(string_value="ValueError")))
    payload = request.SerializeToString()
    python = decode_traces(payload, 1, compiled=False).rows
    compiled = decode_traces(payload, 1, compiled=True).rows
    _same_rows(python, compiled)
    assert compiled.num_rows == 1


def test_chunks_end_at_the_byte_limit_and_add_up() -> None:
    """A few huge spans make a chunk long before it has max_rows rows."""
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for index in range(6):
        span = scope.spans.add(trace_id=b"\x01" * 15 + bytes([index + 1]), span_id=b"\x02" * 8)
        span.attributes.append(_kv("big", AnyValue(string_value="x" * 100_000)))
    payload = request.SerializeToString()
    whole = decode_traces(payload, 1, compiled=True)
    chunks = list(native.trace_chunks(
        payload, 1, schema=whole.rows.schema, promoted=_promoted(), invocation_model=str,
        max_rows=1000, max_bytes=250_000))
    assert [chunk.rows.num_rows for chunk in chunks] == [3, 3, 0]
    assert pa.concat_tables(chunk.rows for chunk in chunks).equals(whole.rows)
    assert sum(chunk.payload_bytes for chunk in chunks) == len(payload)


def _promoted() -> tuple[tuple[str, ...], ...]:
    return tuple(PROMOTED_SOURCES.values())  # the decoder's own table, not a copy
