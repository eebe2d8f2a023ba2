"""Reading the body of one tool result: envelopes, error members, codes, status words, texts.

:func:`processor.results.read_result` hands each parsed body (or its text) to
:func:`read_parsed` / :func:`read_text`, which gather what its parts say into a
:class:`Verdict` (failed? which fault? which world state?). The table of what is read is
in :mod:`processor.results`; the words are in :mod:`processor._result_words` and the
refusals that name a record's state in :mod:`processor._result_states`.
"""

from __future__ import annotations

from typing import Any

import orjson

from processor._result_states import state_refusal, token_state
from processor._result_words import (
    ERROR_PREFIX,
    HTTP_CODE_TEXT,
    PARTIAL_WORDS,
    RANK,
    REFUSAL_FAULT,
    SHORT,
    STALE_WORDS,
    http_fault,
    text_fault,
    text_world,
    word,
)

__all__ = ["INTERESTING_KEYS", "LIST_KEYS", "PLAIN_LISTS", "Verdict", "parse_result",
           "read_parsed", "read_text"]

# Keys of an answer *about* a call (status, code, message, request id, ...). A body with
# at most two other keys is an envelope; more, and it is a record (whose title,
# description, name or status is data).
_ENVELOPE_KEYS = frozenset({
    "status", "state", "code", "message", "msg", "error", "errors", "detail", "details",
    "documentation_url", "doc_url", "more_info", "help", "hint", "request_id", "requestid",
    "requestId", "debug_id", "correlationId", "correlation_id", "trace_id", "traceId",
    "timestamp", "time", "path", "instance", "success", "ok", "retryable", "retry_after",
    "retryAfter", "statusCode", "status_code", "data", "meta", "errorMessages",
    "error_description", "error_code", "errorCode", "object", "jsonrpc", "httpStatus",
    "http_status", "result", "resultCode", "result_code", "outcome", "warning", "warnings",
    "links", "_links", "isError", "is_error"})
_CODE_KEYS = ("status", "statusCode", "status_code", "code", "httpStatus", "http_status",
              "httpCode", "http_code", "status_code_http")
_STATUS_KEYS = ("status", "state", "result", "resultCode", "result_code", "outcome", "code",
                "error_code", "errorCode", "__type", "Code", "category", "reason", "name",
                "type", "issue")
_NAMING_KEYS = frozenset({"category", "reason", "name", "type", "issue"})
_ERROR_CODE_KEYS = frozenset({"code", "error_code", "errorCode", "__type", "Code"})
"""Top-level keys whose code may name the record's state (:meth:`Verdict.settle`)."""
"""Status-like keys that a record uses for data: read only in an error object, or on an
envelope when their value is one identifier-like word (PayPal's ``RESOURCE_NOT_FOUND``)."""
_MESSAGE_KEYS = ("message", "msg", "detail", "error_description", "errorMessage",
                 "error_message", "userPresentableMessage", "failure_message", "refusalReason",
                 "Message")
_FAILED_MESSAGE_KEYS = ("title", "description")
"""Read only once the body is known to have failed (else they are a record's data)."""
_ERROR_KEYS = ("error", "errors", "errorMessages", "error_code", "errorCode",
               "error_message", "errorMessage", "failure_code", "failure_message",
               "failure_reason", "decline_code", "refusalReason", "fault", "exception",
               "__type", "Error", "userErrors", "user_errors")
_FAIL_FLAGS = (("success", False), ("ok", False), ("isError", True), ("is_error", True),
               ("error", True), ("failed", True), ("succeeded", False))
_CODE_KEY_SET = frozenset(_CODE_KEYS)
_STATUS_KEY_SET = frozenset(_STATUS_KEYS)
_MESSAGE_KEY_SET = frozenset(_MESSAGE_KEYS)
_ERROR_KEY_SET = frozenset(_ERROR_KEYS)
_FIELD_KEYS = _CODE_KEY_SET | _STATUS_KEY_SET | _MESSAGE_KEY_SET | {"data"}
_OBJECT_KEYS = _ERROR_KEY_SET | {key for key, _ in _FAIL_FLAGS} | {
    "object", "type", "documentation_url", "data", "stale", "is_stale", "warning", "warnings",
    "duplicate", "is_duplicate"}
