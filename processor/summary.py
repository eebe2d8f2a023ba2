"""Plain sentences from situations: the first thing a report says.

One sentence per situation that is not passing, worst first, in words a lead reads in a
minute::

    v2 broke cancel_reservation on records already acted on: 70% fail (49/70) vs 5% (3/61) in v1.
    Still failing: get_order when the tool times out, 60% (30/50) with v2, 55% (22/40) with v1.
    v2 fixed update_address on records that do not exist: 65% → 5% (13/20 → 1/20).

Coordinates become words by :data:`PHRASES` (an unknown value reads as ``axis value``);
a situation with few graded conversations says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from processor.map_records import Coordinate, PeriodRecord, SituationRecord

__all__ = ["PHRASES", "describe", "sentence", "summary"]

PHRASES: Mapping[str, Mapping[str, str]] = {
    "world_state": {
        "already_acted_on": "on records already acted on",
        "missing": "on records that do not exist",
        "duplicate": "on duplicate records",
        "partially_completed": "on partially completed records",
        "stale": "on stale records",
        "entity_exists": "on existing records",
    },
    "tool_condition": {
        "not_found": "when the tool answers not found",
        "timeout": "when the tool times out",
        "permission_denied": "when the tool denies permission",
        "malformed_result": "when the tool returns malformed results",
        "stale_result": "when the tool returns stale results",
        "error": "when the tool fails",
        "success": "when the tools succeed",
        "none": "without tool calls",
    },
    "history": {
        "prior_failure": "after an earlier failure",
        "prior_partial_action": "after a partial action",
        "repeat_visit": "on a repeat visit",
        "contradicts_earlier": "when the person contradicts an earlier turn",
        "fresh": "on a first visit",
    },
    "tool": {"no_tool": "conversations without tool calls",
             "multi_tool": "conversations with several tools"},
}
"""Words for known axis values; other values read generically (see :func:`_phrase`)."""


def _words(value: str) -> str:
    return value.replace("_", " ")


def _phrase(coordinate: Coordinate) -> str:
    known = PHRASES.get(coordinate.axis, {}).get(coordinate.value)
    if known is not None:
        return known
    if coordinate.axis == "user_stance":
        return f"with {_words(coordinate.value)} users"
    if coordinate.axis == "policy_rule":
        return f"under policy rule {coordinate.value}"
    return f"when {_words(coordinate.axis)} is {_words(coordinate.value)}"


def describe(coordinates: Sequence[Coordinate]) -> str:
    """A situation's coordinates in words: the tool first, then what qualifies it."""
    tools = [c for c in coordinates if c.axis == "tool"]
    rest = [c for c in coordinates if c.axis != "tool"]
    subject = PHRASES["tool"].get(tools[0].value, tools[0].value) if tools else "conversations"
    qualifiers = [_phrase(c) for c in rest]
    return " ".join([subject, " and ".join(qualifiers)]) if qualifiers else subject


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def _counts(period: PeriodRecord) -> str:
    return f"{period.failed}/{period.graded}"


def sentence(situation: SituationRecord,
             inside: Mapping[str, SituationRecord] | None = None) -> str:
    """One plain sentence saying what happened to ``situation``. A situation judged without
    the situations inside it (``inside``: the map's situations by id) speaks of its own
    members, apart from theirs."""
    what = describe(situation.coordinates)
    now, before = situation.latest, situation.previous
    if situation.judged_without and situation.own_latest and situation.own_previous:
        now, before = situation.own_latest, situation.own_previous
        known = [describe(inside[i].coordinates) for i in situation.judged_without
                 if inside and i in inside]
        what += (f" (apart from {' and '.join(known)})" if known
                 else " (apart from the situations inside it)")
    named = now.version is not None and before.version is not None
    latest = now.version or "the later half"
    previous = before.version or "the earlier half"
    status = situation.status
    if status == "new":
        if situation.compared == "baseline" or not before.graded:
            text = (f"{latest} fails {what}: {_pct(now.fail_rate)} ({_counts(now)}) vs "
                    f"{_pct(now.baseline)} of its other conversations; no earlier data to "
                    "compare with.")
        elif named:
            text = (f"{latest} broke {what}: {_pct(now.fail_rate)} fail ({_counts(now)}) vs "
                    f"{_pct(before.fail_rate)} ({_counts(before)}) in {previous}.")
        else:
            text = (f"Lately {what} fails more: {_pct(now.fail_rate)} ({_counts(now)}) vs "
                    f"{_pct(before.fail_rate)} ({_counts(before)}) before.")
    elif status == "persistent":
        text = f"Still failing: {what}, {_pct(now.fail_rate)} ({_counts(now)}) with {latest}"
        text += (f", {_pct(before.fail_rate)} ({_counts(before)}) with {previous}."
                 if before.graded else ".")
    elif status == "fixed":
        text = (f"{latest} fixed {what}: {_pct(before.fail_rate)} → {_pct(now.fail_rate)} "
                f"({_counts(before)} → {_counts(now)}).")
    elif status == "uncertain":
        text = f"Unclear: {what}. {situation.reason.rstrip('.')}."
    else:
        text = f"{status.capitalize()}: {what}, {_pct(now.fail_rate)} ({_counts(now)})."
    if situation.low_support:
        text += " Few graded conversations: tentative."
    return text


def summary(situations: Sequence[SituationRecord]) -> list[str]:
    """A sentence per situation, in the order given (worst first)."""
    by_id = {situation.situation_id: situation for situation in situations}
    return [sentence(situation, by_id) for situation in situations
            if situation.status != "passing"]
