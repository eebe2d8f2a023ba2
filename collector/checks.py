"""What makes an export request or one of its items unusable, found before acknowledging it.

:func:`check_request` parses a request and checks every item (ids; for spans also a kind
and status code the columns can hold) without decoding attributes; the decoders in
:mod:`collector.decode` apply the same checks item by item, so what the intake answers as
rejected in ``partial_success`` is exactly what is never stored.
"""

from __future__ import annotations

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


def check_request(signal: Signal, payload: bytes, *,
                  compiled: bool = native.AVAILABLE) -> RequestCheck:
    """Parse a request and check every item (see :func:`check_span`), without decoding
    attributes.

    The decoders apply the same checks, so what is acknowledged as rejected here is
    exactly what they leave out. Raises InvalidRequest for bytes that do not parse. The
    compiled check builds nothing, so its memory does not grow with the request.
    """
    received = rejected = 0
    problems: list[str] = []
    if signal == "traces" and compiled:
        try:
            return RequestCheck(*native.check_traces(payload))
        except native.MalformedRequest as exc:
            raise InvalidRequest(not_traces(str(exc))) from None
    if signal == "traces":
        traces = parse_traces(payload)
        for r_index, resource_spans in enumerate(traces.resource_spans):
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
        logs = parse_logs(payload)
        for r_index, resource_logs in enumerate(logs.resource_logs):
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
    """The request parsed whole; InvalidRequest naming the fault when it does not parse."""
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
    """The request parsed whole; InvalidRequest naming the fault when it does not parse."""
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(payload)
    except DecodeError as exc:
        raise InvalidRequest(
            f"the body is not a valid protobuf ExportLogsServiceRequest ({exc}); send "
            "OTLP protobuf, or OTLP/JSON with Content-Type: application/json"
        ) from None
    return request


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


