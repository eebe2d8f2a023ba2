"""Refusals that name the record's state: "cannot be cancelled: the order has shipped".

An API that refuses an action because of where the record stands in its life rarely says
"already". It names the state that forbids the action (Shopify's "Cannot cancel an order
that has been fulfilled", Zendesk's "Status: closed prevents ticket update", tau2's
"Line must be active to suspend"), the state the action needed ("non-pending order cannot
be cancelled", Stripe's "Only a PaymentIntent with one of the following statuses may be
canceled: requires_payment_method, ..."), or only that the state is wrong (PayPal's "This
request is invalid due to the current state of the payment", Jira's "not valid for the
current state of this issue", ``INVALID_RESOURCE_STATE``). :func:`state_refusal` reads one
text, :func:`token_state` one error code; both answer with a :data:`Refusal`:

=======================  =================================================================
refusal                  when
=======================  =================================================================
``already_acted_on``     a refusal (cannot / can't / unable to / could not / may not / no
                         longer / prevents / "must be X to Y" / "only X can be Y" / "can
                         only Y X") and the record's state is a completed one for the
                         action: cancelled, refunded, shipped, fulfilled, delivered,
                         closed, merged, captured, voided, completed, succeeded, settled,
                         paid, processed, resolved, returned, redeemed, ended, terminated
                         ("is", "has been", "a status of", "Status:", "a voided
                         authorization", "previously ..."); the state the action needed
                         is denied ("non-pending", "not pending", "is not in-progress",
                         "must be active to suspend", "only ... with one of the following
                         statuses", "can only cancel pending orders"; a standing state,
                         active or suspended, only for the action that ends it); a state
                         of its own kind named by the action (suspended when suspending,
                         locked when locking); a state called wrong ("in its current
                         state", "the current state of", "invalid / unexpected / illegal
                         state", ``*_STATE_INVALID``, ``*_unexpected_state``); codes
                         ``<RECORD>_<STATE>`` (``DELAYED_TRANSACTION_CANCELED``,
                         ``AUTHORIZATION_VOIDED``, ``PREVIOUSLY_CAPTURED``,
                         ``ORDER_IS_CLOSED``)
``partially_completed``  the completed state is partial ("partially fulfilled")
``blocked``              a state refusal whose state is not a completed one for the
                         action: locked / archived / suspended / disabled when the action
                         is another (commenting on a locked issue), expired, "not yet" /
                         "still" / "until" states (not yet approved, still processing), a
                         required state the record has not reached ("must be verified
                         to", "only paid orders can be fulfilled"), "must be active to
                         transfer", and booking / creating against a completed record (a
                         cancelled flight): a conflict without a world state
``policy``               a refusal by a rule of time or eligibility: "within 24 hours of
                         departure", "more than 30 days", "non-refundable", "not
                         eligible", "outside the return window", "too late": ``declined``,
                         no world state (a time window outranks a state named beside it)
None                     anything else; and always when the text also names insufficient
                         funds / a limit / an amount to exceed, a permission
                         ("permission", "not authorized", "forbidden", "access denied")
                         or a missing record ("not found", "does not exist"): those
                         readings stay theirs
=======================  =================================================================

:func:`end_state` reads a refused answer the way the person who asked reads it: whether
the state the action leaves already holds ("already cancelled" when cancelling: the goal
is met by itself) or another state forbids it ("is delivered, not pending": the goal
cannot be had). Both are ``already_acted_on`` for the failure map.

A state named without a refusal ("Order #1 was cancelled") is a record's data, not a
refusal; a denied state ("not pending") or a state called wrong counts without a refusal
verb only when the text is already known to be a failure (``failed``). Each check starts
with substrings that every match contains, so texts naming no refusal cost a few ``in``
tests.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

__all__ = ["EndState", "Refusal", "end_state", "state_refusal", "token_state"]

Refusal = Literal["already_acted_on", "partially_completed", "blocked", "policy"]
EndState = Literal["reached", "passed"]

# Participles of completed states: a record in one has been acted on for good (or moved
# past the point where cancelling, refunding, editing ... is possible).
_COMPLETED = frozenset({
    "cancelled", "canceled", "refunded", "shipped", "fulfilled", "fulfiled", "delivered",
    "closed", "merged", "captured", "voided", "completed", "succeeded", "settled",
    "finalized", "finalised", "resolved", "solved", "returned", "exchanged", "redeemed",
    "paid", "processed", "ended", "terminated", "reversed", "dispatched", "invoiced"})
# States of their own kind: already acted on only when the action is the same one
# (suspended when suspending), else they block the action without completing it.
_OWN_KIND = frozenset({
    "suspended", "locked", "archived", "disabled", "deactivated", "blocked", "frozen",
    "paused", "enabled", "activated", "approved", "confirmed", "submitted", "published",
    "verified", "opened", "held"})
_EXPIRED = frozenset({"expired", "lapsed"})
# States an action needs that the record has not reached yet: "must be approved to ship".
_NOT_REACHED = frozenset({
    "approved", "verified", "confirmed", "authorized", "authorised", "paid", "captured",
    "shipped", "delivered", "completed", "activated", "enabled", "signed", "submitted",
    "published", "ready", "eligible", "settled", "fulfilled", "accepted", "reviewed"})
# Early states whose denial ("non-pending", "not open") says the record moved on.
_OPEN = frozenset({
    "pending", "open", "active", "unfulfilled", "unpaid", "unshipped", "draft", "new",
    "scheduled", "queued", "in-progress", "in_progress", "inprogress", "processing",
    "awaiting", "live", "ongoing", "suspended", "booked", "placed", "created", "initiated",
    "requested", "uncaptured", "authorized", "authorised"})
_RECORD_NOUNS = frozenset({
    "order", "reservation", "booking", "ticket", "issue", "payment", "paymentintent",
    "intent", "charge", "invoice", "subscription", "authorization", "authorisation",
    "refund", "transaction", "shipment", "fulfillment", "fulfilment", "line", "account",
    "pull", "pr", "request", "item", "claim", "case", "capture", "agreement", "call",
    "message", "return", "exchange", "bill", "plan", "cart", "checkout", "session", "job",
    "task", "contract", "trip", "flight", "ride", "delivery", "quote", "transfer",
    "payout", "dispute", "record", "entry", "document", "draft", "merge", "branch",
    "conversation", "thread", "comment", "deal", "appointment", "membership", "voucher",
    "coupon", "card", "gift", "workflow", "operation", "resource", "object"})
# Early states that only a workflow step leaves; their denial counts without a verb too.
_WORKFLOW_OPEN = frozenset({
    "pending", "open", "unfulfilled", "unpaid", "unshipped", "draft", "scheduled", "queued",
    "in-progress", "in_progress", "inprogress", "uncaptured"})
# Standing states that an action ends: "must be active to suspend" is acted on, "must be
# active to transfer" is blocked.
_STANDING = {"active": ("suspend", "deactivat", "disabl", "clos", "cancel", "terminat",
                        "paus", "block", "freez", "lock", "end", "expir"),
             "live": ("suspend", "deactivat", "disabl", "clos", "cancel", "terminat",
                      "paus", "end", "unpublish"),
             "suspended": ("resum", "reactivat", "unsuspend", "activat", "restor",
                           "enabl", "unblock")}
# What an early workflow state gates: leaving "pending" ends cancelling, editing,
# shipping; it says nothing of refunds or returns ("non-pending order cannot be refunded"
# blocks, it does not say the refund was done).
_GATED_BY_OPEN = ("cancel", "modif", "updat", "chang", "edit", "void", "delet", "remov",
                  "withdraw", "amend", "reschedul", "revis", "retract", "recall", "redirect",
                  "hold", "paus", "ship", "fulfil", "dispatch", "process", "complet", "clos",
                  "resolv", "merg", "confirm", "accept", "reject", "declin", "approv",
                  "captur", "charg", "submit", "transition", "assign", "reassign")
_CREATING = ("book", "creat", "reserv", "purchas", "buy", "schedul", "regist")
_GENERIC_ACTIONS = ("perform", "complet", "process", "execut", "proceed", "handl", "carr",
                    "appli", "apply", "accept", "action", "act", "do", "done", "made", "make",
                    "chang", "updat", "modif", "edit")
"""Verbs that say nothing of which action (a state is then judged on its own)."""
_COPULAS = frozenset({
    "is", "was", "are", "were", "been", "already", "previously", "fully", "now", "status",
    "state", "marked", "as", "has", "have", "had", "in", "become", "became", "got",
    "it's", "currently"})
_DETERMINERS = frozenset({"a", "an", "the", "this", "that", "its", "their", "these",
                          "those", "any"})
_DENIALS = frozenset({"not", "never", "yet", "still", "until", "unless", "if", "awaiting",
                      "without", "whether", "be", "to"})

_REFUSAL_HINTS = ("cannot", "can not", "can't", "could not", "couldn't", "unable",
                  "not able", "may not", "must not", "not allowed", "not permitted",
                  "not possible", "impossible", "no longer", "prevent", "only ", "must be",
                  "must first be")
_ANY_REFUSAL_HINT = re.compile("|".join(re.escape(hint) for hint in _REFUSAL_HINTS))
_NOT_YET = re.compile(r"\b(?:still|not yet|yet to be|(?:has|have|had) not been|"
                      r"(?:hasn|haven|hadn)'?t been)\b", re.I)
_REFUSAL_VERBS = re.compile(
    r"\b(?:cannot|can ?not|can'?t|could ?n[o']t|unable to|not able to|may not|must not|"
    r"(?:is|are|was|were) not (?:allowed|permitted|possible) to|impossible to|"
    r"(?:can|could|may) no longer)"
    r"(?:\s+(?:be|been|yet|further|longer|again|now))*\s+(?P<verb>[a-z]+)", re.I)
_REFUSED_NOUN = re.compile(
    r"\b(?P<verb>[a-z]+)s?\s+(?:is\s+|are\s+)?(?:not|no longer)\s+"
    r"(?:allowed|permitted|possible)\b", re.I)
_PREVENTS = re.compile(
    r"\bprevents?\s+(?:(?:the|this|any|further|a|an)\s+)?(?P<verb>[a-z]+)"
    r"(?:\s+(?P<second>[a-z]+))?", re.I)
_ONLY = re.compile(
    r"\bonly\b(?P<states>[^.;]{0,160}?)\b(?:can|may|could|will)\s+be\s+(?P<verb>[a-z]+)"
    r"(?P<after>[^.;]{0,160})", re.I)
_CAN_ONLY = re.compile(
    r"\b(?:can|may|could) only\s+(?:be\s+)?(?P<verb>[a-z]+)(?P<after>[^.;]{0,160})", re.I)
_MUST_BE = re.compile(
    r"\bmust\s+(?:first\s+)?be\s+(?P<state>[a-z][a-z_-]*(?: [a-z][a-z_-]*)?)\s+"
    r"(?:in order\s+)?(?:to|before|prior to)\s+(?:being\s+)?(?P<verb>[a-z]+)", re.I)
_WRONG_STATE = re.compile(
    r"\b(?:(?P<strong>(?:invalid|unexpected|illegal|wrong|incorrect|improper) (?:\w+ )?state"
    r"(?! (?:code|parameter|param|value|name|field|abbreviation|province|format|token|"
    r"string))|(?:unexpected|illegal|wrong|incorrect|improper) (?:\w+ )?status\b|"
    r"invalid (?:state|status) transition|state (?:is )?(?:invalid|not valid)\b|"
    r"(?:state|status) (?:of (?:the|this) \w+ )?does ?n[o']t (?:allow|permit))|"
    r"in (?:its|their|the|this) current (?:state|status)|(?:for|in|with) the current "
    r"(?:state|status)|current (?:state|status) (?:of|does ?n[o']t|do ?n[o']t))", re.I)
"""A state called wrong. The ``strong`` forms count alone; "the current state of" only
beside a refusal, a failure or "invalid" ("check the current status of your order" is
no refusal)."""
_WRONG_STATE_HINTS = ("state", "status")
_NOT_STATE_CONTEXT = re.compile(r"\b(?:address|billing|shipping|oauth|us|province|country)"
                                r"\W+(?:\w+\W+)?(?:invalid|wrong|incorrect)?\W*state\b|"
                                r"\bstate (?:parameter|param|mismatch)\b", re.I)
_POLICY = re.compile(
    r"\bwithin\s+(?:the\s+)?(?:first\s+|last\s+)?\d+\s*(?:-\s*)?(?:hours?|hrs?|h|days?|weeks?|"
    r"months?|minutes?|mins?)\b|\b(?:more|less|fewer) than\s+\d+\s*(?:hours?|days?|weeks?|"
    r"months?|minutes?)\b|\b(?:after|beyond|past|over)\s+\d+\s*(?:hours?|days?|weeks?|"
    r"months?)\b|\b\d+\s*(?:-\s*)?(?:hours?|days?|weeks?)\s+(?:before|after|of|"
    r"prior|from|since)\b|\bnon-?refundable\b|\bnot eligible\b|\bineligible\b|"
    r"\b(?:return|refund|cancell?ation|change|exchange|grace|modification)\s+(?:window|"
    r"period)\b|\b(?:window|deadline) (?:has )?(?:passed|closed|expired)\b|"
    r"\boutside (?:of )?(?:the|its) \w+ (?:window|period)\b|\btoo late\b|\bpast the "
    r"(?:\w+ )?(?:deadline|window)\b", re.I)
_POLICY_HINTS = ("within", "than", "hour", "day", "week", "refundable", "eligible",
                 "window", "period", "deadline", "too late")
_VETO = re.compile(
    r"insufficient|not enough|\bexceed|\blimit\b|permission|not authori[sz]ed|unauthori[sz]ed|"
    r"forbidden|access (?:is )?denied|not found|does ?n[o']t exist|no such\b|"
    r"could ?n[o']t (?:be )?find|cannot find|can'?t find|unable to (?:find|locate)|"
    # the plumbing's state, not a record's: "the socket was closed", "file is closed"
    r"\b(?:connection|socket|stream|pipe|channel|websocket|tcp|tls|ssl|file handle|"
    r"file descriptor)s?\b|\bfile (?:is|was|has been) closed|"
    r"\b(?:read|write) (?:from|to)? ?(?:a |the )?closed", re.I)
_VETO_HINTS = ("insufficient", "enough", "exceed", "limit", "permission", "authori",
               "forbidden", "denied", "found", "exist", "no such", "find", "locate",
               "connection", "socket", "stream", "pipe", "channel", "tcp", "tls", "ssl",
               "file", "closed")
_WORD = re.compile(r"[a-z][a-z'_-]*")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _root(word: str) -> str:
    """A rough stem, enough to tell "cancelled" and "cancellation" from "refund"."""
    word = word.lower().strip("'-_")
    if word == "paid":
        return "pay"
    for suffix in ("ations", "ation", "ments", "ment", "ing", "led", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _same(first: str, second: str) -> bool:
    if min(len(first), len(second)) < 3:
        return first == second
    return first.startswith(second) or second.startswith(first)


def _is_generic(action: str) -> bool:
    return any(action == verb or (len(verb) > 3 and action.startswith(verb))
               for verb in _GENERIC_ACTIONS)


def _tokens(text: str) -> list[str]:
    return [match.group(0).strip("'-_").removesuffix("'s") for match in
            _WORD.finditer(text.lower())]


def _actions(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The verbs the text refuses (with their spans, which are not states)."""
    verbs: list[str] = []
    spans: list[tuple[int, int]] = []
    for pattern in (_REFUSAL_VERBS, _REFUSED_NOUN, _PREVENTS):
        for match in pattern.finditer(text):
            verbs.append(match.group("verb").lower())
            spans.append(match.span("verb"))
            if pattern is _PREVENTS and match.group("second"):
                verbs.append(match.group("second").lower())
                spans.append(match.span("second"))
    return verbs, spans


