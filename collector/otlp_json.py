"""OTLP/JSON to OTLP protobuf, so JSON takes the same decode path as protobuf.

OTLP/JSON is the proto3 JSON mapping with three differences this module handles: trace and
span ids are hex strings (not base64); enum fields may be integers; keys are lowerCamelCase
(the original field names are accepted too). Unknown fields are ignored, as the OTLP
specification requires of receivers. An item protobuf cannot take (an id that is not a
string, an enum name that does not exist) is left out and explained, like an item with a
bad id, instead of failing the request or being stored with a default; the encoded
request counts them (:func:`collector.checks.mark_refused`), so the store counts them as
rejected like the decoder's own refusals.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import orjson
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from collector.checks import (
    MAX_EXPLAINED,
    RequestCheck,
    Signal,
    log_problem,
    mark_refused,
    span_problem,
)
from collector.errors import InvalidRequest

_ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")
_SPAN_KINDS = frozenset(Span.SpanKind.keys())
_STATUS_CODES = frozenset(Status.StatusCode.keys())
_SEVERITIES = frozenset(SeverityNumber.keys())


@dataclass(frozen=True)
class JsonRequest:
    """An OTLP/JSON request as protobuf, without the items that could not be encoded."""

    payload: bytes
    """The ``Export*ServiceRequest`` bytes of the items kept (led by the count of those
    left out, when there are any: :func:`collector.checks.mark_refused`)."""
    refused: RequestCheck
    """Items left out (an id that is not a string, an unknown enum name), each explained."""


def json_to_protobuf(signal: Signal, body: bytes) -> JsonRequest:
    """Turn an OTLP/JSON request body into the equivalent protobuf bytes.

    Raises InvalidRequest naming the problem when the body is not OTLP/JSON of that signal;
    single items that cannot be encoded are left out and explained in ``refused``.
    """
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from None
    return document_to_protobuf(signal, document)


def document_to_protobuf(signal: Signal, document: Any) -> JsonRequest:
    """Like :func:`json_to_protobuf` for an already parsed JSON document."""
    if not isinstance(document, dict):
        raise InvalidRequest(
            f"an OTLP/JSON {signal} request is a JSON object, got {type(document).__name__}"
        )
    top = ("resourceSpans", "resource_spans") if signal == "traces" else (
        "resourceLogs", "resource_logs")
    message: ExportTraceServiceRequest | ExportLogsServiceRequest = (
        ExportTraceServiceRequest() if signal == "traces" else ExportLogsServiceRequest()
    )
    refused = _Refused()
    for key in top:
        for r_index, resource in enumerate(_list(document.get(key), key)):
            _prepare_items(resource, signal, r_index, refused)
    try:
        json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise InvalidRequest(f"the body is not an OTLP/JSON {signal} request: {exc}") from None
    # the request carries the count into the spool, so the store counts them as rejected
    return JsonRequest(mark_refused(message.SerializeToString(), refused.count),
                       RequestCheck(refused.count, refused.count, tuple(refused.problems)))


class _Refused:
    def __init__(self) -> None:
        self.count = 0
        self.problems: list[str] = []

    def add(self, problem: str) -> None:
        self.count += 1
        if len(self.problems) < MAX_EXPLAINED:
            self.problems.append(problem)


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidRequest(f"{where} must be a JSON array, got {type(value).__name__}")
    return value


def _prepare_items(resource: Any, signal: Signal, r_index: int, refused: _Refused) -> None:
    """Hex ids to base64 in place; items with a field protobuf cannot take are dropped."""
    if not isinstance(resource, dict):
        return
    scope_key, item_key = ("scopeSpans", "spans") if signal == "traces" else (
        "scopeLogs", "logRecords")
    scopes = resource.get(scope_key, resource.get(_snake(scope_key)))
    for s_index, scope in enumerate(_list(scopes, scope_key)):
        if not isinstance(scope, dict):
            continue
        key = item_key if item_key in scope else _snake(item_key)
        kept = []
        for i_index, item in enumerate(_list(scope.get(key), item_key)):
            if not isinstance(item, dict):
                kept.append(item)  # protobuf's parser names this one
                continue
            problem = _item_problem(item, signal)
            if problem is None:
                kept.append(item)
            elif signal == "traces":
                refused.add(span_problem(str(item.get("name", "")), r_index, s_index, i_index,
                                         problem))
            else:
                refused.add(log_problem(r_index, s_index, i_index, problem))
        if key in scope:
            scope[key] = kept


def _item_problem(item: dict[str, Any], signal: Signal) -> str | None:
    problem = _convert_ids(item, "")
    if problem:
        return problem
    if signal == "traces":
        for index, link in enumerate(_list(item.get("links"), "links")):
            if isinstance(link, dict):
                problem = _convert_ids(link, f"links[{index}].")
                if problem:
                    return problem
        status = item.get("status")
        return _enum_problem(item, ("kind",), _SPAN_KINDS, "SpanKind") or (
            _enum_problem(status, ("code",), _STATUS_CODES, "StatusCode")
            if isinstance(status, dict) else None)
    return _enum_problem(item, ("severityNumber", "severity_number"), _SEVERITIES,
                         "SeverityNumber")


def _convert_ids(item: dict[str, Any], where: str) -> str | None:
    for key in _ID_FIELDS:
        value = item.get(key)
        if isinstance(value, str):
            item[key] = _hex_to_base64(value, key)
        elif value is not None:
            return (f"{where}{key} is a JSON {_json_type(value)}; OTLP/JSON ids are hex "
                    "strings")
    return None


_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _enum_problem(item: dict[str, Any], keys: tuple[str, ...], names: frozenset[str],
                  enum: str) -> str | None:
    for key in keys:
        value = item.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and not (
                _INT32_MIN <= value <= _INT32_MAX):
            # protobuf would keep only the low 32 bits: a different value, silently
            return f"{key} {value} is outside the int32 range of an OTLP {enum}"
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            continue
        if isinstance(value, str) and value in names:
            continue
        shown = repr(value) if isinstance(value, str) else f"a JSON {_json_type(value)}"
        known = ", ".join(sorted(names)) if len(names) <= 8 else (
            f"{min(names).rsplit('_', 1)[0]}_* names")
        return f"{key} {shown} is not a {enum} (one of {known}, or its number)"
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else type(value).__name__


def _hex_to_base64(value: str, key: str) -> str:
    # An id that is not hex becomes empty, so the decoder rejects that one item (and
    # explains it in partial_success) while the rest of the request is kept.
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raw = b""
    return base64.b64encode(raw).decode("ascii")


def _snake(name: str) -> str:
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in name)
