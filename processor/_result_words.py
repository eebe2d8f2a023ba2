"""The words of tool results: status-like tokens, sentences and HTTP codes → faults.

Tables and classifiers that :mod:`processor.results` reads bodies with (its module
docstring documents what they recognise). Words are matched case-insensitively; a
status-like token is compared with everything but its letters removed (``NOT_FOUND``,
``not-found`` and ``Not Found`` are all ``notfound``). Every regular expression comes with
substrings that each of its matches contains, tried first, because most texts name no
fault at all and the expressions are slow to run over text that cannot match.
"""

from __future__ import annotations

import re
from functools import lru_cache

from processor._result_states import Refusal, state_refusal

__all__ = ["CONDITION_OF_FAULT", "ERROR_PREFIX", "HTTP_CODE_TEXT", "PARTIAL_WORDS", "RANK",
           "REFUSAL_FAULT", "SHORT", "STALE_WORDS", "http_fault", "rule_statement",
           "text_fault", "text_world", "word"]

CONDITION_OF_FAULT = {"timeout": "timeout", "not_found": "not_found",
                       "permission_denied": "permission_denied", "stale": "stale_result"}
_PRECEDENCE = ("timeout", "not_found", "permission_denied", "stale", "rate_limited",
               "conflict", "declined", "invalid", "server_error", "error")
RANK = {fault: rank for rank, fault in enumerate(_PRECEDENCE)}

# Status-like tokens, lower case with everything but letters removed ("NOT_FOUND",
# "not-found", "Not Found" → "notfound"): (substring, fault). Checked in order.
_TOKEN_FAULTS: tuple[tuple[str, str], ...] = (  # the weak ones: see _WEAK_TOKENS
    ("timeout", "timeout"), ("timedout", "timeout"), ("deadlineexceeded", "timeout"),
    ("etimedout", "timeout"),
    ("notfound", "not_found"), ("nosuch", "not_found"), ("doesnotexist", "not_found"),
    ("notexist", "not_found"), ("resourcemissing", "not_found"),
    ("recordnotfound", "not_found"), ("unknownobject", "not_found"),
    ("permission", "permission_denied"), ("forbidden", "permission_denied"),
    ("unauthori", "permission_denied"), ("unauthenticated", "permission_denied"),
    ("accessdenied", "permission_denied"), ("notauth", "permission_denied"),
    ("badcredentials", "permission_denied"), ("invalidapikey", "permission_denied"),
    ("invalidtoken", "permission_denied"), ("invalidsession", "permission_denied"),
    ("invalidauth", "permission_denied"), ("authenticationfailed", "permission_denied"),
    ("authfailed", "permission_denied"), ("tokenexpired", "permission_denied"),
    ("notallowed", "permission_denied"), ("notpermitted", "permission_denied"),
    ("insufficientscope", "permission_denied"), ("authorizationerror", "permission_denied"),
    ("authenticationerror", "permission_denied"), ("authenticationrequired", "permission_denied"),
    ("denied", "permission_denied"),
    ("stale", "stale"),
    ("ratelimit", "rate_limited"), ("toomanyrequests", "rate_limited"),
    ("throttl", "rate_limited"), ("quotaexceeded", "rate_limited"),
    ("resourceexhausted", "rate_limited"),
    ("already", "conflict"), ("duplicate", "conflict"), ("conflict", "conflict"),
    ("precondition", "conflict"), ("aborted", "conflict"),
    ("invalid", "invalid"), ("validation", "invalid"), ("badrequest", "invalid"),
    ("unprocessable", "invalid"), ("missingfield", "invalid"), ("missingparam", "invalid"),
    ("required", "invalid"), ("outofrange", "invalid"),
    ("decline", "declined"), ("refused", "declined"), ("rejected", "declined"),
    ("insufficientfunds", "declined"),
    ("internal", "server_error"), ("unavailable", "server_error"), ("badgateway", "server_error"),
    ("error", "error"), ("fail", "error"), ("fault", "error"), ("exception", "error"),
)
# A record's own status word that matches one of these is data unless the body is an
# envelope or an error object (a lookup of a declined claim or a failed payment is a
# record; {"status": "failed"} alone is an answer).
_WEAK_TOKENS = frozenset({
    "denied", "already", "duplicate", "conflict", "precondition", "aborted", "invalid",
    "validation", "required", "outofrange", "decline", "refused", "rejected", "internal",
    "unavailable", "error", "fail", "fault", "exception", "missing", "gone", "stale"})
