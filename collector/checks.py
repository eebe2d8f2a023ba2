"""What makes an export request or one of its items unusable, found before acknowledging it.

:func:`check_request` parses a request and checks every item (ids; for spans also a kind
and status code the columns can hold) without decoding attributes; the decoders in
:mod:`collector.decode` apply the same checks item by item, so what the intake answers as
rejected in ``partial_success`` is exactly what is never stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector import native
from collector.errors import InvalidRequest

Signal = Literal["traces", "logs"]
"""Which kind of export: ``traces`` (spans) or ``logs`` (log records)."""
MAX_EXPLAINED = 10
"""Rejected items explained one by one in partial_success; the rest are counted."""

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)
_UINT8_MAX = 255


@dataclass(frozen=True)
class RequestCheck:
    """What a request holds, found before acknowledging it."""

    received: int
    """Items in the request."""
    rejected: int
    """Items that will not be stored (bad ids, kinds or status codes), explained in
    ``problems``."""
    problems: tuple[str, ...]
    """The first MAX_EXPLAINED reasons, each naming the item."""

    def rejection_message(self) -> str:
        """The ``partial_success.error_message`` ('' when nothing was refused)."""
        return rejection_message(self.received, self.rejected, self.problems)

    def plus(self, other: RequestCheck) -> RequestCheck:
        """Both checks of one request (items refused before it was encoded, then the rest)."""
        return RequestCheck(self.received + other.received, self.rejected + other.rejected,
                            (self.problems + other.problems)[:MAX_EXPLAINED])


NOTHING_REFUSED = RequestCheck(0, 0, ())
"""No item left out before the request reached the intake."""

REFUSED_FIELD = 2**29 - 1
"""The field number (the largest protobuf allows) of the varint a transport puts at the
very start of a request it encoded, counting the items it left out (OTLP/JSON ids of the
wrong type, unknown enum names): the request carries them into the spool, so the decoder
counts them as received and rejected where the store counts rejections
(``collector_commits``), as the intake did in ``/metrics``. Protobuf parsers skip it as
an unknown field; anywhere but the start it counts nothing (a client may send one)."""
_REFUSED_KEY = bytes((0xF8, 0xFF, 0xFF, 0xFF, 0x0F))  # varint of REFUSED_FIELD << 3 | 0
_MAX_REFUSED = 2**26
"""More left-out items than a 64 MiB body can hold: such a count is not ours, ignored."""


def mark_refused(payload: bytes, count: int) -> bytes:
    """``payload`` carrying the count of items left out before it was encoded."""
    if count <= 0:
        return payload
    return _REFUSED_KEY + _varint_bytes(count) + payload


def without_refused(payload: bytes) -> bytes:
    """``payload`` without a leading count of left-out items: a client's bytes may not
    carry one (only :func:`mark_refused` on a request the collector encoded itself)."""
    if not refused_before(payload):
        return payload
    end = len(_REFUSED_KEY)
    while payload[end] >= 0x80:
        end += 1
    return payload[end + 1:]


def refused_before(payload: bytes) -> int:
    """The items left out before ``payload`` was encoded (see :data:`REFUSED_FIELD`)."""
    if not payload.startswith(_REFUSED_KEY):
        return 0
    count = shift = 0
    for byte in payload[len(_REFUSED_KEY):len(_REFUSED_KEY) + 4]:
        count |= (byte & 0x7F) << shift
        if byte < 0x80:
            return count if count < _MAX_REFUSED else 0
        shift += 7
    return 0


def check_request(signal: Signal, payload: bytes, *,
                  compiled: bool = native.AVAILABLE) -> RequestCheck:
    """Parse a request and check every item (see :func:`check_span`), without decoding
    attributes.

    The decoders apply the same checks, so what is acknowledged as rejected here is
    exactly what they leave out. Raises InvalidRequest for bytes that do not parse. The
    compiled check builds nothing and the pure-Python one parses one item at a time
    (:func:`read_traces`), so neither's memory grows with the number of items.
    """
    received = rejected = 0
    problems: list[str] = []
    if signal == "traces" and compiled:
        try:
            return RequestCheck(*native.check_traces(payload))
        except native.MalformedRequest as exc:
            raise InvalidRequest(not_traces(str(exc))) from None
    if signal == "traces":
        for r_index, resource_spans in enumerate(read_traces(payload).resource_spans):
            for s_index, scope_spans in enumerate(resource_spans.scope_spans):
                for i_index, span in enumerate(scope_spans.spans):
                    received += 1
                    problem = check_span(span)
                    if problem:
                        rejected += 1
                        if len(problems) < MAX_EXPLAINED:
                            problems.append(span_problem(span.name, r_index, s_index,
                                                          i_index, problem))
    else:
        for r_index, resource_logs in enumerate(read_logs(payload).resource_logs):
            for s_index, scope_logs in enumerate(resource_logs.scope_logs):
                for i_index, record in enumerate(scope_logs.log_records):
                    received += 1
                    problem = check_log_ids(record.trace_id, record.span_id)
                    if problem:
                        rejected += 1
                        if len(problems) < MAX_EXPLAINED:
                            problems.append(log_problem(r_index, s_index, i_index, problem))
    return RequestCheck(received, rejected, tuple(problems))


def parse_traces(payload: bytes) -> ExportTraceServiceRequest:
    """The request parsed whole (memory grows with it: :func:`read_traces` does not);
    InvalidRequest naming the fault when it does not parse."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(payload)
    except DecodeError as exc:
        raise InvalidRequest(not_traces(str(exc))) from None
    return request


