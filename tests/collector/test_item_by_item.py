"""The pure-Python reader that parses a request item by item accepts, refuses and yields
exactly what a whole ``ParseFromString`` does.

``collector._item_reader.read_request`` keeps the pure-Python check and decoder
(used where the compiled decoder is not built, and for log records always) within the
memory of one item. Hypothesis builds requests (every AnyValue type, messages given in
parts that protobuf merges, unknown fields and groups, ids of every length) and random
corruptions of them; the reader must refuse the same bytes and, for the rest, give the
same resources, scopes and items, message for message, as the whole parse. Nesting is
checked at the parser's limit on every level. ``TRACEMILL_PROPERTY_EXAMPLES`` sets the
examples per property (default 40).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from collector._item_reader import parse_request, read_request
from collector.checks import check_request
from collector.decode import decode_chunks, decode_logs, decode_traces
from collector.errors import InvalidRequest
from tests.collector.test_fastdecode import (
    _ATTRIBUTES,
    _ID8,
    _ID16,
    _TEXT,
    _VALUES,
    _array,
    _length_delimited,
    _request,
    _varint,
)

_EXAMPLES = int(os.environ.get("TRACEMILL_PROPERTY_EXAMPLES", "40"))
_PROPERTY = settings(max_examples=_EXAMPLES, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])
_UNKNOWN = b"\xa8\x06\x01" + b"\xb1\x06" + bytes(8) + b"\xba\x06\x02hi" + b"\xc3\x06\xc4\x06"
"""Unknown fields: a varint, a fixed64, a string and a group."""


def _whole(signal: str, payload: bytes) -> list[tuple[Any, ...]] | str:
    """What a whole parse gives: (resource shell, scope shell, items) per scope."""
    try:
        request = parse_request(signal, payload)  # type: ignore[arg-type]
    except InvalidRequest:
        return "invalid"
    out: list[tuple[Any, ...]] = []
    resources = request.resource_spans if signal == "traces" else request.resource_logs
    for resource in resources:
        scopes = resource.scope_spans if signal == "traces" else resource.scope_logs
        out.append((resource.resource, resource.schema_url, None, None, []))
        for scope in scopes:
            items = scope.spans if signal == "traces" else scope.log_records
            out.append((None, None, scope.scope, scope.schema_url, list(items)))
    return out


def _streamed(signal: str, payload: bytes) -> list[tuple[Any, ...]] | str:
    """The same, read item by item."""
    try:
        out: list[tuple[Any, ...]] = []
        if signal == "traces":
            for resource in read_request("traces", payload).resource_spans:
                out.append((resource.resource, resource.schema_url, None, None, []))
                for scope in resource.scope_spans:
                    out.append((None, None, scope.scope, scope.schema_url, list(scope.spans)))
        else:
            for resource in read_request("logs", payload).resource_logs:
                out.append((resource.resource, resource.schema_url, None, None, []))
                for scope in resource.scope_logs:
                    out.append((None, None, scope.scope, scope.schema_url,
                                list(scope.log_records)))
    except InvalidRequest:
        return "invalid"
    return out


def _same(signal: str, payload: bytes) -> None:
    whole, streamed = _whole(signal, payload), _streamed(signal, payload)
    assert whole == streamed
    try:
        python = check_request(signal, payload, compiled=False)  # type: ignore[arg-type]
    except InvalidRequest:
        assert whole == "invalid"
    else:
        assert whole != "invalid"
        assert python.received == sum(len(scope[4]) for scope in whole)


@st.composite
def _log_record(draw: st.DrawFn) -> bytes:
    record = LogRecord(time_unix_nano=draw(st.integers(0, 2**64 - 1)),
                       severity_number=draw(st.integers(0, 24)),  # type: ignore[arg-type]
                       severity_text=draw(_TEXT), trace_id=draw(_ID16 | st.just(b"")),
                       span_id=draw(_ID8 | st.just(b"")), flags=draw(st.integers(0, 255)),
                       event_name=draw(_TEXT))
    if draw(st.booleans()):
        record.body.CopyFrom(draw(_VALUES))
    record.attributes.extend(draw(_ATTRIBUTES))
    payload: bytes = record.SerializeToString()
    if draw(st.booleans()):  # a second part, merged into the first
        payload += LogRecord(severity_text=draw(_TEXT)).SerializeToString()
    if draw(st.booleans()):
        payload += _UNKNOWN
    return payload


@st.composite
def _log_request(draw: st.DrawFn) -> bytes:
    request = bytearray()
    for _ in range(draw(st.integers(1, 2))):
        resource = ExportLogsServiceRequest().resource_logs.add()
        resource.resource.attributes.extend(draw(_ATTRIBUTES))
        resource.schema_url = draw(_TEXT)
        body = bytearray(resource.SerializeToString())
        for _ in range(draw(st.integers(0, 2))):
            scope = ExportLogsServiceRequest().resource_logs.add().scope_logs.add()
            scope.scope.name = draw(_TEXT)
            scope.scope.attributes.extend(draw(_ATTRIBUTES))
            scope.schema_url = draw(_TEXT)
            scope_bytes = bytearray(scope.SerializeToString())
            for record in draw(st.lists(_log_record(), max_size=4)):
                scope_bytes += _length_delimited(2, record)
            if draw(st.booleans()):
                scope_bytes += _UNKNOWN
            body += _length_delimited(2, bytes(scope_bytes))
        if draw(st.booleans()):
            body += _UNKNOWN
        request += _length_delimited(1, bytes(body))
    if draw(st.booleans()):
        request += _UNKNOWN
    return bytes(request)


def _corrupt(payload: bytes, flips: list[tuple[int, int]], cut: int) -> bytes:
    corrupted = bytearray(payload)
    for offset, byte in flips:
        corrupted[offset % len(corrupted)] = byte
    return bytes(corrupted[:max(1, len(corrupted) - cut % 4)])


_FLIPS = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1,
                  max_size=3)


@_PROPERTY
@given(_request())
def test_spans_read_one_by_one_equal_the_whole_parse(payload: bytes) -> None:
    _same("traces", payload)
    whole = decode_traces(payload, 1, compiled=False)
    chunks = list(decode_chunks("traces", payload, 1, 2, compiled=False))
    assert sum(chunk.received for chunk in chunks) == whole.received
    assert [row for chunk in chunks for row in chunk.rows.to_pylist()] == whole.rows.to_pylist()


@_PROPERTY
@given(_request(), _FLIPS, st.integers(0, 10_000))
def test_corrupted_span_requests_are_refused_alike(payload: bytes, flips: list[tuple[int, int]],
                                                   cut: int) -> None:
    _same("traces", _corrupt(payload, flips, cut))


@_PROPERTY
@given(_log_request())
def test_log_records_read_one_by_one_equal_the_whole_parse(payload: bytes) -> None:
    _same("logs", payload)
    whole = decode_logs(payload, 1)
    chunks = list(decode_chunks("logs", payload, 1, 2))
    assert [row for chunk in chunks for row in chunk.rows.to_pylist()] == whole.rows.to_pylist()


@_PROPERTY
@given(_log_request(), _FLIPS, st.integers(0, 10_000))
def test_corrupted_log_requests_are_refused_alike(payload: bytes, flips: list[tuple[int, int]],
                                                  cut: int) -> None:
    _same("logs", _corrupt(payload, flips, cut))


def _nested(depth: int) -> AnyValue:
    value = AnyValue(string_value="leaf")
    for _ in range(depth):
        value = _array([value])
    return value


def _group(depth: int, number: int = 77) -> bytes:
    """An unknown field: ``depth`` groups, one inside the other."""
    return _varint(number << 3 | 3) * depth + _varint(number << 3 | 4) * depth


@pytest.mark.parametrize("where", ["resource", "scope", "span", "event"])
def test_nesting_is_limited_as_in_a_whole_parse_on_every_level(where: str) -> None:
    outcomes = set()
    for depth in range(40, 52):
        # built as bytes: protobuf's own copies would parse (and refuse) the deep value
        deep = _length_delimited(1, b"deep") + _length_delimited(
            2, _nested(depth).SerializeToString())
        ids = _length_delimited(1, b"\x01" * 16) + _length_delimited(2, b"\x02" * 8)
        span = ids + (_length_delimited(9, deep) if where == "span" else b"") + (
            _length_delimited(11, _length_delimited(3, deep)) if where == "event" else b"")
        scope = (_length_delimited(1, _length_delimited(3, deep)) if where == "scope"
                 else b"") + _length_delimited(2, span)
        resource = (_length_delimited(1, _length_delimited(1, deep)) if where == "resource"
                    else b"") + _length_delimited(2, scope)
        payload = _length_delimited(1, resource)
        _same("traces", payload)
        outcomes.add(_whole("traces", payload) == "invalid")
    assert outcomes == {False, True}  # the limit lies inside the range tried


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_nested_unknown_groups_are_limited_as_in_a_whole_parse(level: int) -> None:
    outcomes = set()
    for depth in range(95, 103):
        group = _group(depth)
        span = _length_delimited(1, b"\x01" * 16) + _length_delimited(2, b"\x02" * 8)
        span += group if level == 3 else b""
        scope = _length_delimited(2, span) + (group if level == 2 else b"")
        resource = _length_delimited(2, scope) + (group if level == 1 else b"")
        payload = _length_delimited(1, resource) + (group if level == 0 else b"")
        _same("traces", payload)
        outcomes.add(_whole("traces", payload) == "invalid")
    assert outcomes == {False, True}


@pytest.mark.parametrize("payload", [
    b"\x0a\xff\xff\xff\xff\x0f",  # a length past the end
    b"\x0a\x02\x12",  # a scope cut short
    b"\x00\x01",  # field number 0
    b"\x0f",  # wire type 7
    b"\x0c",  # a group end never started
    b"\x0b\x0a\x00",  # a group never ended
    b"\x0a" + b"\x80" * 10 + b"\x00",  # a varint of 11 bytes
    b"\xfa\xff\xff\xff\xff\x01\x00",  # a key past 32 bits
    _length_delimited(1, _length_delimited(2, _length_delimited(2, b"\x1a\x02\xc3\x28"))),
])
def test_malformed_requests_are_refused_naming_the_fault(payload: bytes) -> None:
    assert _whole("traces", payload) == "invalid"
    with pytest.raises(InvalidRequest, match="not a valid protobuf ExportTraceServiceRequest"):
        check_request("traces", payload, compiled=False)
    with pytest.raises(InvalidRequest, match="not a valid protobuf ExportTraceServiceRequest"):
        decode_traces(payload, 1, compiled=False)
    with pytest.raises(InvalidRequest, match="not a valid protobuf ExportLogsServiceRequest"):
        decode_logs(payload, 1)


def test_items_read_in_batches_with_other_fields_between_them() -> None:
    """Batches end by count and by bytes; fields between items (a scope given in parts,
    a schema URL, unknown fields) are read once, as a whole parse reads them."""
    scope = bytearray()
    for index in range(1300):
        span = (_length_delimited(1, b"\x01" * 15 + bytes([index % 251 + 1]))
                + _length_delimited(2, (index + 1).to_bytes(8, "big"))
                + _length_delimited(5, f"span {index}".encode()))
        if index % 97 == 0:  # now and then one huge span ends a batch early
            span += _length_delimited(9, _length_delimited(1, b"big") + _length_delimited(
                2, _length_delimited(1, b"x" * 200_000)))
        scope += _length_delimited(2, span)
        if index % 400 == 0:
            scope += _length_delimited(1, _length_delimited(1, f"name {index}".encode()))
            scope += _length_delimited(3, f"https://schema/{index}".encode()) + _UNKNOWN
    payload = _length_delimited(1, _length_delimited(2, bytes(scope)))
    whole = _whole("traces", payload)
    assert isinstance(whole, list) and len(whole[1][4]) == 1300
    assert whole[1][2].name == "name 1200" and whole[1][3] == "https://schema/1200"
    _same("traces", payload)
    rows = decode_traces(payload, 1, compiled=False).rows
    assert rows["name"].to_pylist() == [f"span {index}" for index in range(1300)]
