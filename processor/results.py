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
state refusals             a refusal whose reason is the record's state (any of the texts
                           above, per-field error details such as Zendesk's, error codes):
                           "Error: non-pending order cannot be cancelled", Stripe's "You
                           cannot cancel this PaymentIntent because it has a status of
                           succeeded", Zendesk's "Status: closed prevents ticket update",
                           PayPal's ``PREVIOUSLY_VOIDED`` / "invalid due to the current
                           state of the payment", Jira's "not valid for the current state
                           of this issue", Square's ``DELAYED_TRANSACTION_CANCELED``, tau2's
                           "Line must be active to suspend": a fault (even in a short text
                           with no error prefix: "This order has shipped and can no longer
                           be cancelled"), ``conflict``, world ``already_acted_on`` when the
                           state is a completed one for the action (``partially_completed``
                           for "partially fulfilled"); a state that blocks without being
                           completed (locked, expired, not yet approved, still processing,
                           "must be verified to") is ``conflict`` with no world state; a rule
                           of time or eligibility ("within 24 hours of departure", "outside
                           the 30 day return window", "non-refundable") is ``declined`` with
                           no world state; money, permission and missing-record words keep
                           their own readings. A state named without a refusal ("Order #1 was
                           cancelled", a record's ``status: cancelled``) is data. Rules and
                           word lists: :mod:`processor._result_states`
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
answers, refusals by the record's state), ``declined`` (declined, refused, rejected,
insufficient funds, 402, refusals by a rule of time or eligibility),
``invalid`` (invalid, validation, "must be", bad request, 400/422, missing field, JSON-RPC
-32600..-32602), ``server_error`` (5xx, internal, unavailable), ``error`` (anything else).
When several apply, the first in that order wins: timeout, not found, permission, stale,
rate limited, conflict, declined, invalid, server error, error (Jira's "does not exist or
you do not have permission" is ``not_found``, as its HTTP code says; Stripe's
``charge_already_refunded`` of type ``invalid_request_error`` is a ``conflict``). A
specific HTTP code in the body (401/403/404/408/410/504) outranks the words around it
only through this same order; but a 403 whose own message refuses by the record's state
(``{"status": 403, "msg": "Cannot cancel an order that has been shipped"}``) is that
refusal (``conflict``, ``already_acted_on``), not a permission, and so is an error code
of permission beside such a message (``{"error": "not_allowed", "message": "The order
#W1 is delivered, not pending: it cannot be cancelled."}``).

Rules are not verdicts. The answer of a tool named as a reader (a lookup, a policy page,
a search: not a tool without a name or with a verb not known, whose text may be an
action's refusal) that states a rule about kinds of things ("Refunds are accepted within
30 days.", "Late cancellations are not allowed.", "Basic economy: changes not
permitted.") is a success; a named lookup's answer that reports a state forbidding
some action ("Your order has shipped and can no longer be cancelled online") is what it
found; a record a named lookup returns keeps its own failure members as data (a retrieved
charge with ``failure_code: card_declined``). So does a record in a failed state of its
own, however few its keys: a named lookup's body that carries a record's identifier
(``id``, ``*_id``, ``number``; not a request's or trace's id, nor an error token such as
DigitalOcean's ``{"id": "not_found"}``) and a status, state, conclusion, outcome or result
that is a weak failure word (``failed``, ``declined``, ``rejected``, ``error``, a GitHub
check run's ``failure``) is a success with :attr:`ResultReading.record_state` set: its error
members and error codes say why the record failed (``{"transaction_id": ..., "status":
"FAILED", "error_code": "INSUFFICIENT_FUNDS"}``), and its messages count only when they say
no record was found. Strong words (``not_found``, ``timeout``, ``permission_denied``) stay
the lookup's; an action's answer of the same shape stays a failure.
A text that names one record or the caller, or starts with a refusal ("Cannot cancel
reservation within 24 hours"), is no rule; and an action answering with a rule was refused
by it. "Error codes: ..." / ``error_rate: 0`` are headings, not errors.

World state (:attr:`ResultReading.world_state`): ``missing`` (a ``not_found`` reading),
``already_acted_on`` (a status ``already_…``, "already cancelled / exists / enabled / been
…", ``ALREADY_EXISTS``, Stripe's ``charge_already_refunded``, a refusal that names a
completed state: "state refusals" above), ``duplicate`` (``duplicate:
true``, "duplicate", "multiple / more than one … match", ``DuplicateValue``),
``partially_completed`` (status ``partial`` / ``partially_*`` / ``partial_success``, a
refusal naming a partial state: "Cannot cancel a partially fulfilled order"), else
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

from processor._result_bodies import (
    INTERESTING_KEYS,
    LIST_KEYS,
    PLAIN_LISTS,
    Verdict,
    parse_result,
    read_parsed,
    read_text,
)
from processor._result_states import end_state, state_refusal
from processor._result_words import CONDITION_OF_FAULT, text_fault, word
from processor.tool_verbs import is_action, reads, reads_a_record

__all__ = ["CONDITIONS", "FAULTS", "ResultReading", "end_state", "is_action",
           "parse_result", "read_result", "state_refusal"]

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
    record_state: str | None = None
    """On a successful lookup, the failed state of the record it returned (``failed``,
    ``declined``, a check run's ``failure``): what the world holds, not a fault of the
    call; None otherwise."""

    @property
    def failed(self) -> bool:
        """Whether the call did not do what was asked (any condition but success/unknown)."""
        return self.condition not in ("success", "unknown")

    @property
    def plain(self) -> bool:
        """A success that says nothing remarkable: no fault, no world-state signal."""
        return self.condition == "success" and self.world_state is None



def _is_empty(parsed: Any, text: str) -> bool:
    if parsed is None:
        return text in ("", "null", "None", "undefined", '""')
    if isinstance(parsed, (list, str)):
        return not parsed
    if isinstance(parsed, dict):
        if not parsed:
            return True
        lists = [key for key in LIST_KEYS if isinstance(parsed.get(key), list)]
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
    # only a tool named as a reader reports data; an unknown verb may be an action
    verdict = Verdict(lookup=reads(tool))
    if malformed:
        verdict.fail("malformed", "body is not valid JSON")
    elif parsed is not None:
        read_parsed(parsed, verdict)
    elif text and text not in ("null", "None", "undefined"):
        read_text(text, verdict)
    verdict.settle()
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
                         empty=empty, record_state=verdict.record_state)


def _span_fault(error: str | None) -> str | None:
    if not error:
        return None
    stripped = error.strip()
    if len(stripped) <= 80 and " " not in stripped:  # an exception's name: cached
        return word(stripped)[1]
    return text_fault(stripped, generic=True)


def _condition(fault: str) -> str:
    return CONDITION_OF_FAULT.get(fault, "malformed_result" if fault == "malformed" else "error")


def _world(verdict: Verdict, condition: str) -> str | None:
    if condition == "not_found":
        return "missing"
    return verdict.world


_SUCCESS = ResultReading("success", None, None)
_SUCCESS_WITH_ID = ResultReading("success", None, None, has_id=True)
_STATUS_ONLY = frozenset({"status", "state", "conclusion"})


def _plain_record(body: dict[str, Any]) -> ResultReading | None:
    """The reading of a record that names no fault, world state or emptiness, quickly;
    None when the body needs the full reading.

    Most results are records whose keys include none that can say a call failed (or only
    ``status`` / ``state`` holding a plain word such as ``shipped``): every step of every
    conversation is read, so this path is kept to a set intersection and a cached word.
    """
    for key in body.keys() & INTERESTING_KEYS:
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
        elif key not in PLAIN_LISTS or value == []:  # line items are data; [] may be empty
            return None
    return _SUCCESS_WITH_ID if _has_id(body) else _SUCCESS
