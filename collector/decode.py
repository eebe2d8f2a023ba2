"""Export requests to rows: pure functions from protobuf bytes to Arrow tables.

:func:`decode_traces` and :func:`decode_logs` parse one ``Export*ServiceRequest``, check
every item, and return the valid ones as an Arrow table shaped like ``otlp_spans`` /
``otlp_log_records`` together with a count and explanation of the rejected ones (which
the receivers report as ``partial_success``). They touch no database and no globals, so
they can run on any thread.

Promoted columns (first attribute present wins; span attributes before resource ones):

=================  ===========================================================================
column             sources
=================  ===========================================================================
service_name       resource ``service.name``
service_version    resource ``service.version``
operation          ``gen_ai.operation.name``; ``openinference.span.kind`` (lower case);
                   ``traceloop.span.kind``; ``llm.request.type``
conversation_id    ``gen_ai.conversation.id``, ``session.id``, ``conversation.id``, ``thread.id``
agent_name         ``gen_ai.agent.name``, ``agent.name``, ``agent_name``
agent_version      ``gen_ai.agent.version``
request_model      ``gen_ai.request.model``, ``llm.request.model``, ``model`` inside the
                   JSON of ``llm.invocation_parameters`` (OpenInference)
response_model     ``gen_ai.response.model``, ``llm.response.model``, ``llm.model_name``
                   (OpenInference records the model the response names there)
provider           ``gen_ai.provider.name``, ``gen_ai.system``, ``llm.system``, ``llm.provider``
tool_name          ``gen_ai.tool.name``, ``tool.name``
tool_call_id       ``gen_ai.tool.call.id``, ``tool_call.id``
input_tokens       ``gen_ai.usage.input_tokens``, ``llm.token_count.prompt``,
                   ``gen_ai.usage.prompt_tokens``
output_tokens      ``gen_ai.usage.output_tokens``, ``llm.token_count.completion``,
                   ``gen_ai.usage.completion_tokens``
error_type         ``error.type``; else ``exception.type`` of the first ``exception`` event
=================  ===========================================================================
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
import pyarrow as pa
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector import native
from collector.errors import InvalidRequest
from collector.values import attributes_to_json, value_to_json
from collector.wire import StreamedRequest, stream_logs, stream_traces

Signal = Literal["traces", "logs"]
MAX_EXPLAINED = 10
"""Rejected items explained one by one in partial_success; the rest are counted."""

COMPILED = native.AVAILABLE
"""Whether spans are checked and decoded by the compiled decoder (collector/native.py);
each function below takes ``compiled=`` to choose a path explicitly (the tests compare them)."""
MAX_CHUNK_BYTES = 64 * 1024 * 1024
"""About the most column bytes one chunk of the compiled decoder holds (a few huge spans
make a chunk long before it has max_rows rows)."""

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)

# Promoted columns and the attributes they are read from, best first.
_PROMOTED_SOURCES: dict[str, tuple[str, ...]] = {
    "operation": ("gen_ai.operation.name", "openinference.span.kind", "traceloop.span.kind",
                  "llm.request.type"),
    "conversation_id": ("gen_ai.conversation.id", "session.id", "conversation.id", "thread.id"),
    "agent_name": ("gen_ai.agent.name", "agent.name", "agent_name"),
    "agent_version": ("gen_ai.agent.version",),
    "request_model": ("gen_ai.request.model", "llm.request.model"),
    "response_model": ("gen_ai.response.model", "llm.response.model", "llm.model_name"),
    "provider": ("gen_ai.provider.name", "gen_ai.system", "llm.system", "llm.provider"),
    "tool_name": ("gen_ai.tool.name", "tool.name"),
    "tool_call_id": ("gen_ai.tool.call.id", "tool_call.id"),
    "input_tokens": ("gen_ai.usage.input_tokens", "llm.token_count.prompt",
                     "gen_ai.usage.prompt_tokens"),
    "output_tokens": ("gen_ai.usage.output_tokens", "llm.token_count.completion",
                      "gen_ai.usage.completion_tokens"),
    "error_type": ("error.type",),
}
_PROMOTED_NAMES = tuple(_PROMOTED_SOURCES)
_PROMOTED: dict[str, tuple[int, int]] = {
    key: (slot, rank)
    for slot, keys in enumerate(_PROMOTED_SOURCES.values())
    for rank, key in enumerate(keys)
}
_PROMOTED_KEYS = frozenset(_PROMOTED)
_CONVERSATION = _PROMOTED_NAMES.index("conversation_id")
_INPUT_TOKENS = _PROMOTED_NAMES.index("input_tokens")
_OUTPUT_TOKENS = _PROMOTED_NAMES.index("output_tokens")
_ERROR_TYPE = _PROMOTED_NAMES.index("error_type")
_OPERATION = _PROMOTED_NAMES.index("operation")
_TOKEN_SLOTS = (_INPUT_TOKENS, _OUTPUT_TOKENS)
_REQUEST_MODEL = _PROMOTED_NAMES.index("request_model")


def _invocation_model(parameters: Any) -> str | None:
    """The ``model`` in OpenInference's ``llm.invocation_parameters`` JSON, if any."""
    if not isinstance(parameters, str):
        return None
    try:
        decoded = orjson.loads(parameters)
    except orjson.JSONDecodeError:
        return None
    model = decoded.get("model") if isinstance(decoded, dict) else None
    return model if isinstance(model, str) else None

