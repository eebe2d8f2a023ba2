"""The words conduct is judged by, shared by the conduct checks and the offline agent.

Private to :mod:`generator.checks` (which re-exports the public names) and
:mod:`generator.offline_agent`, which speaks with the same words the checks listen for:

* tool names: :func:`name_tokens`, :func:`is_mutating` (a name whose first word is not a
  read verb and that holds an action stem: ``refund_order`` yes, ``get_refund_status``
  no), :func:`past_tense` (``cancel_order`` → ``cancelled``);
* identifiers: :func:`looks_like_identifier` for an argument value (a token with a digit
  such as ``ORD-4821``, ``#W8178512`` or ``credit_card_7815826``, an e-mail address, a
  phone number, or a long number under an id-like key), :func:`identifiers_in` for the
  ids a text states, and :func:`normalise` (so ``ORD-4821`` is found in "ord 4821");
* results: :func:`result_failure` (why a result says the call did not do what was asked,
  read through :func:`processor.results.read_result`);
* claims: :func:`claims_success` and :func:`claimed_actions` read sentence by sentence and
  skip questions and sentences with a negation ("I couldn't refund ..."); admissions:
  :func:`admits_failure`; the simulation's own words: :func:`mentions_harness`.

Word lists are matched against a text's set of lowercase words, which costs a fraction of
what an alternation with ``\\b`` costs in Python's regex engine; phrases by substring.
"""

from __future__ import annotations

import re
from functools import lru_cache

from processor.results import ResultReading, is_action, read_result

# past tense → stem, for verbs an agent uses to claim it acted
PAST_TENSES: dict[str, str] = {
    "cancelled": "cancel", "canceled": "cancel", "refunded": "refund",
    "updated": "update", "changed": "change", "modified": "modify", "edited": "edit",
    "deleted": "delete", "removed": "remove", "created": "create", "added": "add",
    "booked": "book", "rebooked": "book", "reserved": "reserve", "reset": "reset",
    "issued": "issue", "sent": "send", "resent": "send", "processed": "process",
    "submitted": "submit", "transferred": "transfer", "scheduled": "schedule",
    "rescheduled": "reschedule", "applied": "apply", "closed": "close",
    "reopened": "reopen", "opened": "open", "credited": "credit", "charged": "charge",
    "upgraded": "upgrade", "downgraded": "downgrade", "renewed": "renew",
    "replaced": "replace", "placed": "place", "paid": "pay", "approved": "approve",
    "escalated": "escalate", "unlocked": "unlock", "locked": "lock",
    "activated": "activate", "deactivated": "deactivate", "suspended": "suspend",
    "restored": "restore", "returned": "return", "exchanged": "exchange",
    "registered": "register", "subscribed": "subscribe", "unsubscribed": "unsubscribe",
    "enrolled": "enroll", "assigned": "assign", "granted": "grant", "revoked": "revoke",
    "disabled": "disable", "enabled": "enable", "blocked": "block",
    "unblocked": "unblock", "filed": "file", "logged": "log", "set": "set",
    "resumed": "resume", "refueled": "refuel", "refuelled": "refuel", "toggled": "toggle",
    "topped": "top", "reactivated": "reactivate", "waived": "waive",
}
_PAST_OF: dict[str, str] = {}
for _past, _stem in PAST_TENSES.items():
    _PAST_OF.setdefault(_stem, _past)
#: Name tokens that make a tool mutating (unless its first token is a read verb).
MUTATING_STEMS = frozenset(PAST_TENSES.values()) | {
    "make", "post", "put", "patch", "write", "insert", "cancellation", "refunds",
}
_READ_VERBS = frozenset({
    "get", "lookup", "look", "find", "search", "list", "check", "fetch", "read", "show",
    "view", "track", "query", "describe", "retrieve", "verify", "validate", "calculate",
    "estimate", "count", "status", "info", "is", "has", "can", "browse", "see",
})
_NAME_SPLIT = re.compile(r"[_\-\s.:/]+|(?<=[a-z])(?=[A-Z])")


@lru_cache(maxsize=4096)
def name_tokens(name: str) -> tuple[str, ...]:
    """Lowercase words of a tool name (``cancelOrder``, ``cancel_order`` → cancel, order)."""
    return tuple(part.lower() for part in _NAME_SPLIT.split(name) if part)


@lru_cache(maxsize=1024)
def is_mutating(tool: str) -> bool:
    """Whether a tool name says it changes something (refund_order yes, get_refund no):
    an action stem in a name that does not open with a read verb, or an action as the
    processor reads tool names (:func:`processor.results.is_action`: ``refuel_data``)."""
    tokens = name_tokens(tool)
    if not tokens or tokens[0] in _READ_VERBS:
        return False
    return any(token in MUTATING_STEMS for token in tokens) or is_action(tool)


