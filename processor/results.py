"""Reading a tool result the way a person would: from its span and from its body.

A result on an OK span can still say the call failed (``{"status": "not_found"}``,
``"Error: Reservation XXXX not found"``, ``{"code": 403}``, a Stripe ``card_error``).
:func:`read_result` classifies one result into a tool condition and, when the body says
something about the record, a world state. The processor's axes (:mod:`processor.axes`)
and the generator's conduct checks both read results through it, so "failed" means the
same thing in both. Each result is parsed once; nothing here is slower than a few dict
look-ups and, for short texts only, a few regular expressions.

What is read, in order (the first that applies decides the condition)
=====================================================================

=========================  ================================================================
signal                     reading
=========================  ================================================================
span status ERROR          a fault; its condition from the error type / message (below),
                           else from the body, else ``error``
body not JSON but starts   ``malformed_result`` (a Python ``repr`` is malformed too: the
with ``{`` / ``[``         tool broke its contract)
explicit failure flag      ``success: false``, ``ok: false``, ``isError: true``,
                           ``is_error: true``, ``error: true``, ``failed: true``; an
                           ``object: "error"`` / ``type: "error"`` envelope (Notion,
                           Anthropic); a ``documentation_url`` envelope (GitHub errors)
error members              non-empty ``error`` (text, object: Stripe, Google, OpenAI,
                           Airtable), ``errors`` (JSON:API, GraphQL, Square, Shopify,
                           Intercom, SendGrid, commercetools), ``errorMessages`` (Jira),
                           ``error_code`` / ``errorCode`` / ``error_message`` /
                           ``failure_code`` / ``failure_message`` / ``decline_code`` /
                           ``refusalReason`` (Twilio, Stripe charges, Adyen),
                           ``__type`` (AWS), ``userErrors`` under ``data`` (Shopify
                           GraphQL), FastAPI's ``detail`` list; empty or null ones
                           (``"errors": []``, ``"failure_code": null``) are no fault
HTTP code in the body      ``status`` / ``statusCode`` / ``status_code`` / ``code`` /
                           ``httpStatus`` (top level, in an error object, or ``data.status``
                           as WooCommerce writes it) 400-599: 401/403 →
                           ``permission_denied``, 404/410 → ``not_found``, 408/504/524 →
                           ``timeout``, any other → ``error`` (refined by the words below);
                           2xx marks success
status-like words          ``status`` / ``state`` / ``result`` / ``resultCode`` /
                           ``outcome`` / ``code``: ``not_found``, ``timeout``,
                           ``permission_denied``, gRPC/Google names (``NOT_FOUND``,
                           ``DEADLINE_EXCEEDED``, ``ALREADY_EXISTS``, ...), ``error`` /
                           ``failed`` ... A record's own status (``paid``, ``shipped``,
                           ``pending``, ``cancelled``, ``Suspended``) is data: a weak
                           fault word (``failed``, ``error``, ``declined``, ``rejected``)
                           counts only on an envelope (below), never on a record
message text               ``message`` / ``msg`` / ``detail`` / ``error_description`` /
                           ``title`` / ``description``: read on an *envelope* (a body with
                           at most two keys besides envelope keys such as ``status``,
                           ``code``, ``message``, ``request_id``) or inside an error
                           object; never on a record (a GitHub issue titled "Order not
                           found" is a success)
plain text                 ``Error: ...`` / ``ERROR`` / ``Exception`` / ``Traceback`` /
                           ``<Name>Error: ...`` / ``HTTP 404`` / ``404 Not Found`` / an
                           HTML error page: a fault (tau2-bench answers a raising tool
                           with ``Error: <message>`` on an OK path). A short text (≤ 300
                           characters) without such a prefix is a fault only when it says
                           "not found", "timed out", "permission denied", "rate limit" and
                           the like; longer texts (documents) are read as success
empty                      ``[]`` / ``{"results": []}``-style envelopes: success, ``empty``
                           (a search that matched nothing is an answer, not a fault).
                           ``null`` / ``None`` / ``{}`` / ``""``: ``empty``; from a tool
                           whose first verb reads one record (get, lookup, fetch, read,
                           retrieve, show, view, describe, load, find: see ``tool``)
                           ``not_found`` / ``missing``, else success (an action answering
                           204 or ``{}``; a tool name not given)
stale flags                ``stale: true``, ``is_stale: true``, a ``stale`` status, a
                           warning that says stale / out of date → ``stale_result``
no result seen             (``status="missing"``, no body) ``unknown``
=========================  ================================================================

Words → condition (span error texts, status words, messages): timeout ("timeout", "timed
out", "deadline exceeded", "gateway timeout", ETIMEDOUT) → ``timeout``; not found ("not
found", "does not exist", "no such", "could not find", ``resource_missing``, "unknown
channel"-style messages, ``gone``) → ``not_found``; permission ("permission", "denied",
"forbidden", "unauthorized", "unauthenticated", "not allowed", "bad credentials", "invalid
api key", "not authed", "access denied", "authentication") → ``permission_denied``; stale →
``stale_result``; everything else that is a fault → ``error``, with :attr:`ResultReading.fault`
naming its kind: ``rate_limited`` ("rate limit", "too many requests", 429, throttled,
RESOURCE_EXHAUSTED), ``conflict`` (409, conflict, precondition, already / duplicate
answers), ``declined`` (declined, refused, rejected, insufficient funds, 402),
``invalid`` (invalid, validation, "must be", bad request, 400/422, missing field, JSON-RPC
-32600..-32602), ``server_error`` (5xx, internal, unavailable), ``error`` (anything else).
When several apply, the first in that order wins: timeout, not found, permission, stale,
rate limited, conflict, declined, invalid, server error, error (Jira's "does not exist or
you do not have permission" is ``not_found``, as its HTTP code says; Stripe's
``charge_already_refunded`` of type ``invalid_request_error`` is a ``conflict``). A
specific HTTP code in the body (401/403/404/408/410/504) outranks the words around it
only through this same order.

World state (:attr:`ResultReading.world_state`): ``missing`` (a ``not_found`` reading),
``already_acted_on`` (a status ``already_…``, "already cancelled / exists / enabled / been
…", ``ALREADY_EXISTS``, Stripe's ``charge_already_refunded``), ``duplicate`` (``duplicate:
true``, "duplicate", "multiple / more than one … match", ``DuplicateValue``),
``partially_completed`` (status ``partial`` / ``partially_*`` / ``partial_success``), else
None. "Already" on its own is not a fault: ``"Roaming was already enabled"`` (tau2 telecom)
and ``{"status": "already_cancelled"}`` read as ``success`` with ``already_acted_on`` (the
call answered; the record was in that state), while ``"Error: ... already cancelled"`` reads
as ``error`` with ``already_acted_on``. Permission denied and stale data are *not* world
states: they are tool conditions, and the world-state axis (like the generator's
``WORLD_STATES``) keeps to what the record is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from processor._result_words import (
    CONDITION_OF_FAULT,
    ERROR_PREFIX,
    HTTP_CODE_TEXT,
    PARTIAL_WORDS,
    RANK,
    SHORT,
    STALE_WORDS,
    http_fault,
    text_fault,
    text_world,
    word,
)
from processor.tool_verbs import is_action, reads_a_record

__all__ = ["CONDITIONS", "FAULTS", "ResultReading", "is_action",
           "parse_result", "read_result"]

CONDITIONS: tuple[str, ...] = (
    "success", "timeout", "permission_denied", "not_found", "malformed_result",
    "stale_result", "error", "unknown")
"""Every tool condition :func:`read_result` can give (``unknown``: no result seen)."""

FAULTS: tuple[str, ...] = (
    "timeout", "not_found", "permission_denied", "stale", "rate_limited", "invalid",
    "conflict", "declined", "server_error", "malformed", "error")
"""Every value of :attr:`ResultReading.fault`."""


@dataclass(frozen=True)
class ResultReading:
    """What one tool result says."""

    condition: str
    """One of :data:`CONDITIONS`."""
    world_state: str | None
    """What the body says about the record (``missing``, ``already_acted_on``,
    ``duplicate``, ``partially_completed``), None when it says nothing of it."""
    evidence: str | None
    """Where the verdict came from (``span status``, ``body status=not_found``,
    ``text 'Error: ...'``, ...); None for a plain success."""
    has_id: bool = False
    """A successful result that carries an identifier (``id`` / ``*_id`` / ``*Id`` key, at
    the top level, in a one-key wrapper such as ``{"order": {...}}``, or in the first
    record of a list)."""
    fault: str | None = None
    """The kind of fault, finer than the condition (one of :data:`FAULTS`), None when the
    call did not fail."""
    empty: bool = False
    """The body holds nothing: ``[]``, ``{}``, ``null``, ``""``, or an envelope whose only
    list is empty."""

    @property
    def failed(self) -> bool:
        """Whether the call did not do what was asked (any condition but success/unknown)."""
        return self.condition not in ("success", "unknown")

    @property
    def plain(self) -> bool:
        """A success that says nothing remarkable: no fault, no world-state signal."""
        return self.condition == "success" and self.world_state is None


# ----------------------------------------------------------------------------- bodies

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
_LIST_KEYS = ("results", "items", "data", "records", "entries", "hits", "matches", "rows",
              "orders", "reservations", "tickets", "issues", "customers", "users", "flights")
_INTERESTING_KEYS = _OBJECT_KEYS | _FIELD_KEYS | frozenset(_LIST_KEYS) | {"content"}
"""Keys that can make a dict body more than a plain record (the fast path skips none)."""


class _Verdict:
    """What the parts of one body say, gathered as it is read."""

    __slots__ = ("evidence", "failed", "fault", "success", "world")

    def __init__(self) -> None:
        self.failed = False
        self.success = False
        self.fault: str | None = None
        self.world: str | None = None
        self.evidence: str | None = None

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


def _read_error_member(value: Any, verdict: _Verdict, where: str, depth: int = 0) -> bool:
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
    else:
        _read_message(text, verdict, generic=True)
    return True


def _read_message(text: str, verdict: _Verdict, *, generic: bool) -> None:
    generic = generic or verdict.failed
    if len(text) > 2 * SHORT:
        text = text[: 2 * SHORT]
    fault = text_fault(text, generic=generic)
    if fault is not None and (generic or verdict.failed or not verdict.success):
        verdict.fail(fault, f"body message '{text[:60]}'")
    verdict.see_world(text_world(text))
    if verdict.world is None and not verdict.failed and "partial" in text.lower() \
            and PARTIAL_WORDS.search(text):
        verdict.see_world("partially_completed")


def _read_fields(body: dict[str, Any], verdict: _Verdict, where: str, *, depth: int,
                 inside_error: bool) -> None:
    """Codes, status words and messages of one object (the body or an error object)."""
    present = body.keys() & _FIELD_KEYS  # most records share few keys with these
    envelope = inside_error or _is_envelope(body)
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
                if code >= 400:
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


def _read_status(key: str, value: str, verdict: _Verdict, *, envelope: bool,
                 inside_error: bool) -> None:
    """One status-like word (``status``, ``code``, ``__type``, ...)."""
    if key in _NAMING_KEYS and not inside_error and (not envelope or " " in value):
        return  # a record's name or type is data
    world, weak_fault, strong_fault, success = word(value)
    if world is not None:
        verdict.see_world(world)
        if world == "partially_completed" or not inside_error:
            return
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


def _read_object(body: dict[str, Any], verdict: _Verdict) -> None:
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
    present = body.keys() & _OBJECT_KEYS
    if present:
        _read_markers(body, present, verdict)
    _read_fields(body, verdict, "", depth=0, inside_error=False)


def _read_markers(body: dict[str, Any], present: set[str], verdict: _Verdict) -> None:
    """Failure flags, error members, GraphQL user errors, stale and duplicate flags."""
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
            if key in body:
                value = body[key]
                if key == "error" and isinstance(value, bool):
                    continue  # read as a flag above
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


def _read_inner_text(text: str, verdict: _Verdict) -> None:
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        parsed, malformed = parse_result(stripped)
        if not malformed:
            _read_parsed(parsed, verdict)
            return
    _read_text(stripped, verdict)


def _read_text(text: str, verdict: _Verdict) -> None:
    if ERROR_PREFIX.match(text) or (text.startswith("<") and HTTP_CODE_TEXT.search(text)):
        head = text[: 2 * SHORT]
        match = HTTP_CODE_TEXT.search(head)
        fault = http_fault(int(match.group(1))) if match else None
        verdict.fail(fault, f"text '{text[:60]}'")
        verdict.note(text_fault(head, generic=True))
        verdict.see_world(text_world(head))
        return
    if len(text) > SHORT:
        return
    fault = text_fault(text, generic=False)
    if fault is not None:
        verdict.fail(fault, f"text '{text[:60]}'")
    verdict.see_world(text_world(text))


def _read_parsed(parsed: Any, verdict: _Verdict) -> None:
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


def _is_empty(parsed: Any, text: str) -> bool:
    if parsed is None:
        return text in ("", "null", "None", "undefined", '""')
    if isinstance(parsed, (list, str)):
        return not parsed
    if isinstance(parsed, dict):
        if not parsed:
            return True
        lists = [key for key in _LIST_KEYS if isinstance(parsed.get(key), list)]
        return bool(lists) and not any(
            value for key, value in parsed.items() if isinstance(value, (list, dict)))
    return False


def _has_id(parsed: Any) -> bool:
    if isinstance(parsed, list):
        return bool(parsed) and isinstance(parsed[0], dict) and _has_id(parsed[0])
    if not isinstance(parsed, dict):
        return False
    for key in parsed:
        if key == "id" or key.endswith(("_id", "Id", "ID")) or key in ("uuid", "sid", "key"):
            return True
    if len(parsed) == 1:  # {"order": {...}}
        inner = next(iter(parsed.values()))
        return isinstance(inner, dict) and any(
            key == "id" or key.endswith(("_id", "Id")) for key in inner)
    return False


def read_result(result: str | None, *, status: str = "ok", error: str | None = None,
                tool: str | None = None) -> ResultReading:
    """Classify one tool result (the module docstring has the table).

    ``status`` is the step's status as the processor records it (``ok``, ``error``,
    ``missing``: no result seen); ``error`` the span's error type or message; ``tool`` the
    tool's name, used only to tell an empty answer of a record lookup (``not_found``) from
    an empty answer of an action.
    """
    text = result.strip() if result is not None else ""
    parsed: Any = None
    malformed = False
    if text[:1] in ("{", "[", '"'):
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            malformed = text[0] != '"'
    if status != "error" and type(parsed) is dict and parsed:
        plain = _plain_record(parsed)
        if plain is not None:
            return plain
    verdict = _Verdict()
    if malformed:
        verdict.fail("malformed", "body is not valid JSON")
    elif parsed is not None:
        _read_parsed(parsed, verdict)
    elif text and text not in ("null", "None", "undefined"):
        _read_text(text, verdict)
    empty = result is not None and not malformed and not verdict.failed and \
        _is_empty(parsed, text)
    if status == "error":
        span_fault = _span_fault(error)
        body_fault = verdict.fault if verdict.failed else None
        fault = span_fault if span_fault not in (None, "error", "server_error", "invalid") \
            else (body_fault or span_fault or "error")
        condition = _condition(fault)
        return ResultReading(condition, _world(verdict, condition), "span status",
                             fault=fault)
    if verdict.failed:
        fault = verdict.fault or "error"
        condition = "malformed_result" if fault == "malformed" else _condition(fault)
        return ResultReading(condition, _world(verdict, condition), verdict.evidence,
                             fault=fault)
    if verdict.fault == "stale":
        return ResultReading("stale_result", verdict.world, verdict.evidence, fault="stale")
    if result is None and status == "missing":
        return ResultReading("unknown", None, None)
    if empty and (parsed is None or parsed == {} or parsed == "") and reads_a_record(tool):
        return ResultReading("not_found", "missing", "empty answer to a lookup",
                             fault="not_found", empty=True)
    return ResultReading("success", verdict.world, None if verdict.world is None else
                         verdict.evidence or f"body says {verdict.world}", _has_id(parsed),
                         empty=empty)


def _span_fault(error: str | None) -> str | None:
    if not error:
        return None
    stripped = error.strip()
    if len(stripped) <= 80 and " " not in stripped:  # an exception's name: cached
        return word(stripped)[1]
    return text_fault(stripped, generic=True)


def _condition(fault: str) -> str:
    return CONDITION_OF_FAULT.get(fault, "malformed_result" if fault == "malformed" else "error")


def _world(verdict: _Verdict, condition: str) -> str | None:
    if condition == "not_found":
        return "missing"
    return verdict.world


_SUCCESS = ResultReading("success", None, None)
_SUCCESS_WITH_ID = ResultReading("success", None, None, has_id=True)
_STATUS_ONLY = frozenset({"status", "state"})
_PLAIN_LISTS = frozenset(_LIST_KEYS) - _OBJECT_KEYS - _FIELD_KEYS


def _plain_record(body: dict[str, Any]) -> ResultReading | None:
    """The reading of a record that names no fault, world state or emptiness, quickly;
    None when the body needs the full reading.

    Most results are records whose keys include none that can say a call failed (or only
    ``status`` / ``state`` holding a plain word such as ``shipped``): every step of every
    conversation is read, so this path is kept to a set intersection and a cached word.
    """
    for key in body.keys() & _INTERESTING_KEYS:
        value = body[key]
        if key in _STATUS_ONLY:
            if isinstance(value, str):
                if len(value) > 80:
                    return None
                world, weak_fault, _, _ = word(value)
                if world is not None or weak_fault is not None:
                    return None
            elif not isinstance(value, dict):  # {"status": {"name": "Done"}} (Jira) is data
                return None
        elif key not in _PLAIN_LISTS or value == []:  # line items are data; [] may be empty
            return None
    return _SUCCESS_WITH_ID if _has_id(body) else _SUCCESS