_NOT_FOUND_STATUS = frozenset({"missing", "gone"})
_SUCCESS_WORDS = frozenset({
    "ok", "success", "succeeded", "successful", "completed", "complete", "done", "created",
    "updated", "deleted", "accepted", "approved", "confirmed", "processed", "authorised",
    "authorized", "paid", "captured", "refunded", "cancelled", "canceled", "sent",
    "delivered", "shipped", "active", "enabled", "disabled", "true"})

_TIMEOUT_WORDS = re.compile(
    r"timeout|\btimed? ?out\b|\btimes out\b|\btime-out\b|deadline exceeded|"
    r"did not (?:answer|respond) within|took too long", re.I)
_NOT_FOUND_WORDS = re.compile(
    r"not (?:be )?found|does ?n[o']t exist|do ?n[o']t exist|"
    r"no longer exists?|no such\b|could ?n[o']t (?:be )?find|can ?n[o']t find|cannot find|"
    r"unable to (?:find|locate)|not (?:be )?located|\bno (?:matching )?(?:record|order|user|"
    r"customer|account|reservation|booking|ticket|issue|item|entity|resource|page)s? "
    r"(?:was |were )?(?:found|matches|with)|^unknown [a-z ]{2,40}$|resource[_ ]missing|"
    r"\b(?:unknown|unrecognized|unrecognised|nonexistent|non-existent) (?!error)"
    r"(?:[a-z_]+ ){1,3}(?:id|identifier|number|reference)\b(?! (?:format|type))",
    re.I)
_PERMISSION_WORDS = re.compile(
    r"permission|forbidden|unauthori[sz]ed|unauthenticated|not authori[sz]ed|"
    r"not (?:allowed|permitted)|access (?:is )?denied|denied access|"
    r"bad credentials|invalid (?:api[ _-]?key|token|credentials|session|auth)|"
    r"(?:api[ _-]?key|token|session|credentials?) (?:is |has |have )?(?:invalid|expired|"
    r"revoked|missing)|authentication|authori[sz]ation (?:grant|header|token|required|"
    r"failed|denied)|not authed|login required|do(?:es)? not have access", re.I)
_RATE_WORDS = re.compile(r"rate[ -]?limit|too many requests|throttl|quota exceeded|"
                         r"slow down|retry after", re.I)
STALE_WORDS = re.compile(r"\bstale\b|out of date|outdated|cached copy", re.I)
_INVALID_WORDS = re.compile(r"invalid|validation|\bmust (?:be|specify|provide|include|contain|"
                            r"have|not)\b|is required|are required|"
                            r"can't be blank|cannot be blank|missing (?:field|parameter|"
                            r"argument)|malformed|bad request|unprocessable|"
                            r"does not match|out of range", re.I)
_DECLINED_WORDS = re.compile(r"declined|insufficient (?:funds|balance)|not enough (?:balance|"
                             r"funds|seats)|refused|rejected", re.I)
_SERVER_WORDS = re.compile(r"internal (?:server )?error|service unavailable|bad gateway|"
                           r"temporarily unavailable|connection (?:refused|reset)|"
                           r"unexpected(?:ly)? (?:error|fail)|failed unexpectedly", re.I)
_DOCUMENTED = (r"(?![ _-]?(?:codes?|rates?|counts?|budgets?|handling|types?|reference|"
               r"messages|logs?|reporting|tracking|free|s\b|modes?)\b)")
"""After "error" / "failure": a documentation heading ("Error codes:", "error_rate: 0",
"Failure modes"), not a failure."""
_GENERIC_FAILURE = re.compile(
    r"^\W*(?:(?:error|failure)\b" + _DOCUMENTED + r"|(?:failed|fatal|unable to|could ?n[o']t|"
    r"cannot|can ?n[o']t|not able to|denied|invalid|oops|something went wrong)\b|"
    # "Refund declined: outside the window", "Payment failed.", "Transfer rejected"
    # but not a count of none: "No payments failed.", "Nothing was declined."
    r"(?!(?:no|none|nothing|zero|never|not)\b)"
    r"(?:[a-z]+ ){1,2}(?:declined|failed|rejected|denied|refused)(?:\s*[:.!-]|$))", re.I)

_ALREADY_WORDS = re.compile(
    r"\balready(?:[ _-](?:been|be|being))?[ _-](?:\w+ed\b|\w+en\b|done|paid|sent|made|set|"
    r"exists?|in (?:use|progress|place)|active|inactive|on\b|off\b|open|closed|"
    r"awaiting|pending|has|a member|registered|taken|shipped|cancell?ed|refunded|"
    r"processed|redeemed|used|applied)", re.I)