_U64 = pa.uint64()
_U32 = pa.uint32()
_U8 = pa.uint8()
_I64 = pa.int64()
_STR = pa.string()

SPAN_SCHEMA = pa.schema([
    ("tid_hi", _U64), ("tid_lo", _U64), ("sid", _U64),
    ("trace_id", _STR), ("span_id", _STR), ("parent_span_id", _STR), ("trace_state", _STR),
    ("flags", _U32), ("name", _STR), ("kind", _U8),
    ("start_time_unix_nano", _U64), ("end_time_unix_nano", _U64),
    ("status_code", _U8), ("status_message", _STR),
    ("attributes", _STR), ("dropped_attributes_count", _U32),
    ("events", _STR), ("dropped_events_count", _U32),
    ("links", _STR), ("dropped_links_count", _U32),
    ("resource_attributes", _STR), ("resource_dropped_attributes_count", _U32),
    ("resource_schema_url", _STR),
    ("scope_name", _STR), ("scope_version", _STR), ("scope_attributes", _STR),
    ("scope_dropped_attributes_count", _U32), ("scope_schema_url", _STR),
    ("service_name", _STR), ("service_version", _STR), ("operation", _STR),
    ("conversation_id", _STR), ("agent_name", _STR), ("agent_version", _STR),
    ("request_model", _STR), ("response_model", _STR), ("provider", _STR),
    ("tool_name", _STR), ("tool_call_id", _STR),
    ("input_tokens", _I64), ("output_tokens", _I64), ("error_type", _STR),
    ("received_unix_nano", _U64),
])
"""Column order and types of an otlp_spans batch."""

LOG_SCHEMA = pa.schema([
    ("key_hi", _U64), ("key_lo", _U64),
    ("time_unix_nano", _U64), ("observed_time_unix_nano", _U64),
    ("severity_number", pa.int32()), ("severity_text", _STR), ("event_name", _STR),
    ("body", _STR), ("attributes", _STR), ("dropped_attributes_count", _U32),
    ("flags", _U32), ("trace_id", _STR), ("span_id", _STR),
    ("resource_attributes", _STR), ("resource_dropped_attributes_count", _U32),
    ("resource_schema_url", _STR),
    ("scope_name", _STR), ("scope_version", _STR), ("scope_attributes", _STR),
    ("scope_dropped_attributes_count", _U32), ("scope_schema_url", _STR),
    ("service_name", _STR), ("service_version", _STR), ("conversation_id", _STR),
    ("received_unix_nano", _U64),
])
"""Column order and types of an otlp_log_records batch."""


