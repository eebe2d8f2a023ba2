"""Export requests read item by item, without building the whole request.

``ParseFromString`` builds every item of a request at once (~200 bytes a span: 320 MB for
the 1.6M minimal spans one legal 64 MiB request holds), and the decoder's Python objects
multiply that. :func:`read_request` walks the three outer levels (request → resource →
scope → item) of the wire format instead and parses each item, and each level's other
fields, on its own, so memory grows with one item. It accepts and refuses exactly the
bytes ``ParseFromString`` does: the walk follows the parser's wire rules (as
collector/_fastdecode.c does), and every part is parsed inside an envelope of the levels
above it, so the parser's nesting limit (100 levels, counted from the request) applies to
it as in a whole parse. :func:`parse_request` is the whole parse, for comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.errors import InvalidRequest
from collector.spool import Signal

__all__ = ["ItemByItem", "not_a_request", "parse_request", "read_request", "varint_bytes"]

_REQUESTS: dict[Signal, type[ExportTraceServiceRequest] | type[ExportLogsServiceRequest]] = {
    "traces": ExportTraceServiceRequest, "logs": ExportLogsServiceRequest}


def not_a_request(signal: Signal, reason: str) -> str:
    """The message for bytes that are not an Export*ServiceRequest, and what to send."""
    return (f"the body is not a valid protobuf {_REQUESTS[signal].__name__} ({reason}); "
            "send OTLP protobuf, or OTLP/JSON with Content-Type: application/json")


def parse_request(signal: Signal, payload: bytes) -> Any:
    """The request parsed whole (memory grows with it: :func:`read_request` does not);
    InvalidRequest naming the fault when it does not parse."""
    try:
        return _REQUESTS[signal].FromString(payload)
    except DecodeError as exc:
        raise InvalidRequest(not_a_request(signal, str(exc))) from None


def read_request(signal: Signal, payload: bytes) -> ItemByItem:
    """The request of ``signal`` whose spans or log records are parsed one at a time."""
    return ItemByItem(_KINDS[signal], payload)


def varint_bytes(value: int) -> bytes:
    """``value`` as a protobuf varint (a length prefix, a count)."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_MAX_LEVEL = 100
"""The deepest message level the protobuf parser accepts (the request is level 0)."""
_U64 = 2**64 - 1


class _Malformed(ValueError):
    """The bytes break a wire rule (the message says which)."""


def _varint(data: memoryview, offset: int) -> tuple[int, int]:
    if offset < len(data) and data[offset] < 0x80:
        return data[offset], offset + 1
    value = 0
    for shift in range(0, 70, 7):
        if offset >= len(data):
            raise _Malformed("a varint runs past the end of its message")
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & _U64, offset
    raise _Malformed("a varint is longer than 10 bytes")


def _field_end(data: memoryview, offset: int, key: int, level: int) -> tuple[int, int]:
    """(start of the value, end of the field) of the field whose key ends at ``offset``,
    in a message at ``level``."""
    if key > 0xFFFFFFFF:
        raise _Malformed("a field key is out of range")
    if key >> 3 == 0:
        raise _Malformed("a field has number 0")
    kind = key & 7
    if kind == 2:
        length, offset = _varint(data, offset)
        if length > len(data) - offset:
            raise _Malformed("a length-delimited field runs past the end of its message")
        return offset, offset + length
    if kind == 0:
        return offset, _varint(data, offset)[1]
    if kind in (1, 5):
        end = offset + (8 if kind == 1 else 4)
        if end > len(data):
            raise _Malformed("a fixed-size field runs past the end of its message")
        return offset, end
    if kind == 3:
        return offset, _skip_group(data, offset, key >> 3, level + 1)
    if kind == 4:
        raise _Malformed("a group ends that was never started")
    raise _Malformed("a field has an invalid wire type")


def _skip_group(data: memoryview, offset: int, number: int, level: int) -> int:
    """The end of a group (nested ones too, without recursion) starting at ``level``."""
    open_groups = [number]
    while True:
        if level + len(open_groups) - 1 > _MAX_LEVEL:
            raise _Malformed("the message is nested too deeply")
        if offset >= len(data):
            raise _Malformed("a group is not ended")
        key, offset = _varint(data, offset)
        if key & 7 == 4:
            if key >> 3 != open_groups[-1]:
                raise _Malformed("a group ends with another group's number")
            open_groups.pop()
            if not open_groups:
                return offset
        elif key & 7 == 3 and key >> 3 > 0 and key <= 0xFFFFFFFF:
            open_groups.append(key >> 3)
        else:
            offset = _field_end(data, offset, key, level + len(open_groups) - 1)[1]


def _fields(data: memoryview, level: int) -> Iterator[tuple[int, int, int, int]]:
    """(key, start of the field, start of its value, end) of each field of a message."""
    offset = 0
    size = len(data)
    while offset < size:
        start = offset
        key, offset = _varint(data, offset)
        value, offset = _field_end(data, offset, key, level)
        yield key, start, value, offset


_ITEM_KEY = 2 << 3 | 2
"""Resources (field 1 of the request), scopes and items (field 2 of the levels below) are
length-delimited fields."""
_RESOURCE_KEY = 1 << 3 | 2
_BATCH_ITEMS = 512
_BATCH_BYTES = 256 * 1024
"""Items are parsed in batches of at most about this many (a fixed cost per parse, a
bounded memory per batch)."""