_DUPLICATE_WORDS = re.compile(
    r"duplicate|(?:multiple|more than one|several) (?:records?|matches|orders?|accounts?|"
    r"customers?|users?|results?|reservations?|bookings?)(?: \w+)? match|"
    r"matches (?:multiple|more than one)|ambiguous", re.I)
PARTIAL_WORDS = re.compile(r"\bpartial(?:ly)?\b|partial[ _]success", re.I)

ERROR_PREFIX = re.compile(
    r"^\s*(?:\[?error\]?\b" + _DOCUMENTED + r"|err\b|exception\b|fatal\b|"
    r"failure\b" + _DOCUMENTED + r"|"
    r"failed\b(?! (?:[a-z]+ies|[a-z]+s) (?:are|were|will|can|may|get|must)\b)|"
    r"traceback \(most "
    r"recent call last\)|[a-z_][\w.]*(?:error|exception|fault)\b\s*[:(]|"
    r"(?:http(?:/\d(?:\.\d)?)?\s*)?[45]\d\d\b)", re.I)
HTTP_CODE_TEXT = re.compile(r"(?:^|<title>|<h1>|\bhttp(?:/\d(?:\.\d)?)?\s*|status(?: code)?"
                             r"[:= ]\s*)\s*([45]\d\d)\b", re.I)
SHORT = 300  # a text longer than this without an error prefix is content, not a verdict


def _token(value: str) -> str:
    return "".join(character for character in value.lower() if character.isalpha())


def _token_fault(value: str, *, weak: bool = True) -> str | None:
    """The fault a status-like word names; with ``weak=False`` only the unambiguous ones."""
    token = _token(value)
    if not token:
        return None
    if token in _NOT_FOUND_STATUS:
        return "not_found" if weak else None
    for part, fault in _TOKEN_FAULTS:
        if part in token:
            return fault if weak or part not in _WEAK_TOKENS else None
    return None


def http_fault(code: int) -> str | None:
    if code < 400 or code > 599:
        return None
    if code in (401, 403, 407):
        return "permission_denied"
    if code in (404, 410):
        return "not_found"
    if code in (408, 504, 524, 598, 599):
        return "timeout"
    if code == 429:
        return "rate_limited"
    if code in (409, 412, 423):
        return "conflict"
    if code == 402:
        return "declined"
    if code >= 500:
        return "server_error"
    return "invalid"




# Substrings one of which every match of the pattern contains: a cheap test before the
# regular expression (most messages name no fault at all).
_HINTS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("timeout", _TIMEOUT_WORDS, ("time", "deadline", "within", "took too long")),
    ("not_found", _NOT_FOUND_WORDS, ("found", "exist", "no such", "find", "locate", "unknown",
                                     "missing")),
    ("permission_denied", _PERMISSION_WORDS, ("permi", "forbid", "author", "authent",
                                              "denied", "allowed", "credential", "key",
                                              "token", "session", "login", "access",
                                              "authed")),
    ("rate_limited", _RATE_WORDS, ("limit", "many requests", "throttl", "quota",
                                   "slow down", "retry after")),
    ("stale", STALE_WORDS, ("stale", "out of date", "outdated", "cached copy")),
)
_GENERIC_HINTS = ("error", "fail", "fatal", "unable", "could", "can", "not able", "denied",
                  "invalid", "oops", "went wrong", "declined", "rejected", "refused")


_ANY_HINT = re.compile("|".join(re.escape(hint) for _, _, hints in _HINTS for hint in hints))
_ANY_GENERIC_HINT = re.compile("|".join(re.escape(hint) for hint in _GENERIC_HINTS))