def not_traces(reason: str) -> str:
    """The message for bytes that are not an ExportTraceServiceRequest, and what to send."""
    return (f"the body is not a valid protobuf ExportTraceServiceRequest ({reason}); send "
            "OTLP protobuf, or OTLP/JSON with Content-Type: application/json")


def parse_logs(payload: bytes) -> ExportLogsServiceRequest:
    """The request parsed whole (memory grows with it: :func:`read_logs` does not);
    InvalidRequest naming the fault when it does not parse."""
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(payload)
    except DecodeError as exc:
        raise InvalidRequest(not_logs(str(exc))) from None
    return request


def not_logs(reason: str) -> str:
    """The message for bytes that are not an ExportLogsServiceRequest, and what to send."""
    return (f"the body is not a valid protobuf ExportLogsServiceRequest ({reason}); send "
            "OTLP protobuf, or OTLP/JSON with Content-Type: application/json")


def span_problem(name: str, r_index: int, s_index: int, i_index: int, problem: str) -> str:
    """How a rejected span is named in ``partial_success``."""
    return f"span {name!r} (resource {r_index}, scope {s_index}, span {i_index}): {problem}"


def log_problem(r_index: int, s_index: int, i_index: int, problem: str) -> str:
    """How a rejected log record is named in ``partial_success``."""
    return f"log record (resource {r_index}, scope {s_index}, record {i_index}): {problem}"


def check_log_ids(trace_id: bytes, span_id: bytes) -> str | None:
    """Why a log record's optional trace and span ids are unusable (None: they are fine)."""
    if trace_id and len(trace_id) != 16:
        return f"trace_id has {len(trace_id)} bytes, expected 16 or none"
    if span_id and len(span_id) != 8:
        return f"span_id has {len(span_id)} bytes, expected 8 or none"
    return None


def rejection_message(received: int, rejected: int, problems: tuple[str, ...]) -> str:
    """The ``partial_success.error_message`` of a request ('' when nothing was refused)."""
    if not rejected:
        return ""
    more = rejected - len(problems)
    text = "; ".join(problems)
    if more > 0:
        text += f"; and {more} more"
    return f"{rejected} of {received} rejected: {text}"


def check_span(span: Any) -> str | None:
    """Why a span cannot be stored (None: it can): its ids, or a kind or status code the
    UTINYINT columns cannot hold (the compiled check_span's rule, word for word)."""
    problem = check_span_ids(span.trace_id, span.span_id, span.parent_span_id)
    if problem:
        return problem
    if not 0 <= span.kind <= _UINT8_MAX:
        return f"kind {span.kind} is outside 0-255 (OTLP SpanKind is 0-5)"
    code = span.status.code
    if not 0 <= code <= _UINT8_MAX:
        return f"status.code {code} is outside 0-255 (OTLP StatusCode is 0-2)"
    return None