def _judge(state: str, actions: list[str]) -> Refusal:
    """What a completed or own-kind ``state`` means for the refused ``actions``."""
    state_root = _root(state)
    if any(_same(state_root, _root(action)) for action in actions):
        return "already_acted_on"
    if state not in _COMPLETED:
        return "blocked"  # locked, archived, expired, suspended when not suspending
    specific = [_root(action) for action in actions if not _is_generic(action)]
    if specific and all(root.startswith(_CREATING) for root in specific):
        return "blocked"  # booking a cancelled flight: the state is another record's
    return "already_acted_on"


def _denied(state: str, actions: list[str]) -> Refusal:
    """What the denial of a state the action needed means ("must be active to suspend")."""
    if state in _NOT_REACHED:
        return "blocked"  # "must be verified to withdraw": not there yet
    roots = [_root(action) for action in actions if not _is_generic(action)]
    ends = _STANDING.get(state)
    if ends is not None:
        return "already_acted_on" if any(root.startswith(ends) for root in roots) \
            else "blocked"
    if roots and not any(root.startswith(_GATED_BY_OPEN) for root in roots):
        return "blocked"
    return "already_acted_on"


def _named_state(text: str, spans: list[tuple[int, int]]) -> tuple[str, bool] | None:
    """The first completed / own-kind state the text says the record is in (not the
    refused verb itself), with whether it is partial; None when it names none."""
    lowered = text.lower()
    matches = [match for match in _WORD.finditer(lowered)
               if not any(start <= match.start() < end for start, end in spans)]
    words = [match.group(0).strip("'-_").removesuffix("'s") for match in matches]
    for index, word in enumerate(words):
        partial = word.startswith("partially-")
        if partial:
            word = word.removeprefix("partially-")
        if word not in _COMPLETED and word not in _OWN_KIND and word not in _EXPIRED:
            continue
        before = words[max(0, index - 3): index]
        if any(prior in _DENIALS or prior.endswith("n't") for prior in before):
            continue  # "has not been captured", "still processing", "to be shipped"
        prior = before[-1] if before else ""
        partial = partial or prior == "partially"
        if partial and len(before) > 1:
            prior = before[-2]
        following = words[index + 1] if index + 1 < len(words) else ""
        noun_follows = following.rstrip("s") in _RECORD_NOUNS or following in _RECORD_NOUNS
        if prior in _COPULAS or (prior == "of" and {"status", "state"} & set(before)) or \
                (prior in _DETERMINERS and noun_follows) or (not prior and noun_follows) or \
                (partial and (noun_follows or prior in _COPULAS)):
            return word, partial
    return None