def text_fault(text: str, *, generic: bool, lookup: bool = False) -> str | None:
    """The fault a sentence names; with ``generic``, "Error ..."/"Unable to ..." count too.

    A refusal that names the record's state (:mod:`processor._result_states`) is a fault
    of its own kind even without ``generic`` ("This order has shipped and can no longer
    be cancelled"): ``conflict``, or ``declined`` for a rule of time or eligibility; "not
    allowed" in such a refusal is the state's doing, not a permission.

    ``lookup``: the answer of a tool named as a reader (a lookup, a policy or FAQ search;
    a tool not named, or named with a verb not known, is not given this benefit: its text
    may be the refusal of an action). Without ``generic``, such an answer that states a
    rule (:func:`rule_statement`: "Late cancellations are not allowed.", "Basic economy:
    changes not permitted.") names no fault, and a state it says forbids some action
    ("Your order has shipped and can no longer be cancelled online") is what the lookup
    found, not a refusal of the lookup. A rule statement still names what no rule says:
    a time-out, a missing record, credentials ("Authentication credentials were not
    provided."), a rate limit.
    """
    lowered = text.lower()
    lookup = lookup and not generic
    rule = lookup and rule_statement(text)
    if _ANY_HINT.search(lowered):
        for fault, words, hints in _HINTS:
            if any(hint in lowered for hint in hints) and words.search(text):
                if fault == "permission_denied":
                    if rule and not _PERMISSION_WORDS.search(_RULE_PERMISSION.sub("", text)):
                        return None  # "Late cancellations are not allowed."
                    refusal = state_refusal(text, failed=generic)
                    if refusal is not None:
                        return None if lookup or rule else REFUSAL_FAULT[refusal]
                return fault
    if rule:
        return None
    refusal = state_refusal(text, failed=generic)
    if refusal is not None:
        return None if lookup else REFUSAL_FAULT[refusal]
    if generic or (_ANY_GENERIC_HINT.search(lowered) and _GENERIC_FAILURE.search(text)):
        if _ANY_KIND_HINT.search(lowered):
            for fault, words, hints in _KIND_HINTS:
                if any(hint in lowered for hint in hints) and words.search(text):
                    return fault
        return "error"
    return None


_RULE_PERMISSION = re.compile(r"\bnot (?:allowed|permitted)\b", re.I)
"""What a rule may forbid with ("not allowed") without naming a permission of the caller."""
_SPECIFIC = re.compile(
    # an identifier (#W8178512, ch_1Nfb, A-1001, 1Z3F0A22, C1001): about one record
    r"#\w|\b[a-z]+[_-]?\d[\w-]*|\b\d+[a-z]+\d|"
    # one record, or the caller: "this order", "your booking", "you cannot", "it can't"
    r"\b(?:this|that|your|my|our|these|those)\b|"
    r"\b(?:you|i|we|it)\b[^.;:]{0,14}?(?:\b(?:not|cannot|can'?t|unable|lack|no longer)\b|"
    r"n't\b)|"
    # a refusal or a fault said first: "Cannot cancel ...", "Not allowed", "Failed to ..."
    r"^\W*(?:cannot|can ?not|can'?t|could ?n[o']t|unable|not |failed to|failure|denied|"
    r"forbidden|unauthori[sz]ed|invalid|missing|no such|too many|rate limit|already|"
    r"sorry|oops|access denied|permission denied|error\b" + _DOCUMENTED + r"|request "
    r"(?:failed|denied|rejected))",
    re.I)
_SUBJECT_WORD = re.compile(r"[a-z][a-z0-9'-]*|\d+[a-z]*")
_SUBJECT_VERBS = frozenset({
    "are", "can", "cannot", "can't", "may", "must", "will", "won't", "should", "need",
    "require", "get", "do", "don't", "become", "expire", "qualify", "incur", "ship",
    "remain", "stay", "cost", "is"})
"""Present and modal verbs: a rule's tense ("were not provided" tells what happened)."""
_SUBJECT_BREAKS = frozenset({
    "over", "under", "above", "below", "older", "newer", "more", "less", "with", "without",
    "of", "from", "in", "on", "after", "before", "made", "bought", "booked", "placed",
    "purchased", "sold", "for", "at", "by", "that", "which", "marked", "than", "to"})
_PRONOUNS = frozenset({"it", "you", "we", "i", "they", "he", "she", "this", "that", "the",
                       "there", "here", "a", "an", "these", "those", "none", "nothing",
                       "request", "call", "operation", "action"})
_CONDITIONS = re.compile(r"\b(?:unless|except|only if|only when|provided that|as long as|"
                         r"up to \d|no later than|at least \d)\b", re.I)
_LABEL = re.compile(r"^\s*(?P<label>[a-z][a-z -]{1,30}[a-z]):\s+\S", re.I)


def _plural(word: str) -> bool:
    return (word.endswith("s") and not word.endswith(("ss", "us", "is", "'s"))
            and len(word) > 3) or word in ("children", "people", "staff", "luggage")


