"""The pattern detector of the user stance: weighted intent families, scored and decided.

This is the hand-written half of the stance reader (:mod:`processor.stance` describes the
families and the decision); the default reader (:mod:`processor.stance_learned`) uses its
result and scores as features, and :func:`pattern_stance` is what it said on its own
before the learned reader existed (``bench/stance_confusion.py`` prints both).
"""

from __future__ import annotations

import re
from functools import lru_cache

from processor._stance_inference import dates_disagree
from processor._stance_patterns import (
    FAMILIES,
    candidates,
    flip_flops,
    same_verb_negated,
    tokens,
)

STANCES: tuple[str, ...] = (
    "ordinary", "adversarial", "frustrated", "hurried", "mistaken", "unsure", "conflicting")
"""Every stance value a captured ask can get, ``ordinary`` first."""

PRECEDENCE: tuple[str, ...] = (
    "adversarial", "conflicting", "mistaken", "frustrated", "hurried", "unsure")
"""Which stance wins a tie of scores (unsure last: hedges appear inside every other)."""

ADVERSARIAL_AT = 2.0
"""Score from which an ask is adversarial, whatever else it shows."""
STANCE_AT = 1.0
"""Score from which an ask gets any other non-ordinary stance."""

_SHOUTED = re.compile(r"(?<![-\w])[A-Z]{3,}(?![-\w])")  # not ids: ORD-1234, BK7X2Q
_ACRONYMS = frozenset((
    "API", "APIS", "SIM", "ESIM", "USA", "SSO", "URL", "PDF", "ETA", "VAT", "GBP", "USD",
    "EUR", "CEO", "FAQ", "ATM", "PIN", "SMS", "MMS", "VPN", "DNS", "IBAN", "BIC", "SWIFT",
    "HTML", "CSS", "JSON", "XML", "HTTP", "HTTPS", "AWS", "GCP", "GPU", "CPU", "RAM", "SSD",
    "USB", "NHS", "ICU", "DMV", "IRS", "TSA", "KYC", "SQL", "CLI", "SDK", "IOS", "MAC",
    "IBM", "JFK", "LAX", "LHR", "SFO", "ORD", "ATL", "DFW", "EWR", "BOS", "SEA", "NYC",
    "UPS", "DHL", "USPS", "FEDEX", "BBQ", "DIY", "PTO", "HR", "GDPR", "HIPAA", "TV",
    "WIFI", "LTE", "ISP", "OTP", "MFA", "CVV", "ACH", "EIN", "SSN", "DOB", "UTC", "GMT",
    "EST", "PST", "CET", "BST", "APR", "ISA", "IRA", "LLC", "LTD", "INC", "PLC", "GMBH",
    "RSVP", "ASAP", "URGENT", "NOW", "OMG", "WTF", "FFS", "LOL", "FYI", "PPS", "AKA",
    "OOO", "EOD", "COB", "TBD", "SLA", "MRI", "ECG", "EHR", "OTC", "PDT", "CDT", "MST",
    "YES", "NO", "OK", "THE", "AND"))
_ANGRY_SHOUTS = frozenset(("AGAIN", "EVERY", "NEVER", "STILL", "YOUR", "NOTHING", "ALWAYS",
                           "WHY", "STOP", "ENOUGH", "NOBODY", "WORST", "TWICE", "SERIOUSLY",
                           "ANYONE", "NOT", "ANY", "ALL", "HOW", "WHAT", "THREE", "FOUR",
                           "FIVE", "MONTHS", "WEEKS", "HOURS", "DAYS"))
_HURRY_SHOUTS = frozenset(("ASAP", "NOW", "URGENT", "QUICK", "QUICKLY", "HURRY", "FAST",
                           "IMMEDIATELY", "TODAY", "TONIGHT"))


def pattern_stance(text: str | None) -> str:
    """The patterns' stance of an ask (weighted intent families alone, see
    :mod:`processor.stance`); ``unknown`` for no ask."""
    if text is None:
        return "unknown"
    return _classify(text)


@lru_cache(maxsize=4096)
def _classify(text: str) -> str:
    return decide(stance_scores(text))


def decide(scores: dict[str, float]) -> str:
    """The stance the patterns give for their scores (see :mod:`processor.stance`)."""
    if scores["adversarial"] >= ADVERSARIAL_AT:
        return "adversarial"
    best, best_score = "ordinary", STANCE_AT
    for stance in PRECEDENCE[1:]:
        if scores[stance] > best_score or (best == "ordinary" and scores[stance] >= best_score):
            best, best_score = stance, scores[stance]
    return best


def stance_scores(text: str) -> dict[str, float]:
    """Each stance's score for one ask (the sum of the weights of its matching families)."""
    return _score(text, None)


def stance_evidence(text: str) -> list[tuple[str, str, float]]:
    """(stance, family, weight) of every family that matched: why an ask got its stance."""
    found: list[tuple[str, str, float]] = []
    _score(text, found)
    return found


def _has_any(strings: tuple[str, ...], text: str) -> bool:
    # a loop, not any(generator): this runs for most families of every ask
    for string in strings:  # noqa: SIM110
        if string in text:
            return True
    return False


def _score(text: str, found: list[tuple[str, str, float]] | None) -> dict[str, float]:
    if "\u2019" in text or "\u2018" in text:
        text = text.replace("\u2019", "'").replace("\u2018", "'")
    lowered = text.lower()
    words = tokens(lowered)
    scores = dict.fromkeys(PRECEDENCE, 0.0)
    matched: set[str] = set()
    for number in candidates(words, lowered):
        family = FAMILIES[number]
        if family.name in matched or (family.literals is not None and not _has_any(
                family.literals, lowered)):
            continue  # counted already, or cannot match: none of its required strings
        if family.pattern.search(lowered):
            matched.add(family.name)  # a family split into branches counts once
            scores[family.stance] += family.weight
            if found is not None:
                found.append((family.stance, family.name, family.weight))
    extra: list[tuple[str, str, float]] = []
    if same_verb_negated(words, lowered):
        extra.append(("conflicting", "same_verb_negated", 1.5))
    if flip_flops(words, lowered):
        extra.append(("conflicting", "flip_flops", 1.5))
    if dates_disagree(lowered):
        extra.append(("mistaken", "dates_disagree", 1.25))
    capitals = _SHOUTED.findall(text)
    if capitals:
        if "urgent" not in lowered and not _HURRY_SHOUTS.isdisjoint(capitals):
            extra.append(("hurried", "shouted_hurry", 1.0))
        shouted = [word for word in capitals if word not in _ACRONYMS]
        letters = sum(map(str.isalpha, text))
        if shouted and not (letters >= 12 and sum(map(str.isupper, text)) > 0.7 * letters):
            # a shouted word, not an all-caps ask (some people write everything in capitals)
            angry = not _ANGRY_SHOUTS.isdisjoint(shouted)
            extra.append(("frustrated", "shouted_word", 1.25 if angry else 0.75))
    for stance, name, weight in extra:
        scores[stance] += weight
        if found is not None:
            found.append((stance, name, weight))
    return scores