@dataclass(frozen=True)
class DecodedBatch:
    """One export request, checked and turned into rows."""

    signal: Signal
    """Which table the rows go to: ``traces`` → otlp_spans, ``logs`` → otlp_log_records."""
    rows: pa.Table
    """The valid items, shaped like SPAN_SCHEMA or LOG_SCHEMA."""
    received: int
    """Items in the request."""
    rejected: int
    """Items refused for unusable content (not stored)."""
    problems: tuple[str, ...] = field(default=())
    """Why items were refused: the first MAX_EXPLAINED, each naming the item."""
    payload_bytes: int = 0
    """Size of the request as decoded (after decompression)."""
    received_unix_nano: int = 0
    """When the request arrived."""

    def rejection_message(self) -> str:
        """The ``partial_success.error_message`` for this request ('' when nothing was refused)."""
        return _rejection_message(self.received, self.rejected, self.problems)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if value.is_integer() else None
    elif isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            return None
    # a count beyond int64 is no count (the column is BIGINT)
    return value if isinstance(value, int) and _INT64_MIN <= value <= _INT64_MAX else None


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _promote(attrs: dict[str, Any]) -> list[Any]:
    """The promoted columns' values found in one attribute map (best source wins)."""
    values: list[Any] = [None] * len(_PROMOTED_NAMES)
    ranks = [len(_PROMOTED)] * len(_PROMOTED_NAMES)
    for key in attrs.keys() & _PROMOTED_KEYS:
        value = attrs[key]
        slot, rank = _PROMOTED[key]
        if value is not None and rank < ranks[slot]:
            values[slot] = value
            ranks[slot] = rank
    return values


def _promoted_row(attrs: dict[str, Any], resource: list[Any],
                  error_type: str | None) -> tuple[Any, ...]:
    values = _promote(attrs)
    if values[_CONVERSATION] is None:
        values[_CONVERSATION] = resource[_CONVERSATION]
    if values[_ERROR_TYPE] is None:
        values[_ERROR_TYPE] = error_type
    if values[_REQUEST_MODEL] is None and "llm.invocation_parameters" in attrs:
        values[_REQUEST_MODEL] = _invocation_model(attrs["llm.invocation_parameters"])
    for slot, value in enumerate(values):
        if value is None:
            continue
        if slot in _TOKEN_SLOTS:
            values[slot] = _integer(value)
        elif type(value) is not str:
            values[slot] = _text(value)
    operation = values[_OPERATION]
    if operation is not None:
        values[_OPERATION] = operation.lower()
    return tuple(values)