@lru_cache(maxsize=8192)
def rule_statement(text: str) -> bool:
    """Whether a short text states a rule instead of saying what happened to a call: its
    subject is a kind of thing, not one record or the caller ("Refunds are accepted
    within 30 days.", "Orders can only be cancelled while pending.", "Late cancellations
    are not allowed.", "Bags over 23kg are rejected at check-in."); a label in the
    manner of a policy page ("Basic economy: changes not permitted.", "Returns: not
    accepted for final-sale items"); a rule with a condition ("Cancellation is free up to
    24h before departure."). Never a text that names an identifier, "this / your ...",
    the caller ("you cannot", "it can't"), or starts with a refusal or a fault ("Cannot
    cancel reservation within 24 hours", "Access denied", "Error: ...")."""
    if len(text) > SHORT or _SPECIFIC.search(text):
        return False
    label = _LABEL.match(text)
    if label is not None:
        return not any(_token_fault(word) for word in label.group("label").split())
    words = _SUBJECT_WORD.findall(text[:160].lower())
    verb = next((index for index, word in enumerate(words[:8]) if word in _SUBJECT_VERBS),
                None)
    if not verb or words[0] in _PRONOUNS:
        return False
    subject = words[:verb]
    head = subject
    for index, word in enumerate(subject):
        if index and word in _SUBJECT_BREAKS:
            head = subject[:index]
            break
    if _plural(head[-1]):
        return True  # "Refund requests are declined after 30 days."
    return words[verb] in ("is", "are") and bool(
        _CONDITIONS.search(text) or state_refusal(text) == "policy" or
        _POLICY_WORDS.search(text))


_POLICY_WORDS = re.compile(r"\bwithin \d+|\b\d+\s*(?:h|hrs?|hours?|days?|weeks?)\s+"
                           r"(?:before|after|of|prior)\b", re.I)


REFUSAL_FAULT: dict[Refusal, str] = {
    "already_acted_on": "conflict", "partially_completed": "conflict", "blocked": "conflict",
    "policy": "declined"}
"""The fault of each kind of state refusal."""


_KIND_HINTS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("invalid", _INVALID_WORDS, ("invalid", "validat", "must", "required", "blank", "missing",
                                 "malformed", "bad request", "unprocessable", "match",
                                 "out of range")),
    ("declined", _DECLINED_WORDS, ("declin", "insufficient", "not enough", "refused",
                                   "rejected")),
    ("server_error", _SERVER_WORDS, ("internal", "unavailable", "bad gateway", "connection",
                                     "unexpected")),
    ("conflict", _ALREADY_WORDS, ("already",)),
    ("conflict", _DUPLICATE_WORDS, ("duplicate", "multiple", "more than one", "several",
                                    "ambiguous")),
)
"""The kinds of a generic failure, in order, each with the substrings its words contain."""
_ANY_KIND_HINT = re.compile("|".join(re.escape(hint) for _, _, hints in _KIND_HINTS
                                     for hint in hints))


def text_world(text: str, *, failed: bool = False, lookup: bool = False) -> str | None:
    """The world state a sentence names: "already ...", "duplicate", or a refusal that
    names a completed state of the record (``failed``: the text is known to be a failure,
    see :func:`processor._result_states.state_refusal`). ``lookup`` (see
    :func:`text_fault`): in the answer of a lookup that did not fail, a rule statement
    names none, nor does a state that forbids some action (what it found)."""
    if lookup and not failed and rule_statement(text):
        return None
    lowered = text.lower()
    if "already" in lowered and _ALREADY_WORDS.search(text):
        return "already_acted_on"
    if any(hint in lowered for hint in _DUPLICATE_HINTS) and _DUPLICATE_WORDS.search(text):
        return "duplicate"
    if lookup and not failed:
        return None
    refusal = state_refusal(text, failed=failed)
    if refusal == "already_acted_on" or refusal == "partially_completed":
        return refusal
    return None


_DUPLICATE_HINTS = ("duplicate", "multiple", "more than one", "several", "ambiguous")


def _token_world(value: str) -> str | None:
    token = _token(value)
    if "already" in token:
        return "already_acted_on"
    if "duplicate" in token:
        return "duplicate"
    if token.startswith("partial"):
        return "partially_completed"
    return None


_WordReading = tuple[str | None, str | None, str | None, bool]
_words: dict[str, _WordReading] = {}


def word(value: str) -> _WordReading:
    """(world state, fault, unambiguous fault, success word) of a status-like word, cached:
    a stream's status words are few (``shipped``, ``not_found``, ``card_declined``)."""
    reading = _words.get(value)
    if reading is None:
        reading = (_token_world(value), _token_fault(value), _token_fault(value, weak=False),
                   value.lower() in _SUCCESS_WORDS)
        if len(_words) < 50_000:
            _words[value] = reading
    return reading
