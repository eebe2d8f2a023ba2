"""Export requests read item by item from the protobuf wire format, in bounded memory.

``ExportTraceServiceRequest.ParseFromString`` builds every span of a request at once:
about 200 bytes each, 320 MB for the 1.6M minimal spans one legal 64 MiB request holds.
:func:`stream_traces` and :func:`stream_logs` give the decoder the same shape (resource
→ scope → items, with ``.resource``, ``.scope`` and ``.schema_url`` as parsed messages)
while parsing one span or log record at a time from slices of the payload.

Each level is split in two: the item field (``scope_spans``, ``spans``, ...) is walked
lazily, and every other field is parsed together from the bytes that remain, so protobuf's
own rules (the last value wins, unknown fields are kept) apply as in a whole parse. Only
requests the intake already parsed whole reach this module, so a malformed payload is an
error here, never a request to explain.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from google.protobuf.message import Message
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

_LEN = 2
_START_GROUP = 3
_END_GROUP = 4
_SKIP = {0: None, 1: 8, 5: 4}  # varint, fixed64, fixed32: their sizes (None: a varint)
_M = TypeVar("_M", bound=Message)


class WireError(ValueError):
    """The payload is not the protobuf the intake accepted (it was checked before)."""


def _varint(data: memoryview, offset: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if offset >= len(data):
            raise WireError("truncated varint")
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, offset
        shift += 7


def _fields(data: memoryview) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, start of the field, start of its value, end) of each field."""
    offset = 0
    while offset < len(data):
        start = offset
        key, offset = _varint(data, offset)
        number, kind = key >> 3, key & 7
        if kind == _LEN:
            length, offset = _varint(data, offset)
            end = offset + length
        else:
            end = _skip(data, offset, number, kind)
        if end > len(data):
            raise WireError("a field runs past the end of its message")
        yield number, kind, start, offset, end
        offset = end


def _skip(data: memoryview, offset: int, number: int, kind: int) -> int:
    """The end of a value that is not length-delimited (a group is walked to its end)."""
    if kind in _SKIP:
        size = _SKIP[kind]
        return _varint(data, offset)[1] if size is None else offset + size
    if kind != _START_GROUP:
        raise WireError(f"wire type {kind} where a field starts")
    while True:
        key, offset = _varint(data, offset)
        inner, inner_kind = key >> 3, key & 7
        if inner_kind == _END_GROUP:
            if inner != number:
                raise WireError("a group ends with another group's number")
            return offset
        if inner_kind == _LEN:
            length, offset = _varint(data, offset)
            offset += length
        else:
            offset = _skip(data, offset, inner, inner_kind)


def _shell(message: type[_M], data: memoryview, field: int) -> _M:
    """``message`` parsed from every field of ``data`` except the items in ``field``."""
    rest = b"".join(data[start:end] for number, kind, start, _, end in _fields(data)
                    if not (number == field and kind == _LEN))
    return message.FromString(rest)


def _items(data: memoryview, field: int) -> Iterator[memoryview]:
    """The values of the repeated message ``field``, in order, without copying them."""
    for number, kind, _, value, end in _fields(data):
        if number == field and kind == _LEN:
            yield data[value:end]


class StreamedScope:
    """A ScopeSpans or ScopeLogs whose items are parsed one at a time."""

    def __init__(self, data: memoryview, shell: type[ScopeSpans] | type[ScopeLogs],
                 item: type[Span] | type[LogRecord]) -> None:
        self._data = data
        self._item = item
        parsed: ScopeSpans | ScopeLogs = _shell(shell, data, 2)
        self.scope = parsed.scope
        """The instrumentation scope."""
        self.schema_url = parsed.schema_url
        """The scope's schema URL."""

    def _parsed(self) -> Iterator[Any]:
        for value in _items(self._data, 2):
            yield self._item.FromString(value.tobytes())

    @property
    def spans(self) -> Iterator[Any]:
        """The spans, parsed as they are read."""
        return self._parsed()

    @property
    def log_records(self) -> Iterator[Any]:
        """The log records, parsed as they are read."""
        return self._parsed()


class StreamedResource:
    """A ResourceSpans or ResourceLogs whose scopes are read one at a time."""

    def __init__(self, data: memoryview, traces: bool) -> None:
        self._data = data
        self._traces = traces
        parsed: ResourceSpans | ResourceLogs = (
            _shell(ResourceSpans, data, 2) if traces else _shell(ResourceLogs, data, 2))
        self.resource = parsed.resource
        """The resource."""
        self.schema_url = parsed.schema_url
        """The resource's schema URL."""

    def _scopes(self) -> Iterator[StreamedScope]:
        for value in _items(self._data, 2):
            if self._traces:
                yield StreamedScope(value, ScopeSpans, Span)
            else:
                yield StreamedScope(value, ScopeLogs, LogRecord)

    @property
    def scope_spans(self) -> Iterator[Any]:
        """The scopes of spans."""
        return self._scopes()

    @property
    def scope_logs(self) -> Iterator[Any]:
        """The scopes of log records."""
        return self._scopes()


class StreamedRequest:
    """An Export*ServiceRequest read resource by resource."""

    def __init__(self, payload: bytes, traces: bool) -> None:
        self._data = memoryview(payload)
        self._traces = traces

    def _resources(self) -> Iterator[StreamedResource]:
        for value in _items(self._data, 1):
            yield StreamedResource(value, self._traces)

    @property
    def resource_spans(self) -> Iterator[Any]:
        """The resources of spans."""
        return self._resources()

    @property
    def resource_logs(self) -> Iterator[Any]:
        """The resources of log records."""
        return self._resources()


def stream_traces(payload: bytes) -> StreamedRequest:
    """An ExportTraceServiceRequest whose spans are parsed one at a time."""
    return StreamedRequest(payload, traces=True)


def stream_logs(payload: bytes) -> StreamedRequest:
    """An ExportLogsServiceRequest whose log records are parsed one at a time."""
    return StreamedRequest(payload, traces=False)