def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    if not rows:
        return schema.empty_table()
    columns = zip(*rows, strict=True)
    arrays = [pa.array(column, type=kind) for column, kind in zip(columns, schema.types,
                                                                   strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


@dataclass(frozen=True)
class RequestCheck:
    """What a request holds, found before acknowledging it."""

    received: int
    """Items in the request."""
    rejected: int
    """Items that will not be stored (bad ids), explained in ``problems``."""
    problems: tuple[str, ...]
    """The first MAX_EXPLAINED reasons, each naming the item."""

    def rejection_message(self) -> str:
        """The ``partial_success.error_message`` ('' when nothing was refused)."""
        return _rejection_message(self.received, self.rejected, self.problems)

    def plus(self, other: RequestCheck) -> RequestCheck:
        """Both checks of one request (items refused before it was encoded, then the rest)."""
        return RequestCheck(self.received + other.received, self.rejected + other.rejected,
                            (self.problems + other.problems)[:MAX_EXPLAINED])


NOTHING_REFUSED = RequestCheck(0, 0, ())
"""No item left out before the request reached the intake."""


def check_request(signal: Signal, payload: bytes, *, compiled: bool = COMPILED) -> RequestCheck:
    """Parse a request and check every item's ids, without decoding attributes.

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
            raise InvalidRequest(_not_traces(str(exc))) from None
    if signal == "traces":
        traces = _parse_traces(payload)
        for r_index, resource_spans in enumerate(traces.resource_spans):
            for s_index, scope_spans in enumerate(resource_spans.scope_spans):
                for i_index, span in enumerate(scope_spans.spans):
                    received += 1
                    problem = _check_span_ids(span.trace_id, span.span_id,
                                              span.parent_span_id)
                    if problem:
                        rejected += 1
                        if len(problems) < MAX_EXPLAINED:
                            problems.append(span_problem(span.name, r_index, s_index,
                                                          i_index, problem))
    else:
        logs = _parse_logs(payload)
        for r_index, resource_logs in enumerate(logs.resource_logs):
            for s_index, scope_logs in enumerate(resource_logs.scope_logs):
                for i_index, record in enumerate(scope_logs.log_records):
                    received += 1
                    problem = _check_log_ids(record.trace_id, record.span_id)
                    if problem:
                        rejected += 1
                        if len(problems) < MAX_EXPLAINED:
                            problems.append(log_problem(r_index, s_index, i_index, problem))
    return RequestCheck(received, rejected, tuple(problems))


def _parse_traces(payload: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(payload)
    except DecodeError as exc:
        raise InvalidRequest(_not_traces(str(exc))) from None
    return request


def _not_traces(reason: str) -> str:
    return (f"the body is not a valid protobuf ExportTraceServiceRequest ({reason}); send "
            "OTLP protobuf, or OTLP/JSON with Content-Type: application/json")


def _parse_logs(payload: bytes) -> ExportLogsServiceRequest:
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


def _check_log_ids(trace_id: bytes, span_id: bytes) -> str | None:
    if trace_id and len(trace_id) != 16:
        return f"trace_id has {len(trace_id)} bytes, expected 16 or none"
    if span_id and len(span_id) != 8:
        return f"span_id has {len(span_id)} bytes, expected 8 or none"
    return None


def _rejection_message(received: int, rejected: int, problems: tuple[str, ...]) -> str:
    if not rejected:
        return ""
    more = rejected - len(problems)
    text = "; ".join(problems)
    if more > 0:
        text += f"; and {more} more"
    return f"{rejected} of {received} rejected: {text}"


def decode_traces(payload: bytes, received_unix_nano: int, *,
                  compiled: bool = COMPILED) -> DecodedBatch:
    """Parse an ExportTraceServiceRequest and turn its valid spans into rows.

    Raises InvalidRequest when the bytes are not a protobuf ExportTraceServiceRequest.
    """
    if compiled:
        return next(_compiled_chunks(payload, received_unix_nano, sys.maxsize, sys.maxsize))
    return next(_trace_chunks(payload, received_unix_nano, None))


def _compiled_chunks(payload: bytes, received_unix_nano: int, max_rows: int,
                     max_bytes: int) -> Iterator[DecodedBatch]:
    try:
        for chunk in native.trace_chunks(
                payload, received_unix_nano, schema=SPAN_SCHEMA,
                promoted=tuple(_PROMOTED_SOURCES.values()), invocation_model=_invocation_model,
                max_rows=max_rows, max_bytes=max_bytes):
            yield DecodedBatch("traces", chunk.rows, chunk.received, chunk.rejected,
                               chunk.problems, chunk.payload_bytes, received_unix_nano)
    except native.MalformedRequest as exc:
        raise InvalidRequest(_not_traces(str(exc))) from None


def _trace_chunks(payload: bytes, received_unix_nano: int,
                  max_rows: int | None) -> Iterator[DecodedBatch]:
    # chunked: parse span by span, so the parsed request does not grow with it either
    request: ExportTraceServiceRequest | StreamedRequest = (
        _parse_traces(payload) if max_rows is None else stream_traces(payload))
    rows: list[tuple[Any, ...]] = []
    received = rejected = 0
    problems: list[str] = []
    payload_bytes = len(payload)  # counted in the first chunk only, so chunks add up
    dumps = _json
    for r_index, resource_spans in enumerate(request.resource_spans):
        resource = resource_spans.resource
        r_attrs = attributes_to_json(resource.attributes)
        r_promoted = _promote(r_attrs)
        resource_part = (
            dumps(r_attrs), resource.dropped_attributes_count, resource_spans.schema_url or None,
        )
        service = (_text(r_attrs.get("service.name")), _text(r_attrs.get("service.version")))
        for s_index, scope_spans in enumerate(resource_spans.scope_spans):
            scope = scope_spans.scope
            scope_part = (
                scope.name or None, scope.version or None,
                dumps(attributes_to_json(scope.attributes)), scope.dropped_attributes_count,
                scope_spans.schema_url or None,
            )
            for i_index, span in enumerate(scope_spans.spans):
                received += 1
                trace_id = span.trace_id
                span_id = span.span_id
                parent = span.parent_span_id
                problem = _check_span_ids(trace_id, span_id, parent)
                if problem:
                    rejected += 1
                    if len(problems) < MAX_EXPLAINED:
                        problems.append(span_problem(span.name, r_index, s_index, i_index,
                                                      problem))
                    continue
                attrs = attributes_to_json(span.attributes)
                events = []
                exception_type = None
                for event in span.events:
                    e_attrs = attributes_to_json(event.attributes)
                    if exception_type is None and event.name == "exception":
                        exception_type = e_attrs.get("exception.type")
                    events.append({
                        "time_unix_nano": event.time_unix_nano,
                        "name": event.name,
                        "attributes": e_attrs,
                        "dropped_attributes_count": event.dropped_attributes_count,
                    })
                links = [
                    {
                        "trace_id": link.trace_id.hex(),
                        "span_id": link.span_id.hex(),
                        "trace_state": link.trace_state,
                        "attributes": attributes_to_json(link.attributes),
                        "dropped_attributes_count": link.dropped_attributes_count,
                        "flags": link.flags,
                    }
                    for link in span.links
                ] if span.links else []
                status = span.status
                rows.append((
                    int.from_bytes(trace_id[:8]), int.from_bytes(trace_id[8:]),
                    int.from_bytes(span_id), trace_id.hex(), span_id.hex(),
                    parent.hex() if parent and parent != _ZERO_SPAN else None,
                    span.trace_state or None, span.flags, span.name, span.kind,
                    span.start_time_unix_nano, span.end_time_unix_nano,
                    status.code, status.message or None,
                    dumps(attrs), span.dropped_attributes_count,
                    dumps(events), span.dropped_events_count,
                    dumps(links), span.dropped_links_count,
                    *resource_part, *scope_part, *service,
                    *_promoted_row(attrs, r_promoted, exception_type),
                    received_unix_nano,
                ))
                if max_rows is not None and len(rows) >= max_rows:
                    yield DecodedBatch("traces", _table(rows, SPAN_SCHEMA), received, rejected,
                                       tuple(problems), payload_bytes, received_unix_nano)
                    rows, received, rejected, problems, payload_bytes = [], 0, 0, [], 0
    yield DecodedBatch("traces", _table(rows, SPAN_SCHEMA), received, rejected,
                       tuple(problems), payload_bytes, received_unix_nano)


def _check_span_ids(trace_id: bytes, span_id: bytes, parent: bytes) -> str | None:
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


def decode_logs(payload: bytes, received_unix_nano: int) -> DecodedBatch:
    """Parse an ExportLogsServiceRequest and turn its valid log records into rows.

    A record's identity (for de-duplication) is a 128-bit BLAKE2b hash of its serialized
    form together with its resource and scope. Raises InvalidRequest for bytes that are not
    an ExportLogsServiceRequest.
    """
    return next(_log_chunks(payload, received_unix_nano, None))


def _log_chunks(payload: bytes, received_unix_nano: int,
                max_rows: int | None) -> Iterator[DecodedBatch]:
    request: ExportLogsServiceRequest | StreamedRequest = (
        _parse_logs(payload) if max_rows is None else stream_logs(payload))
    rows: list[tuple[Any, ...]] = []
    received = rejected = 0
    problems: list[str] = []
    payload_bytes = len(payload)  # counted in the first chunk only, so chunks add up
    dumps = _json
    for r_index, resource_logs in enumerate(request.resource_logs):
        resource = resource_logs.resource
        r_attrs = attributes_to_json(resource.attributes)
        r_conversation = _text(_promote(r_attrs)[_CONVERSATION])
        r_identity = resource.SerializeToString() + resource_logs.schema_url.encode()
        resource_part = (
            dumps(r_attrs), resource.dropped_attributes_count, resource_logs.schema_url or None,
        )
        service = (_text(r_attrs.get("service.name")), _text(r_attrs.get("service.version")))
        for s_index, scope_logs in enumerate(resource_logs.scope_logs):
            scope = scope_logs.scope
            s_identity = r_identity + scope.SerializeToString()
            scope_part = (
                scope.name or None, scope.version or None,
                dumps(attributes_to_json(scope.attributes)), scope.dropped_attributes_count,
                scope_logs.schema_url or None,
            )
            for i_index, record in enumerate(scope_logs.log_records):
                received += 1
                trace_id = record.trace_id
                span_id = record.span_id
                problem = _check_log_ids(trace_id, span_id)
                if problem:
                    rejected += 1
                    if len(problems) < MAX_EXPLAINED:
                        problems.append(log_problem(r_index, s_index, i_index, problem))
                    continue
                digest = hashlib.blake2b(
                    s_identity + record.SerializeToString(), digest_size=16
                ).digest()
                attrs = attributes_to_json(record.attributes)
                conversation = _text(_promote(attrs)[_CONVERSATION]) or r_conversation
                rows.append((
                    int.from_bytes(digest[:8]), int.from_bytes(digest[8:]),
                    record.time_unix_nano, record.observed_time_unix_nano,
                    record.severity_number, record.severity_text or None,
                    record.event_name or _text(attrs.get("event.name")),
                    dumps(value_to_json(record.body)) if record.HasField("body") else None,
                    dumps(attrs), record.dropped_attributes_count, record.flags,
                    trace_id.hex() if trace_id and trace_id != _ZERO_TRACE else None,
                    span_id.hex() if span_id and span_id != _ZERO_SPAN else None,
                    *resource_part, *scope_part, *service, conversation, received_unix_nano,
                ))
                if max_rows is not None and len(rows) >= max_rows:
                    yield DecodedBatch("logs", _table(rows, LOG_SCHEMA), received, rejected,
                                       tuple(problems), payload_bytes, received_unix_nano)
                    rows, received, rejected, problems, payload_bytes = [], 0, 0, [], 0
    yield DecodedBatch("logs", _table(rows, LOG_SCHEMA), received, rejected,
                       tuple(problems), payload_bytes, received_unix_nano)


def decode(signal: Signal, payload: bytes, received_unix_nano: int, *,
           compiled: bool = COMPILED) -> DecodedBatch:
    """Decode a request of either signal."""
    if signal == "traces":
        return decode_traces(payload, received_unix_nano, compiled=compiled)
    return decode_logs(payload, received_unix_nano)


def decode_chunks(signal: Signal, payload: bytes, received_unix_nano: int,
                  max_rows: int, *, compiled: bool = COMPILED) -> Iterator[DecodedBatch]:
    """Decode a request of either signal as batches of at most ``max_rows`` rows.

    Memory then grows with the chunk, not with the request: one legal 64 MiB request can
    hold 1.6M minimal spans. The chunks' counts add up to :func:`decode`'s.
    """
    if signal == "traces" and compiled:
        return _compiled_chunks(payload, received_unix_nano, max_rows, MAX_CHUNK_BYTES)
    if signal == "traces":
        return _trace_chunks(payload, received_unix_nano, max_rows)
    return _log_chunks(payload, received_unix_nano, max_rows)


def _json(value: Any) -> str:
    """JSON text as a str: each bytes object orjson returns keeps a 4 KiB buffer, which
    made rows cost ~13 KB a span while a request was decoded (21 GB for 1.6M spans)."""
    if not value and type(value) is dict:
        return "{}"
    if not value and type(value) is list:
        return "[]"
    return orjson.dumps(value).decode()