LIST_KEYS = ("results", "items", "data", "records", "entries", "hits", "matches", "rows",
              "orders", "reservations", "tickets", "issues", "customers", "users", "flights")
INTERESTING_KEYS = _OBJECT_KEYS | _FIELD_KEYS | frozenset(LIST_KEYS) | {"content", "conclusion"}
"""Keys that can make a dict body more than a plain record (the fast path skips none)."""


class Verdict:
    """What the parts of one body say, gathered as it is read."""

    __slots__ = ("code_world", "evidence", "failed", "fault", "lookup", "record_state",
                 "success", "world")

    def __init__(self, *, lookup: bool = False) -> None:
        self.lookup = lookup
        """The tool is named as a reader (a lookup, a search, a policy page): a rule it
        states is no refusal of the call, and a state its answer reports is data
        (:func:`processor._result_words.text_fault`)."""
        self.failed = False
        self.success = False
        self.fault: str | None = None
        self.world: str | None = None
        self.evidence: str | None = None
        self.code_world: str | None = None
        """A world state named by a top-level code (``{"code": "ORDER_IS_CLOSED"}``):
        counted only once the body is known to have failed (see :meth:`settle`)."""
        self.record_state: str | None = None
        """The failed state of the record a lookup returned (``failed``, ``declined``, a
        check run's ``failure``): data about the world, not a fault of the lookup (see
        :func:`_record_state`)."""

    def fail(self, fault: str | None, evidence: str) -> None:
        if not self.failed:
            self.failed, self.evidence = True, evidence
        self.note(fault)

    def note(self, fault: str | None) -> None:
        if fault is not None and (self.fault is None or RANK[fault] < RANK[self.fault]):
            self.fault = fault

    def see_world(self, world: str | None) -> None:
        if world is not None and self.world is None:
            self.world = world

    def settle(self) -> None:
        """Apply what could only count on a failed body (call once, after reading)."""
        if self.failed and self.world is None and self.code_world is not None:
            self.world = self.code_world
            self.note("conflict")


def parse_result(result: str | None) -> tuple[Any, bool]:
    """(parsed JSON or None, malformed?) for a tool result's text."""
    if result is None:
        return None, False
    text = result.strip()
    if not text.startswith(("{", "[")):
        return None, False
    try:
        return orjson.loads(text), False
    except orjson.JSONDecodeError:
        return None, True