def check_span_ids(trace_id: bytes, span_id: bytes, parent: bytes) -> str | None:
    """Why a span's ids cannot identify it (None: they can)."""
    if not trace_id:
        return "trace_id is missing (or, in OTLP/JSON, not a hex string)"
    if len(trace_id) != 16:
        return f"trace_id has {len(trace_id)} bytes, expected 16"
    if trace_id == _ZERO_TRACE:
        return "trace_id is all zeros"
    if not span_id:
        return "span_id is missing (or, in OTLP/JSON, not a hex string)"
    if len(span_id) != 8:
        return f"span_id has {len(span_id)} bytes, expected 8"
    if span_id == _ZERO_SPAN:
        return "span_id is all zeros"
    if parent and len(parent) != 8:
        return f"parent_span_id has {len(parent)} bytes, expected 8 or none"
    return None




# ------------------------------------------------------------------ item by item
#
# ``ParseFromString`` builds every item of a request at once (~200 bytes a span: 320 MB
# for the 1.6M minimal spans one legal 64 MiB request holds), and the decoder's Python
# objects multiply that. :func:`read_traces` and :func:`read_logs` walk the three outer
# levels (request → resource → scope → item) of the wire format instead and parse each
# item, and each level's other fields, on its own, so memory grows with one item. They
# accept and refuse exactly the bytes ``ParseFromString`` does: the walk follows the
# parser's wire rules (as collector/_fastdecode.c does), and every part is parsed inside
# an envelope of the levels above it, so the parser's nesting limit (100 levels, counted
# from the request) applies to it as in a whole parse.

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


def _varint_bytes(value: int) -> bytes:
    """``value`` as a protobuf varint (a length prefix, a count)."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


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
            header = bytes((key,)) + _varint_bytes(size)
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

    def _parsed(self) -> Iterator[Any]:
        for first, last in self._batches:
            # the bytes from a batch's first item to its last, other fields between them
            # too: they are parsed (and refused) with the shell as well and add no item
            yield from getattr(self._parse([self._data[first:last]], 2), self._kind.levels[2])

    @property
    def spans(self) -> Iterator[Any]:
        """The spans, parsed as they are read."""
        return self._parsed()

    @property
    def log_records(self) -> Iterator[Any]:
        """The log records, parsed as they are read."""
        return self._parsed()


class _Resource(_Level):
    """A ResourceSpans or ResourceLogs whose scopes are read one at a time."""

    def __init__(self, kind: _Kind, data: memoryview) -> None:
        super().__init__(kind, data, 1)
        shell = self._shell()
        self.resource = shell.resource
        """The resource."""
        self.schema_url: str = shell.schema_url
        """The resource's schema URL."""

    def _scopes(self) -> Iterator[_Scope]:
        for item in self._items():
            yield _Scope(self._kind, item)

    @property
    def scope_spans(self) -> Iterator[_Scope]:
        """The scopes of spans."""
        return self._scopes()

    @property
    def scope_logs(self) -> Iterator[_Scope]:
        """The scopes of log records."""
        return self._scopes()


class ItemByItem(_Level):
    """An Export*ServiceRequest read resource by resource, item by item.

    Iterating it raises InvalidRequest, where it comes to the fault, for every request
    ``ParseFromString`` refuses (the request's own other fields are parsed at the end).
    """

    def __init__(self, kind: _Kind, payload: bytes) -> None:
        super().__init__(kind, memoryview(payload), 0)

    def _resources(self) -> Iterator[_Resource]:
        for item in self._items():
            yield _Resource(self._kind, item)
        self._shell()

    @property
    def resource_spans(self) -> Iterator[_Resource]:
        """The resources of spans."""
        return self._resources()

    @property
    def resource_logs(self) -> Iterator[_Resource]:
        """The resources of log records."""
        return self._resources()


_TRACES = _Kind(ExportTraceServiceRequest, ("resource_spans", "scope_spans", "spans"),
                not_traces)
_LOGS = _Kind(ExportLogsServiceRequest, ("resource_logs", "scope_logs", "log_records"),
              not_logs)


def read_traces(payload: bytes) -> ItemByItem:
    """An ExportTraceServiceRequest whose spans are parsed one at a time."""
    return ItemByItem(_TRACES, payload)


def read_logs(payload: bytes) -> ItemByItem:
    """An ExportLogsServiceRequest whose log records are parsed one at a time."""
    return ItemByItem(_LOGS, payload)
