"""OTLP/JSON to OTLP protobuf, so JSON takes the same decode path as protobuf.

OTLP/JSON is the proto3 JSON mapping with three differences this module handles: trace and
span ids are hex strings (not base64); enum fields may be integers; keys are lowerCamelCase
(the original field names are accepted too). Unknown fields are ignored, as the OTLP
specification requires of receivers.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.decode import Signal
from collector.errors import InvalidRequest

_ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def json_to_protobuf(signal: Signal, body: bytes) -> bytes:
    """Turn an OTLP/JSON request body into the equivalent protobuf bytes.

    Raises InvalidRequest naming the problem when the body is not OTLP/JSON of that signal.
    """
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from None
    return document_to_protobuf(signal, document)


def document_to_protobuf(signal: Signal, document: Any) -> bytes:
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
    for key in top:
        for resource in _list(document.get(key), key):
            _hex_ids_to_base64(resource, signal)
    try:
        json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise InvalidRequest(f"the body is not an OTLP/JSON {signal} request: {exc}") from None
    return message.SerializeToString()


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidRequest(f"{where} must be a JSON array, got {type(value).__name__}")
    return value


def _hex_ids_to_base64(resource: Any, signal: Signal) -> None:
    if not isinstance(resource, dict):
        return
    scope_key, item_key = ("scopeSpans", "spans") if signal == "traces" else (
        "scopeLogs", "logRecords")
    scopes = resource.get(scope_key, resource.get(_snake(scope_key)))
    for scope in _list(scopes, scope_key):
        if not isinstance(scope, dict):
            continue
        items = scope.get(item_key, scope.get(_snake(item_key)))
        for item in _list(items, item_key):
            if not isinstance(item, dict):
                continue
            _convert_ids(item)
            for link in _list(item.get("links"), "links"):
                if isinstance(link, dict):
                    _convert_ids(link)


def _convert_ids(item: dict[str, Any]) -> None:
    for key in _ID_FIELDS:
        value = item.get(key)
        if isinstance(value, str):
            item[key] = _hex_to_base64(value, key)


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