def _http_code(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 100 <= value <= 599 else None
    if isinstance(value, str) and len(value) == 3 and value.isdigit():
        return int(value)
    return None


def _is_envelope(body: dict[str, Any]) -> bool:
    extra = 0
    for key in body:
        if key not in _ENVELOPE_KEYS:
            extra += 1
            if extra > 2:
                return False
    return True


def _read_error_member(value: Any, verdict: Verdict, where: str, depth: int = 0) -> bool:
    """Read one error member (text, object or list); False when it is empty (no fault)."""
    if value is None or value is False or value == "" or value == 0:
        return False
    if isinstance(value, (list, tuple)):
        found = False
        for item in value[:5]:
            found = _read_error_member(item, verdict, where, depth) or found
        return found
    if isinstance(value, dict):
        if not value:
            return False
        verdict.fail(None, f"body {where}")
        if depth < 2 and not any(key in value for key in _STATUS_KEYS + _MESSAGE_KEYS):
            for inner in list(value.values())[:5]:  # {"title": ["can't be blank"]} (Shopify)
                if isinstance(inner, list) and inner and all(isinstance(i, str) for i in inner):
                    _read_message(" ".join(inner[:3]), verdict, generic=True)
                elif isinstance(inner, str) and " " in inner:  # {"summary": "You must ..."}
                    _read_message(inner, verdict, generic=True)
        _read_fields(value, verdict, where, depth=depth + 1, inside_error=True)
        return True
    if value is True:
        verdict.fail(None, f"body {where}=true")
        return True
    if isinstance(value, (int, float)):
        code = _http_code(value) if isinstance(value, int) else None
        verdict.fail(http_fault(code) if code is not None else None, f"body {where}={value}")
        return True
    text = str(value)
    verdict.fail(None, f"body {where}={text[:60]}")
    if len(text) <= 80 and text.count(" ") <= 1:
        world, fault, _, _ = word(text)
        verdict.note(fault)
        verdict.see_world(world)
        refusal = token_state(text) if world is None else None  # {"error": "ORDER_IS_CLOSED"}
        if refusal is not None:
            verdict.note(REFUSAL_FAULT[refusal])
            verdict.see_world(refusal)
    else:
        _read_message(text, verdict, generic=True)
    return True


def _read_message(text: str, verdict: Verdict, *, generic: bool) -> None:
    generic = generic or verdict.failed
    if len(text) > 2 * SHORT:
        text = text[: 2 * SHORT]
    fault = text_fault(text, generic=generic, lookup=verdict.lookup)
    if fault is not None and (generic or verdict.failed or not verdict.success):
        verdict.fail(fault, f"body message '{text[:60]}'")
    verdict.see_world(text_world(text, failed=verdict.failed, lookup=verdict.lookup))
    if verdict.world is None and not verdict.failed and "partial" in text.lower() \
            and PARTIAL_WORDS.search(text):
        verdict.see_world("partially_completed")


def _read_fields(body: dict[str, Any], verdict: Verdict, where: str, *, depth: int,
                 inside_error: bool) -> None:
    """Codes, status words and messages of one object (the body or an error object)."""
    present = body.keys() & _FIELD_KEYS  # most records share few keys with these
    # a record a lookup returned in a failed state of its own is data, however few its keys
    record = not inside_error and depth == 0 and verdict.record_state is not None
    envelope = inside_error or (_is_envelope(body) and not record)
    code = body.get("code")
    if inside_error and isinstance(code, int) and -32768 <= code <= -32000:  # JSON-RPC 2.0
        verdict.fail("server_error" if code in (-32603, -32000) else "invalid",
                     f"body {where} code={code}")
        return
    codes = present & _CODE_KEY_SET
    if codes:
        for key in _CODE_KEYS:
            if key not in codes:
                continue
            code = _http_code(body[key])
            if code is not None:
                if code == 403:  # a business refusal sent as 403 says why in its message
                    verdict.fail(_refused_by_state(body) or "permission_denied",
                                 f"body {key}={code}")
                elif code >= 400:
                    verdict.fail(http_fault(code), f"body {key}={code}")
                elif code < 300 and not inside_error:
                    verdict.success = True
                break
    data = body.get("data")
    if envelope and isinstance(data, dict):  # WooCommerce: {"code": ..., "data": {"status": 404}}
        code = _http_code(data.get("status"))
        if code is not None and code >= 400:
            verdict.fail(http_fault(code), f"body data.status={code}")
    statuses = present & _STATUS_KEY_SET
    if record:
        statuses -= _ERROR_KEY_SET  # the record's error code says why it failed
    if statuses:
        for key in _STATUS_KEYS:
            if key not in statuses:
                continue
            value = body[key]
            if isinstance(value, str) and value and len(value) <= 80:
                _read_status(key, value, verdict, envelope=envelope, inside_error=inside_error)
    if envelope and present & _MESSAGE_KEY_SET:
        for key in _MESSAGE_KEYS:
            value = body.get(key)
            if isinstance(value, str) and value:
                _read_message(value, verdict, generic=inside_error)
            elif key == "detail" and isinstance(value, list) and value:  # FastAPI 422
                verdict.fail("invalid", "body detail[]")
                _read_error_member(value, verdict, "detail", depth)
    elif record and present & _MESSAGE_KEY_SET:  # about the record, unless it says none was
        for key in _MESSAGE_KEYS:
            value = body.get(key)
            if isinstance(value, str) and value and \
                    text_fault(value[: 2 * SHORT], generic=False) == "not_found":
                verdict.fail("not_found", f"body message '{value[:60]}'")
    if verdict.failed:
        for key in _FAILED_MESSAGE_KEYS:
            value = body.get(key)
            if isinstance(value, str) and value:
                _read_message(value, verdict, generic=True)
        details = body.get("details")
        if depth < 2 and isinstance(details, (list, dict)) and details:  # PayPal, Zendesk
            for item in (details if isinstance(details, list) else [details])[:3]:
                if isinstance(item, dict):
                    _read_fields(item, verdict, f"{where}details", depth=depth + 1,
                                 inside_error=True)
                    _read_field_errors(item, verdict)


def _read_field_errors(details: dict[str, Any], verdict: Verdict) -> None:
    """Rails-style errors per field (Zendesk's ``{"status": [{"description": "Status:
    closed prevents ticket update"}]}``), read for refusals that name the record's state
    only (a field's "is already being used" is a validation, not an acted-on record)."""
    for value in list(details.values())[:5]:
        if not isinstance(value, list):
            continue
        for item in value[:3]:
            if not isinstance(item, dict):
                continue
            for key in ("description", "message", "detail"):
                text = item.get(key)
                if isinstance(text, str) and text:
                    refusal = state_refusal(text[: 2 * SHORT], failed=True)
                    if refusal is not None:
                        verdict.note(REFUSAL_FAULT[refusal])
                        if refusal in ("already_acted_on", "partially_completed"):
                            verdict.see_world(refusal)


def _refused_by_state(body: dict[str, Any]) -> str | None:
    """The fault of a 403 whose own message refuses by the record's state ("Cannot cancel
    an order that has been shipped"), None when the message says nothing of the kind
    (then 403 is a permission: "You do not have permission", "Your current balance ...")."""
    for key in _MESSAGE_KEYS:
        value = body.get(key)
        if isinstance(value, str) and value:
            refusal = state_refusal(value[: 2 * SHORT], failed=True)
            if refusal is not None:
                return REFUSAL_FAULT[refusal]
    return None


def _read_status(key: str, value: str, verdict: Verdict, *, envelope: bool,
                 inside_error: bool) -> None:
    """One status-like word (``status``, ``code``, ``__type``, ...)."""
    if key in _NAMING_KEYS and not inside_error and (not envelope or " " in value):
        return  # a record's name or type is data
    world, weak_fault, strong_fault, success = word(value)
    if world is not None:
        verdict.see_world(world)
        if world == "partially_completed" or not inside_error:
            return
    elif inside_error or key in _ERROR_CODE_KEYS:
        refusal = token_state(value)  # INVALID_RESOURCE_STATE, DELAYED_TRANSACTION_CANCELED
        if refusal is not None and inside_error:
            verdict.note(REFUSAL_FAULT[refusal])
            verdict.see_world(refusal)
        elif refusal is not None and refusal != "blocked":
            verdict.code_world = refusal
    if success:
        if not inside_error:
            verdict.success = True
        return
    fault = weak_fault if inside_error or (envelope and key not in _NAMING_KEYS) \
        else strong_fault
    if fault is None:
        return
    if fault == "stale" and not inside_error:
        verdict.note("stale")
        verdict.evidence = verdict.evidence or f"body {key}={value[:60]}"
        return
    verdict.fail(fault, f"body {key}={value[:60]}")


def _read_object(body: dict[str, Any], verdict: Verdict) -> None:
    content = body.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict) \
            and "text" in content[0] and ("isError" in body or len(body) <= 3):
        # an MCP CallToolResult: {"content": [{"type": "text", "text": ...}], "isError": ...}
        if body.get("isError") is True:
            verdict.fail(None, "body isError=true")
        text = " ".join(str(part.get("text", "")) for part in content[:5]
                        if isinstance(part, dict))
        _read_inner_text(text, verdict)
        return
    if verdict.lookup:
        verdict.record_state = _record_state(body)
        if verdict.record_state is not None and _call_fault(body) is not None:
            verdict.record_state = None  # the call failed: its errors are read as usual
    present = body.keys() & _OBJECT_KEYS
    if present:
        _read_markers(body, present, verdict)
    _read_fields(body, verdict, "", depth=0, inside_error=False)