def _denied_open_state(text: str, states: frozenset[str]) -> str | None:
    """The state the action needed, when the text denies it: "non-pending", "is not
    open", "no longer active", "not in pending status"; None when it denies none."""
    words = _tokens(text)
    for index, word in enumerate(words):
        if word.startswith("non-") and word[4:] in states:
            return word[4:]
        if word not in states:
            continue
        before = words[max(0, index - 3): index]
        if "yet" in before or not before:
            continue
        if before[-1] in ("not", "longer") or before[-1].endswith("n't") or (
                len(before) > 1 and before[-2] in ("not", "longer") and
                before[-1] in ("in", "an", "a", "the")):
            return word
    return None


@lru_cache(maxsize=8192)
def state_refusal(text: str, *, failed: bool = False) -> Refusal | None:
    """Whether ``text`` refuses an action because of the record's state (module table).

    ``failed`` says the text is already known to be a failure (an ``Error: ...`` text, an
    error member, a failed envelope's message): a denied or wrong state then counts
    without a refusal verb. Cached: a stream's refusals are few texts, each read for its
    fault and its world state.
    """
    lowered = text.lower()
    refuses = _ANY_REFUSAL_HINT.search(lowered) is not None
    wrong = False
    if any(hint in lowered for hint in _WRONG_STATE_HINTS):
        match = _WRONG_STATE.search(text)
        wrong = match is not None and not _NOT_STATE_CONTEXT.search(text) and (
            match.group("strong") is not None or refuses or failed or
            "invalid" in lowered or "not valid" in lowered)
    if not refuses and not wrong and not failed:
        return None
    if any(hint in lowered for hint in _VETO_HINTS) and _VETO.search(text):
        return None
    if (refuses or failed) and any(hint in lowered for hint in _POLICY_HINTS) and \
            _POLICY.search(text):
        return "policy"
    if refuses:
        reading = _refused(text, lowered)
        if reading is not None:
            return reading
    if wrong or (failed and any(hint in lowered for hint in _DENIAL_HINTS) and
                 _denied_open_state(text, _WORKFLOW_OPEN) is not None):
        return "already_acted_on"
    return None