@dataclass(frozen=True)
class _Kind:
    """How one signal's requests are read."""

    request: type[ExportTraceServiceRequest] | type[ExportLogsServiceRequest]
    levels: tuple[str, str, str]
    """The repeated fields from the request down to the items."""
    explain: Callable[[str], str]
    """The InvalidRequest message for a fault."""


class _Level:
    """A message at ``level`` of a request (0: the request) whose items (field 1 of the
    request, field 2 below) are read one at a time and whose other fields are parsed
    together (:meth:`_shell`)."""

    def __init__(self, kind: _Kind, data: memoryview, level: int) -> None:
        self._kind = kind
        self._data = data
        self._level = level
        self._item = _RESOURCE_KEY if level == 0 else _ITEM_KEY

    def _parse(self, parts: list[memoryview], level: int) -> Any:
        """``parts`` (the bytes of one message at ``level``) parsed inside a request that
        holds it at that level, so nesting counts as in a whole parse."""
        size = sum(len(part) for part in parts)
        headers: list[bytes] = []
        for key in (_ITEM_KEY, _ITEM_KEY, _RESOURCE_KEY)[3 - level:]:
            header = bytes((key,)) + varint_bytes(size)
            headers.append(header)
            size += len(header)
        try:
            parsed: Any = self._kind.request.FromString(b"".join([*reversed(headers), *parts]))
        except DecodeError as exc:
            raise InvalidRequest(self._kind.explain(str(exc))) from None
        for name in self._kind.levels[:level]:  # the one resource, scope or item in it
            parsed = getattr(parsed, name)[0]
        return parsed

    def _shell(self) -> Any:
        """The message without its items: every other field, parsed together, so
        protobuf's rules (the last value wins, parts of a message merge) apply."""
        return self._parse([self._data[start:end] for key, start, _, end in self._fields()
                            if key != self._item], self._level)

    def _items(self) -> Iterator[memoryview]:
        for key, _, value, end in self._fields():
            if key == self._item:
                yield self._data[value:end]

    def _fields(self) -> Iterator[tuple[int, int, int, int]]:
        try:
            yield from _fields(self._data, self._level)
        except _Malformed as exc:
            raise InvalidRequest(self._kind.explain(str(exc))) from None


class _Scope(_Level):
    """A ScopeSpans or ScopeLogs whose items are parsed a batch at a time."""

    def __init__(self, kind: _Kind, data: memoryview) -> None:
        super().__init__(kind, data, 2)
        # one walk finds the other fields and where batches of items start and end
        rest: list[memoryview] = []
        self._batches: list[tuple[int, int]] = []
        first = last = count = 0
        for key, start, _, end in self._fields():
            if key != _ITEM_KEY:
                rest.append(data[start:end])
                continue
            if not count:
                first = start
            count += 1
            last = end
            if count == _BATCH_ITEMS or last - first >= _BATCH_BYTES:
                self._batches.append((first, last))
                count = 0
        if count:
            self._batches.append((first, last))
        shell = self._parse(rest, 2)
        self.scope = shell.scope
        """The instrumentation scope."""
        self.schema_url: str = shell.schema_url
        """The scope's schema URL."""

    @property
    def items(self) -> Iterator[Any]:
        """The spans or log records, parsed as they are read."""
        for first, last in self._batches:
            # the bytes from a batch's first item to its last, other fields between them
            # too: they are parsed (and refused) with the shell as well and add no item
            yield from getattr(self._parse([self._data[first:last]], 2), self._kind.levels[2])

    spans = log_records = items  # the names of the parsed messages' fields


class _Resource(_Level):
    """A ResourceSpans or ResourceLogs whose scopes are read one at a time."""

    def __init__(self, kind: _Kind, data: memoryview) -> None:
        super().__init__(kind, data, 1)
        shell = self._shell()
        self.resource = shell.resource
        """The resource."""
        self.schema_url: str = shell.schema_url
        """The resource's schema URL."""

    @property
    def scopes(self) -> Iterator[_Scope]:
        """The scopes of spans or log records."""
        for item in self._items():
            yield _Scope(self._kind, item)

    scope_spans = scope_logs = scopes  # the names of the parsed messages' fields


class ItemByItem(_Level):
    """An Export*ServiceRequest read resource by resource, item by item.

    Iterating it raises InvalidRequest, where it comes to the fault, for every request
    ``ParseFromString`` refuses (the request's own other fields are parsed at the end).
    """

    def __init__(self, kind: _Kind, payload: bytes) -> None:
        super().__init__(kind, memoryview(payload), 0)

    @property
    def resources(self) -> Iterator[_Resource]:
        """The resources of spans or log records."""
        for item in self._items():
            yield _Resource(self._kind, item)
        self._shell()

    resource_spans = resource_logs = resources  # the names of the parsed messages' fields


def _kind(signal: Signal, levels: tuple[str, str, str]) -> _Kind:
    return _Kind(_REQUESTS[signal], levels, lambda reason: not_a_request(signal, reason))


_KINDS: dict[Signal, _Kind] = {
    "traces": _kind("traces", ("resource_spans", "scope_spans", "spans")),
    "logs": _kind("logs", ("resource_logs", "scope_logs", "log_records")),
}