_ENVELOPE_IDS = frozenset({
    "request_id", "requestid", "requestId", "RequestId", "debug_id", "correlationId",
    "correlation_id", "trace_id", "traceId", "error_id", "errorId", "event_id", "span_id",
    "x_request_id", "incident_id"})
"""Identifier keys of an answer about a call, not of a record."""
_RECORD_STATE_KEYS = ("status", "state", "conclusion", "outcome", "result")
"""Keys in which a record says where it stands (a check run's ``conclusion``)."""


def _names_record(body: dict[str, Any]) -> bool:
    """Whether the body carries a record's identifier (``id``, ``*_id``, ``number``; not a
    request's or a trace's id, nor an error token in ``id`` as DigitalOcean writes
    ``{"id": "not_found", "message": ...}``)."""
    for key, value in body.items():
        if key in _ENVELOPE_IDS or value is None or value == "" or isinstance(
                value, (dict, list, bool)):
            continue
        if key in ("id", "number") or key.endswith(("_id", "Id", "ID")):
            if isinstance(value, str) and len(value) <= 80 and word(value)[1] is not None:
                continue  # {"id": "not_found"}: an error's name
            return True
    return False


_CALL_FAULTS = frozenset({"timeout", "rate_limited", "permission_denied", "server_error"})
"""Faults of the call itself: a body that names one failed, whatever record it echoes."""
_CALL_FAULT_KEYS = ("error", "errors", "message", "error_message", "errorMessage", "detail",
                    "reason", "description", "error_description", "msg", "error_code",
                    "errorCode", "code")