_DENIAL_HINTS = ("non-", "not ", "n't ", "no longer")


def _refused(text: str, lowered: str) -> Refusal | None:
    actions, spans = _actions(text)
    if "must" in lowered:
        for match in _MUST_BE.finditer(text):
            state = match.group("state").lower().split()[0]
            if state in _OPEN or state in _OWN_KIND or state in _COMPLETED or \
                    state in _NOT_REACHED:
                return _denied(state, [match.group("verb").lower()])
    if "only" in lowered:
        listings = [(match.group("states") + " " + match.group("after"), match.group("verb"))
                    for match in _ONLY.finditer(text)]
        listings += [(match.group("after"), match.group("verb"))
                     for match in _CAN_ONLY.finditer(text)]
        for listing, verb in listings:
            listed = _tokens(listing)
            open_state = next((word for word in listed if word in _OPEN), None)
            if open_state is not None:
                return _denied(open_state, [verb.lower()])
            if any(word.startswith("requires_") for word in listed):
                return "already_acted_on"
            if any(word in _NOT_REACHED for word in listed):
                return "blocked"
            if {"status", "statuses", "state", "states"} & set(listed):
                return "already_acted_on"
    if not actions:
        return None
    named = _named_state(text, spans)
    if named is not None:
        state, partial = named
        reading = _judge(state, actions)
        if partial and reading == "already_acted_on":
            return "partially_completed"
        return reading
    denied = _denied_open_state(text, _OPEN)
    if denied is not None:
        return _denied(denied, actions)
    if _NOT_YET.search(text) or _denied_open_state(text, _NOT_REACHED) is not None:
        return "blocked"  # "still processing", "has not been captured"
    return None