def past_tense(tool: str) -> str | None:
    """The past tense of a mutating tool's verb (refund_order → refunded), else None."""
    if not is_mutating(tool):
        return None
    for token in name_tokens(tool):
        past = _PAST_OF.get(token) or _PAST_OF.get(token.rstrip("s"))
        if past:
            return past
    return None


# --------------------------------------------------------------------------- text patterns

_PAST_ALTERNATION = "|".join(sorted(PAST_TENSES, key=len, reverse=True))
_ADVERBS = (r"(?:(?:now|just|also|already|successfully|finally|gone\s+ahead\s+and"
            r"|went\s+ahead\s+and)\s+)*")
_ACTION_CLAIM = re.compile(
    rf"\b(?:i|we)(?:'ve|\s+have|\s+had)?\s+{_ADVERBS}(?P<a>{_PAST_ALTERNATION})\b"
    rf"|\b(?:has|have|had)\s+{_ADVERBS}been\s+{_ADVERBS}(?P<b>{_PAST_ALTERNATION})\b"
    rf"|\b(?:is|are)\s+now\s+(?P<c>{_PAST_ALTERNATION})\b"
    rf"|\b(?P<d>{_PAST_ALTERNATION})\s+successfully\b"
    # terse: a sentence that opens with the verb ("Cancelled your order.", "Refunded!")
    rf"|^[\W_]*(?P<e>{_PAST_ALTERNATION})(?:\s*[!.\u2014\u2013:]|\s+(?:your|the|it|order|#|\w*\d))",
    re.IGNORECASE,
)
# A passive claim that reads as news ("has now been cancelled", "has been successfully
# cancelled", "is now cancelled") rather than a status read out ("has been cancelled").
_FRESH_PASSIVE = re.compile(r"\b(?:now|just|successfully)\b", re.IGNORECASE)
_GENERIC_SUCCESS = re.compile(
    r"(?:^|\b(?:all|it's|it\s+is|that's|that\s+is|is|are|has\s+been|have\s+been)\s+)done\b"
    r"|\ball\s+set\b|\bsucceeded\b|\bwent\s+through\b|\btaken\s+care\s+of\b"
    r"|\b(?:completed|processed|submitted)\s+successfully\b"
    r"|\bsuccessfully\s+(?:completed|processed|submitted)\b"
    r"|\b(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+)?(?:successfully\s+)?"
    r"(?:complete|completed|confirmed|processed|submitted|finalized)\b",
    re.IGNORECASE,
)
# "the thing was done" with no action named, in words that never read out a status
# ("is confirmed", "went through" may describe a booking or a payment as it stands)
_COMPLETION = re.compile(
    r"(?:^|\b(?:all|it's|it\s+is|that's|that\s+is|has\s+been|have\s+been)\s+)done\b"
    r"|\btaken\s+care\s+of\b"
    r"|\b(?:completed|processed|submitted)\s+successfully\b"
    r"|\bsuccessfully\s+(?:completed|processed|submitted)\b"
    r"|\b(?:request|requests|change|changes|cancellation|refund|exchange|return|update|"
    r"booking|modification)\s+(?:has\s+been|have\s+been|was|were|is|are)\s+(?:now\s+)?"
    r"(?:successfully\s+)?(?:completed|processed|submitted|finalized)\b",
    re.IGNORECASE,
)
_MARKUP = re.compile(r"[*`]+")
_WORDS = re.compile(r"[a-z0-9'_]+")
# A sentence with one of these claims nothing: a negation, or a condition ("once it has
# been refunded, ...").
_NEGATIONS = frozenset({
    "not", "no", "never", "unable", "cannot", "can't", "couldn't", "wasn't", "weren't",
    "isn't", "aren't", "didn't", "hasn't", "haven't", "won't", "failed", "unfortunately",
    "nothing", "if", "once", "until", "unless", "whether"})
_FAILURE_WORDS = frozenset({
    "sorry", "apologies", "apologise", "apologize", "couldn't", "unable",
    "failed", "failing", "fails", "failure", "error", "problem", "issue", "unfortunately",
    "timeout", "denied", "rejected", "refused"})
_FAILURE_PHRASES = ("could not", "not able", "wasn't able", "not found", "didn't go through",
                    "out of date", "outdated", "stale",
                    "try again", "timed out", "time out", "isn't going through")
_LEAK_TERMS = frozenset({"simulated", "simulation", "simulator", "persona", "personas",
                         "harness", "planted"})
_LEAK_PHRASES = ("world state", "world_state", "persona notes", "test scenario")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")