"""Where a body says what went wrong with the call."""


def _call_fault(body: dict[str, Any], depth: int = 0) -> str | None:
    """A fault of the call (:data:`_CALL_FAULTS`) named in the body's error members,
    messages or codes (``{"order_id": "A1", "status": "error", "message": "Database
    connection timed out"}``: the wrapper echoed the id it was asked for)."""
    for key in _CALL_FAULT_KEYS:
        value = body.get(key)
        fault: str | None = None
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            fault = http_fault(value)
        elif isinstance(value, str) and value:
            token = word(value[:80])[1] if " " not in value.strip() else None
            fault = token or text_fault(value[: 2 * SHORT], generic=True)
        elif isinstance(value, dict) and depth < 2:
            fault = _call_fault(value, depth + 1)
        elif isinstance(value, list) and depth < 2:
            for item in value[:5]:
                if isinstance(item, dict):
                    fault = fault or _call_fault(item, depth + 1)
        if fault in _CALL_FAULTS:
            return fault
    return None


def _record_state(body: dict[str, Any]) -> str | None:
    """The state a looked-up record is in when that state is a failure of the record's
    own (``failed``, ``declined``, ``rejected``, ``failure``, ``FAILED``; not ``error``,
    which is how a tool wrapper reports its own failed call): a
    word that names no fault of a call on its own (a weak one: ``not_found``, ``timeout``,
    ``permission_denied`` stay the lookup's), in a body that names a record. None
    otherwise."""
    if not _names_record(body):
        return None
    for key in _RECORD_STATE_KEYS:
        value = body.get(key)
        if isinstance(value, str) and value and len(value) <= 80 and " " not in value.strip():
            world, weak, strong, _ = word(value)
            if weak is not None and strong is None and world is None and \
                    value.lower() not in ("error", "errors"):  # a wrapper's, not a record's
                return value
    return None


_RECORD_FIELDS = frozenset({
    "error", "errors", "error_code", "errorCode", "error_message", "errorMessage",
    "failure_code", "failure_message", "failure_reason", "decline_code", "refusalReason",
    "success", "failed", "succeeded", "ok"})
"""Members that, in a record a lookup returns, describe the record (a charge that failed,
a job that errored), not the lookup."""


def _is_record(body: dict[str, Any]) -> bool:
    """A record: more than an envelope's keys, one of them an identifier."""
    return not _is_envelope(body) and any(
        key in ("id", "number", "object") or key.endswith(("_id", "Id", "ID"))
        for key in body)