def token_state(value: str) -> Refusal | None:
    """What an error code says of the record's state: ``INVALID_RESOURCE_STATE``,
    ``payment_intent_unexpected_state``, ``PAYMENT_STATE_INVALID`` (a wrong state);
    ``DELAYED_TRANSACTION_CANCELED``, ``AUTHORIZATION_VOIDED``, ``PREVIOUSLY_CAPTURED``,
    ``ORDER_IS_CLOSED`` (a record in a completed state). Read only on error codes: a
    record's own ``status`` is data."""
    if len(value) > 80 or " " in value.strip():
        return None
    parts = [part.lower() for part in _PARTS.findall(value)]
    if len(parts) < 2:
        return None
    if "state" in parts and ({"invalid", "unexpected", "illegal", "wrong", "incorrect"} &
                             set(parts)) and not {"code", "param", "parameter"} & set(parts) \
            and parts[-1] != "exception":  # Java's IllegalStateException is a bug, not a state
        return "already_acted_on"
    last = parts[-1]
    if last in _COMPLETED and ("previously" in parts or "is" in parts or any(
            part in _RECORD_NOUNS for part in parts[:-1])):
        return "partially_completed" if "partially" in parts else "already_acted_on"
    return None


_ALREADY_STATE = re.compile(
    r"\balready\s+(?:(?:been|be|being|is|was|were|are|marked|set|in|as|a|an|the|to)\s+)*"
    r"(?P<state>[a-z]+)")