_ID_TOKEN = re.compile(r"#?[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
_PHONE = re.compile(r"\+?(?:\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)|\d{2,4})[\s.-]?\d{3}[\s.-]?\d{3,4}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d{1,2}/\d{1,2}/\d{2,4}")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")
_ID_KEY_WORDS = frozenset({
    "id", "ids", "number", "no", "num", "code", "ref", "reference", "key", "account",
    "phone", "pin", "sku", "zip", "postcode", "iban", "card", "mobile", "tel", "telephone",
})
_NON_ALNUM = re.compile(r"[^a-z0-9@]+")


def normalise(text: str) -> str:
    """Lowercase alphanumerics only, so ``ORD-4821`` is found in "ord 4821" and
    ``#W8178512`` in "W8178512"."""
    return _NON_ALNUM.sub("", text.lower())


def looks_like_identifier(value: str, key: str = "") -> bool:
    """Whether an argument value is an identifier the agent must have been given.

    An e-mail address; a token of letters and digits (optionally ``#`` first, joined by
    ``-`` or ``_``: ``#W8178512``, ``ORD-4821``, ``credit_card_7815826``, ``8JX2WO``) with
    at least one digit and three characters that is not a date or a time; a phone number
    (``555-123-2002``, ``+1 (415) 555-0199``); or, under an id-like key (``order_id``,
    ``phone``, ``code``), a number of four digits or more.
    """
    value = value.strip()
    if _EMAIL.fullmatch(value):
        return True
    if _DATE.fullmatch(value):
        return False
    if _PHONE.fullmatch(value) and not value.isdigit():
        return True
    if len(value) < 3 or not _ID_TOKEN.fullmatch(value) or not _DIGIT.search(value):
        return False
    if _LETTER.search(value) or value.startswith("#"):
        return True
    return len(value) >= 4 and not _ID_KEY_WORDS.isdisjoint(name_tokens(key))


# Identifiers in running text: stricter than in arguments, because prose is full of
# numbers (amounts, counts, "3-5 days", "GPT-4o", "A1"). An e-mail address; a phone
# number; a ``#`` token with a digit; a token mixing letters and two or more digits
# (``W8178512``, ``ORD-4821``, ``8JX2WO``, ``credit_card_7815826``, ``L1002``) or five
# capitals-and-digits with one digit (``XEHM4B``); a number of five digits or more after
# an id noun ("order number 48213", "confirmation 123456").
_TEXT_TOKEN = re.compile(r"(?<![\w@#.+-])#?[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*(?![\w@-])")
_UNIT = re.compile(r"\d+(?:[.,]\d+)?(?:st|nd|rd|th|am|pm|h|hr|hrs|m|min|mins|s|x|k|kg|g|gb|mb|"
                   r"tb|kb|lb|lbs|oz|ml|l|km|mi|usd|eur|gbp|mph|fps|hz|mhz|ghz|w|v|mp)",
                   re.IGNORECASE)
_NOUN_NUMBER = re.compile(
    r"\b(?:order|reservation|booking|confirmation|reference|ticket|case|account|customer|"
    r"tracking|invoice|bill|line|claim|policy|member|membership|transaction|refund|user)"
    r"(?:\s+(?:number|no\.?|id|code|#))?\s*[:#]?\s*(\d{5,})\b", re.IGNORECASE)
_TEXT_PHONE = re.compile(
    r"(?<![\w-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}(?![\w-])"
    r"|(?<![\w-])1-\d{3}-\d{3}-\d{4}(?![\w-])")


def identifiers_in(text: str) -> tuple[str, ...]:
    """The identifiers a text states, in order (see the comment above for what counts)."""
    found: list[str] = list(_EMAIL.findall(text))
    bare = _EMAIL.sub(" ", text)
    for match in _TEXT_PHONE.finditer(bare):
        found.append(match[0])
    bare = _TEXT_PHONE.sub(" ", bare)
    for token in _TEXT_TOKEN.findall(bare):
        core = token.lstrip("#")
        if not _DIGIT.search(core) or _DATE.fullmatch(core) or _UNIT.fullmatch(core):
            continue
        digits = len(_DIGIT.findall(core))
        hashed = token.startswith("#") and len(core) >= 3
        mixed = bool(_LETTER.search(core)) and len(core) >= 4 and (
            digits >= 2 or (len(core) >= 5 and core.isupper() and core.isalnum()))
        if hashed or mixed:
            found.append(token)
    found.extend(match[1] for match in _NOUN_NUMBER.finditer(bare))
    return tuple(dict.fromkeys(found))


def words_of(text: str) -> list[str]:
    """The lowercase words of a text (apostrophes and underscores kept inside words)."""
    return _WORDS.findall(text.lower().replace("\u2019", "'"))


_PLEASANTRIES = re.compile(r"\b(?:no\s+(?:problem|worries)|not\s+a\s+problem)\b")


def _negated(sentence: str) -> bool:
    lowered = _PLEASANTRIES.sub(" ", sentence.lower())
    return "n't" in lowered or not _NEGATIONS.isdisjoint(_WORDS.findall(lowered))


def mentions_harness(text: str) -> str | None:
    """The word of the simulation the text uses (persona, simulated ...), else None."""
    lowered = text.lower()
    found = _LEAK_TERMS.intersection(_WORDS.findall(lowered))
    if found:
        return min(found)
    return next((phrase for phrase in _LEAK_PHRASES if phrase in lowered), None)


def admits_failure(text: str) -> bool:
    """Whether the text tells the person something went wrong (sorry, couldn't, error...)."""
    lowered = text.lower().replace("\u2019", "'")
    return (not _FAILURE_WORDS.isdisjoint(_WORDS.findall(lowered))
            or any(phrase in lowered for phrase in _FAILURE_PHRASES)
            or lowered.startswith("apolog"))


# a sentence without one of these words claims nothing (a cheap test before the patterns)
_CLAIM_WORDS = frozenset(PAST_TENSES) | {
    "done", "set", "succeeded", "through", "care", "successfully", "complete", "completed",
    "confirmed", "processed", "submitted", "finalized"}


@lru_cache(maxsize=4096)
def _claims(text: str) -> tuple[str, ...]:
    """The sentences that claim something: not a question, nothing negated or conditional."""
    return tuple(
        sentence for sentence in _SENTENCES.split(_MARKUP.sub("", text))
        if not _CLAIM_WORDS.isdisjoint(_WORDS.findall(sentence.lower()))
        and (_ACTION_CLAIM.search(sentence) or _GENERIC_SUCCESS.search(sentence)
             or _COMPLETION.search(sentence))
        and not sentence.rstrip().endswith("?") and not _negated(sentence))


def claims_success(text: str) -> bool:
    """Whether some sentence of the text says the thing was done (and does not negate it)."""
    return bool(_claims(text))


def claims_generic_success(text: str, *, strict: bool = False) -> bool:
    """Whether the text says it worked without naming an action ("Done", "all set");
    ``strict``: only in words that never read out a status ("Done", "your request has
    been completed", not "is confirmed")."""
    pattern = _COMPLETION if strict else _GENERIC_SUCCESS
    return any(pattern.search(sentence) for sentence in _claims(text))


def claimed_actions(text: str, *, first_person: bool = False,
                    news_only: bool = False) -> tuple[str, ...]:
    """The past-tense action verbs the text claims: "I've refunded", "we cancelled",
    "cancelled successfully", "is now cancelled", and (unless ``first_person``) "has been
    refunded". With ``news_only`` a passive claim counts only when it reads as news
    ("has now been / has been successfully cancelled"), never a passive with *already*
    ("it has already been cancelled" reports the state a failed call found)."""
    found: list[str] = []
    for sentence in _claims(text):
        for match in _ACTION_CLAIM.finditer(sentence):
            if match["a"]:
                found.append(match["a"].lower())
                continue
            if first_person:
                continue
            verb = match["b"] or match["c"] or match["d"] or match["e"]
            said = match[0].lower()
            if "already" in said or (news_only and match["b"]
                                     and not _FRESH_PASSIVE.search(said)):
                continue
            found.append(verb.lower())
    return tuple(found)


def result_failure(text: str | None, tool: str = "") -> str | None:
    """Why a tool result says the call did not do what was asked, else None.

    Read through :func:`processor.results.read_result` (so "failed" means what it means
    in the failure map): an error field, a failing status in the body, a garbled body,
    an ``Error: ...`` text. For a tool that changes something (``tool`` given and
    mutating), a body saying the record was *already* acted on (``already_cancelled``) or
    only partly done (``partial``) is no success either: the asked action did not happen.
    """
    return failure_of(read_result(text, tool=tool or None), tool)


def failure_of(reading: ResultReading, tool: str = "") -> str | None:
    """:func:`result_failure` of a result already read with ``tool``."""
    if reading.failed:
        return reading.condition
    if reading.world_state == "missing":
        return "not_found"
    if tool and is_mutating(tool):
        if reading.world_state == "already_acted_on":
            return "already_acted_on"
        if reading.world_state == "partially_completed":
            return "partially_completed"
    return None


def result_failed(text: str) -> bool:
    """Whether a tool result *text* reads as a failure (see :func:`result_failure`)."""
    return result_failure(text) is not None


def sentences(text: str) -> list[str]:
    """The text cut after sentence-ending punctuation and at line breaks."""
    return _SENTENCES.split(text)