def _read_markers(body: dict[str, Any], present: set[str], verdict: Verdict) -> None:
    """Failure flags, error members, GraphQL user errors, stale and duplicate flags (in a
    record a lookup returned, its failure members are its data: a retrieved charge whose
    ``failure_code`` is ``card_declined`` was read fine)."""
    if verdict.lookup and present & _RECORD_FIELDS and (
            verdict.record_state is not None or _is_record(body)):
        present = present - _RECORD_FIELDS  # the record's failure members say why it failed
    for key, failing in _FAIL_FLAGS:
        if key not in present:
            continue
        value = body[key]
        if value is failing:
            verdict.fail(None, f"body {key}={str(failing).lower()}")
        elif isinstance(value, bool) and key in ("success", "ok", "isError", "is_error"):
            verdict.success = True
    if body.get("object") == "error" or (body.get("type") == "error" and "error" in body):
        verdict.fail(None, "body object=error")
    if "documentation_url" in present and "message" in body:
        verdict.fail(None, "body message + documentation_url")
    if present & _ERROR_KEY_SET:
        for key in _ERROR_KEYS:
            if key in present:
                value = body[key]
                if key == "error" and isinstance(value, bool):
                    continue  # read as a flag above
                if isinstance(value, str) and len(value) <= 80 and \
                        word(value)[1] == "permission_denied":
                    refused = _refused_by_state(body)  # {"error": "not_allowed", "message":
                    if refused is not None:  # "... is delivered, not pending: it cannot be
                        verdict.fail(refused, f"body {key}={value[:60]}")  # cancelled."}
                        continue
                _read_error_member(value, verdict, key)
    data = body.get("data")
    if isinstance(data, dict):  # GraphQL mutations: {"data": {"orderCancel": {"userErrors": []}}}
        for inner in list(data.values())[:5]:
            if isinstance(inner, dict):
                for key in ("userErrors", "user_errors", "errors"):
                    if key in inner:
                        _read_error_member(inner[key], verdict, f"data.*.{key}")
    if body.get("stale") is True or body.get("is_stale") is True:
        verdict.note("stale")
        verdict.evidence = verdict.evidence or "body stale=true"
    for key in ("warning", "warnings"):
        warning = body.get(key)
        if warning and STALE_WORDS.search(str(warning)[:400]):
            verdict.note("stale")
            verdict.evidence = verdict.evidence or f"body {key} says stale"
    if body.get("duplicate") is True or body.get("is_duplicate") is True:
        verdict.see_world("duplicate")


def _read_inner_text(text: str, verdict: Verdict) -> None:
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        parsed, malformed = parse_result(stripped)
        if not malformed:
            read_parsed(parsed, verdict)
            return
    read_text(stripped, verdict)


def read_text(text: str, verdict: Verdict) -> None:
    if ERROR_PREFIX.match(text) or (text.startswith("<") and HTTP_CODE_TEXT.search(text)):
        head = text[: 2 * SHORT]
        match = HTTP_CODE_TEXT.search(head)
        fault = http_fault(int(match.group(1))) if match else None
        verdict.fail(fault, f"text '{text[:60]}'")
        verdict.note(text_fault(head, generic=True))
        verdict.see_world(text_world(head, failed=True))
        return
    if len(text) > SHORT:
        return
    fault = text_fault(text, generic=False, lookup=verdict.lookup)
    if fault is not None:
        verdict.fail(fault, f"text '{text[:60]}'")
    verdict.see_world(text_world(text, failed=fault is not None, lookup=verdict.lookup))


def read_parsed(parsed: Any, verdict: Verdict) -> None:
    if isinstance(parsed, dict):
        _read_object(parsed, verdict)
    elif isinstance(parsed, list):
        errors = [item for item in parsed[:3] if isinstance(item, dict)
                  and ("errorCode" in item or "error_code" in item or "error" in item)
                  and ("message" in item or "error" in item)]
        if errors and len(errors) == min(len(parsed), 3):  # Salesforce: [{"errorCode": ...}]
            _read_error_member(errors, verdict, "[]")
    elif isinstance(parsed, str):
        _read_inner_text(parsed, verdict)


PLAIN_LISTS = frozenset(LIST_KEYS) - _OBJECT_KEYS - _FIELD_KEYS
"""List keys whose items are a record's data (line items), not an answer's results."""
