"""Export requests to rows: pure functions from protobuf bytes to Arrow tables.

:func:`decode_traces` and :func:`decode_logs` parse one ``Export*ServiceRequest``, check
every item, and return the valid ones as an Arrow table shaped like ``otlp_spans`` /
``otlp_log_records`` together with a count and explanation of the rejected ones (which
the receivers report as ``partial_success``). They touch no database and no globals, so
they can run on any thread.

The checks (:mod:`collector.checks`) and the promoted columns (:mod:`collector.promote`)
live in their own modules.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import pyarrow as pa

from collector import native
from collector._item_reader import not_a_request, read_request
from collector.checks import (
    MAX_EXPLAINED,
    NOTHING_REFUSED,
    RequestCheck,
    Signal,
    check_log_ids,
    check_request,
    check_span,
    log_problem,
    refused_before,
    rejection_message,
    span_problem,
)
from collector.errors import InvalidRequest
from collector.promote import (
    CONVERSATION,
    PROMOTED_SOURCES,
    invocation_model,
    promote,
    promoted_row,
    text,
)
from collector.values import attributes_to_json, value_to_json

__all__ = [
    "COMPILED", "LOG_SCHEMA", "MAX_CHUNK_BYTES", "MAX_EXPLAINED", "NOTHING_REFUSED",
    "SPAN_SCHEMA", "DecodedBatch", "RequestCheck", "Signal", "check_request", "decode",
    "decode_chunks", "decode_logs", "decode_traces", "log_problem", "span_problem",
]

COMPILED = native.AVAILABLE
"""Whether spans are checked and decoded by the compiled decoder (collector/native.py);
each function below takes ``compiled=`` to choose a path explicitly (the tests compare them)."""
MAX_CHUNK_BYTES = 64 * 1024 * 1024
"""About the most column bytes one chunk of the compiled decoder holds (a few huge spans
make a chunk long before it has max_rows rows)."""

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)

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
        return rejection_message(self.received, self.rejected, self.problems)

def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    if not rows:
        return schema.empty_table()
    columns = zip(*rows, strict=True)
    arrays = [pa.array(column, type=kind) for column, kind in zip(columns, schema.types,
                                                                   strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


def decode_traces(payload: bytes, received_unix_nano: int, *,
                  compiled: bool = COMPILED) -> DecodedBatch:
    """Parse an ExportTraceServiceRequest and turn its valid spans into rows.

    Raises InvalidRequest when the bytes are not a protobuf ExportTraceServiceRequest.
    """
    if compiled:
        return next(_counting_refused(
            payload, _compiled_chunks(payload, received_unix_nano, sys.maxsize, sys.maxsize)))
    return next(_counting_refused(payload, _trace_chunks(payload, received_unix_nano, None)))


def _counting_refused(payload: bytes, batches: Iterator[DecodedBatch]) -> Iterator[DecodedBatch]:
    """``batches`` with the items a transport left out before encoding ``payload``
    (:func:`collector.checks.refused_before`) counted as received and rejected in the first."""
    refused = refused_before(payload)
    for batch in batches:
        if refused:
            batch = replace(batch, received=batch.received + refused,
                            rejected=batch.rejected + refused)
            refused = 0
        yield batch


def _compiled_chunks(payload: bytes, received_unix_nano: int, max_rows: int,
                     max_bytes: int) -> Iterator[DecodedBatch]:
    try:
        for chunk in native.trace_chunks(
                payload, received_unix_nano, schema=SPAN_SCHEMA,
                promoted=tuple(PROMOTED_SOURCES.values()), invocation_model=invocation_model,
                max_rows=max_rows, max_bytes=max_bytes):
            yield DecodedBatch("traces", chunk.rows, chunk.received, chunk.rejected,
                               chunk.problems, chunk.payload_bytes, received_unix_nano)
    except native.MalformedRequest as exc:
        raise InvalidRequest(not_a_request("traces", str(exc))) from None


def _trace_chunks(payload: bytes, received_unix_nano: int,
                  max_rows: int | None) -> Iterator[DecodedBatch]:
    # span by span (collector._item_reader.read_request): memory grows with a span and the rows
    # of a chunk, never with the parsed request
    request = read_request("traces", payload)
    rows: list[tuple[Any, ...]] = []
    received = rejected = 0
    problems: list[str] = []
    payload_bytes = len(payload)  # counted in the first chunk only, so chunks add up
    dumps = _json
    for r_index, resource_spans in enumerate(request.resource_spans):
        resource = resource_spans.resource
        r_attrs = attributes_to_json(resource.attributes)
        r_promoted = promote(r_attrs)
        resource_part = (
            dumps(r_attrs), resource.dropped_attributes_count, resource_spans.schema_url or None,
        )
        service = (text(r_attrs.get("service.name")), text(r_attrs.get("service.version")))
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
                problem = check_span(span)
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
                    *promoted_row(attrs, r_promoted, exception_type),
                    received_unix_nano,
                ))
                if max_rows is not None and len(rows) >= max_rows:
                    yield DecodedBatch("traces", _table(rows, SPAN_SCHEMA), received, rejected,
                                       tuple(problems), payload_bytes, received_unix_nano)
                    rows, received, rejected, problems, payload_bytes = [], 0, 0, [], 0
    yield DecodedBatch("traces", _table(rows, SPAN_SCHEMA), received, rejected,
                       tuple(problems), payload_bytes, received_unix_nano)

def decode_logs(payload: bytes, received_unix_nano: int) -> DecodedBatch:
    """Parse an ExportLogsServiceRequest and turn its valid log records into rows.

    A record's identity (for de-duplication) is a 128-bit BLAKE2b hash of its serialized
    form together with its resource and scope. Raises InvalidRequest for bytes that are not
    an ExportLogsServiceRequest.
    """
    return next(_counting_refused(payload, _log_chunks(payload, received_unix_nano, None)))


def _log_chunks(payload: bytes, received_unix_nano: int,
                max_rows: int | None) -> Iterator[DecodedBatch]:
    request = read_request("logs", payload)
    rows: list[tuple[Any, ...]] = []
    received = rejected = 0
    problems: list[str] = []
    payload_bytes = len(payload)  # counted in the first chunk only, so chunks add up
    dumps = _json
    for r_index, resource_logs in enumerate(request.resource_logs):
        resource = resource_logs.resource
        r_attrs = attributes_to_json(resource.attributes)
        r_conversation = text(promote(r_attrs)[CONVERSATION])
        r_identity = resource.SerializeToString() + resource_logs.schema_url.encode()
        resource_part = (
            dumps(r_attrs), resource.dropped_attributes_count, resource_logs.schema_url or None,
        )
        service = (text(r_attrs.get("service.name")), text(r_attrs.get("service.version")))
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
                problem = check_log_ids(trace_id, span_id)
                if problem:
                    rejected += 1
                    if len(problems) < MAX_EXPLAINED:
                        problems.append(log_problem(r_index, s_index, i_index, problem))
                    continue
                digest = hashlib.blake2b(
                    s_identity + record.SerializeToString(), digest_size=16
                ).digest()
                attrs = attributes_to_json(record.attributes)
                conversation = text(promote(attrs)[CONVERSATION]) or r_conversation
                rows.append((
                    int.from_bytes(digest[:8]), int.from_bytes(digest[8:]),
                    record.time_unix_nano, record.observed_time_unix_nano,
                    record.severity_number, record.severity_text or None,
                    record.event_name or text(attrs.get("event.name")),
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
        chunks = _compiled_chunks(payload, received_unix_nano, max_rows, MAX_CHUNK_BYTES)
    elif signal == "traces":
        chunks = _trace_chunks(payload, received_unix_nano, max_rows)
    else:
        chunks = _log_chunks(payload, received_unix_nano, max_rows)
    return _counting_refused(payload, chunks)


def _json(value: Any) -> str:
    """JSON text as a str: each bytes object orjson returns keeps a 4 KiB buffer, which
    made rows cost ~13 KB a span while a request was decoded (21 GB for 1.6M spans)."""
    if not value and type(value) is dict:
        return "{}"
    if not value and type(value) is list:
        return "[]"
    return orjson.dumps(value).decode()