# "already <state>" words that say the goal's thing is there, whatever the action was.
_ALREADY_HOLDS = frozenset({"exists", "exist", "awaiting", "has", "have", "registered",
                            "subscribed", "enrolled", "done", "there", "present"})
# The state is someone else's: the seat, slot or address cannot be had, not already had.
_SOMEONE_ELSE = re.compile(r"\b(?:by|to|for|with)\s+(?:another|other|a different)\b"
                           r"|\bsomeone else\b|\bin use\b")
# What an action that ends a standing state leaves: resuming a line leaves it active.
_LEAVES_STANDING = {"active", "live", "enabled", "activated", "unlocked", "unblocked",
                    "reactivated", "resumed", "restored"}


def _reaches(state: str, done: str) -> bool:
    """Whether a record in ``state`` is where the action that leaves ``done`` puts it."""
    state_root, done_root = _root(state), _root(done)
    if _same(state_root, done_root):
        return True
    return state in _LEAVES_STANDING and done_root.startswith(_STANDING["suspended"])


def end_state(text: str, done: str | None) -> EndState | None:
    """For a refused or "already" answer to an action that leaves a record ``done``
    (``cancelled``, ``enabled``; None when unknown: then the action the text refuses, and
    an "already ..." that refuses nothing is reached): ``reached`` when the text says the
    record already is so ("already cancelled", ``already_cancelled``, "Status:
    cancelled", "Roaming was already enabled", "already exists", "is already awaiting
    payment"), ``passed`` when it names another state that forbids the action ("is
    delivered, not pending: it cannot be cancelled", "has already shipped"), None when it
    names no state the record is in ("non-pending order cannot be cancelled", "must be
    active to suspend": only the state the action needed).

    The processor reads both as ``already_acted_on`` (the record's state forbids the
    action); the simulated person needs to tell them apart: the first means its goal
    holds, the second that it cannot be had.
    """
    lowered = re.sub(r"[_-]+", " ", text.lower())
    actions, spans = _actions(lowered)
    targets = [done] if done is not None else [
        action for action in actions if not _is_generic(action)]
    reached = passed = False
    if "already" in lowered:
        if _SOMEONE_ELSE.search(lowered):  # "already booked by another customer"
            return "passed"
        for match in _ALREADY_STATE.finditer(lowered):
            state = match.group("state")
            if any(_reaches(state, target) for target in targets) or (
                    done is None and not targets):  # "already X", nothing refused
                reached = True
            elif state in _ALREADY_HOLDS:
                reached = True  # already exists, already awaiting payment, already has
            else:
                passed = True  # already shipped when cancelling, already departed, taken
        if reached or passed:
            return "reached" if reached else "passed"
    named = _named_state(lowered, spans)
    if named is None:
        status = _STATUS_IS.search(lowered)  # "status: Active", "a status of succeeded"
        if status is None or status.group("state") in _NOT_A_STATE:
            return None
        named = status.group("state"), False
    state, partial = named
    return "reached" if any(_reaches(state, target) for target in targets) and not partial \
        else "passed"


_STATUS_IS = re.compile(r"\b(?:status|state)\s*(?:[:=]\s*|is\s+|of\s+)(?:now\s+)?"
                        r"(?P<state>[a-z]+)")
_NOT_A_STATE = frozenset({"not", "invalid", "unknown", "the", "a", "an", "this", "that",
                          "its", "your", "wrong", "incorrect", "none", "null", "required"})
