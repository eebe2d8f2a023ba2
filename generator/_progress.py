"""How far a simulated person's goal got, read from the world's answers in the transcript.

The template person thanks, pushes back or leaves by it; the model person is told what it
can see of the world by it (:data:`generator.person._SEEN`).
"""

from __future__ import annotations

from collections.abc import Sequence

from generator._conduct_words import failure_of
from generator._world_values import past_tense, tool_kind
from generator.records import Goal, Message
from processor.results import end_state, parse_result, read_result, state_refusal

__all__ = ["PROGRESS", "goal_progress"]


PROGRESS = ("met", "already", "blocked", "partial", "failed", "none", "untracked")
"""What :func:`goal_progress` can say."""

_REFUSALS = frozenset({"conflict", "declined"})
"""Faults that refuse the action for the record's state or a rule, not for a fault of
the service (a time-out may go through on a second try; a delivered order will not
become cancellable)."""
_TEXT_KEYS = ("error", "code", "error_code", "issue", "message", "msg", "detail", "reason",
              "error_description", "description", "title")


def _said_states(parsed: object, text: str) -> list[str]:
    """The texts of one result that may name the record's state: status words (as
    ``status: <word>``) and messages of the body and its error object, or the text."""
    if not isinstance(parsed, dict):
        return [text[:600]]
    said: list[str] = []
    details = [item for key in ("details", "errors") if isinstance(parsed.get(key), list)
               for item in parsed[key][:3]]  # PayPal's details, JSON:API's errors
    for body in (parsed, parsed.get("error"), *details):
        if not isinstance(body, dict):
            continue
        for key in ("status", "state"):
            if isinstance(body.get(key), str):
                said.append(f"status: {body[key]}")
        said += [str(body[key])[:600] for key in _TEXT_KEYS
                 if isinstance(body.get(key), str) and body[key]]
    if isinstance(parsed.get("errors"), str):  # Shopify: {"errors": "Cannot cancel ..."}
        said.append(parsed["errors"][:600])
    return said


def _record_status(parsed: object) -> str | None:
    """The status a record shows (top level, else in a one-level nested record)."""
    if not isinstance(parsed, dict):
        return None
    for body in (parsed, *(v for v in parsed.values() if isinstance(v, dict))):
        for key in ("status", "state"):
            value = body.get(key)
            if isinstance(value, str) and value and len(value) <= 40:
                return value
    return None


def _goal_state(said: Sequence[str], looked_up: str | None, done: str | None) -> str:
    """``already`` when the refusal says the goal's end state holds, else ``blocked``
    (another state forbids it); a refusal that names no state is judged by the status
    the last lookup (``looked_up``, its text) showed, else blocked: nothing tells the
    person it was done."""
    verdicts = [end_state(text, done) for text in said]
    if "reached" in verdicts:
        return "already"
    if "passed" in verdicts:
        return "blocked"
    seen = _record_status(parse_result(looked_up)[0]) if looked_up else None
    if seen is not None and end_state(f"status: {seen}", done) == "reached":
        return "already"
    return "blocked"


def goal_progress(goal: Goal, transcript: Sequence[Message]) -> str:
    """How far the person's goal got, from what the world answered (the transcript's tool
    results, read as the checks read them): ``met`` (the asked tool succeeded),
    ``already`` (a result says the goal's end state already holds: "already cancelled"
    when the goal is cancelling), ``blocked`` (the asked tool was refused because the
    record is in another state or a rule forbids it: "delivered, not pending: cannot be
    cancelled", "within 24 hours of departure": the goal cannot be had), ``partial``,
    ``failed`` (the asked tool was called and failed otherwise), ``none`` (never called)
    or ``untracked`` (a goal with no tool: the agent's words are all there is). A lookup
    of something else (the order, when the person asked about stock) meets nothing.

    The processor reads both "already cancelled" and "delivered: cannot be cancelled" as
    the world state ``already_acted_on`` (the record's state forbids the action); the
    person tells them apart by the state the refusal names against the one the goal's
    action leaves (:func:`processor.results.end_state`)."""
    calls = {call.id: call.name for message in transcript if message.role == "assistant"
             for call in message.tool_calls}
    done = past_tense(goal.tool) if goal.tool else None
    outcome, already, looked_up = "none", False, None
    for message in transcript:
        if message.role != "tool":
            continue
        tool = calls.get(message.tool_call_id or "", message.name or "")
        reading = read_result(message.content, tool=tool or None)  # read once per result
        failure = failure_of(reading, tool)
        text = (message.content or "").strip()
        parsed = None
        if reading.world_state == "already_acted_on" or (
                tool == goal.tool and reading.fault in _REFUSALS):
            parsed, _ = parse_result(text)
        if reading.world_state == "already_acted_on":
            state = _goal_state(_said_states(parsed, text), looked_up, done)
            already = already or (state == "already" and tool != goal.tool)
        else:
            state = None
        if tool == goal.tool:
            if state is not None and (failure is not None or state == "already"):
                outcome = state
            elif failure in ("error", "permission_denied") and reading.fault in _REFUSALS \
                    and any(state_refusal(said[:600], failed=True) is not None
                            for said in _said_states(parsed, text)):
                outcome = "blocked"  # refused by a rule or a state that is no end state
            else:
                outcome = ("met" if failure is None else "partial" if failure ==
                           "partially_completed" else "failed")
        if not reading.failed and text.startswith("{") and (
                '"status"' in text or '"state"' in text) and tool_kind(tool) == "read":
            looked_up = text  # parsed only if a refusal names no state
    if goal.tool is None:
        return "already" if already else "untracked"
    if outcome in ("none", "failed") and already:
        return "already"
    return outcome
