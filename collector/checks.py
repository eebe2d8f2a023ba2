"""What makes an export request or one of its items unusable, found before acknowledging it.

:func:`check_request` parses a request and checks every item (ids; for spans also a kind
and status code the columns can hold) without decoding attributes; the decoders in
:mod:`collector.decode` apply the same checks item by item, so what the intake answers as
rejected in ``partial_success`` is exactly what is never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collector import native
from collector._item_reader import not_a_request, read_request, varint_bytes
from collector.errors import InvalidRequest
from collector.spool import Signal as Signal  # the receivers and decoders import it here

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
    return _REFUSED_KEY + varint_bytes(count) + payload


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
    (:func:`collector._item_reader.read_request`), so neither's memory grows with the
    number of items.
    """
    if signal == "traces" and compiled:
        try:
            return RequestCheck(*native.check_traces(payload))
        except native.MalformedRequest as exc:
            raise InvalidRequest(not_a_request("traces", str(exc))) from None
    received = rejected = 0
    problems: list[str] = []
    for r_index, resource in enumerate(read_request(signal, payload).resources):
        for s_index, scope in enumerate(resource.scopes):
            for i_index, item in enumerate(scope.items):
                received += 1
                problem = (check_span(item) if signal == "traces"
                           else check_log_ids(item.trace_id, item.span_id))
                if problem:
                    rejected += 1
                    if len(problems) < MAX_EXPLAINED:
                        problems.append(
                            span_problem(item.name, r_index, s_index, i_index, problem)
                            if signal == "traces"
                            else log_problem(r_index, s_index, i_index, problem))
    return RequestCheck(received, rejected, tuple(problems))


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
