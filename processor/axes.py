"""The six axes of a situation and the rules that place a conversation on them.

Every rule reads the assembled conversation only (plus its outcome's evaluations), so it
is deterministic and testable. Value sets:

==============  ===========================================================================
axis            values and rule (first match wins)
==============  ===========================================================================
tool            the tool of the first step whose condition is not ``success``; else the
                only tool used; ``multi_tool`` when several were used; ``no_tool``
tool_condition  of that step: ``timeout``, ``permission_denied``, ``not_found``,
                ``malformed_result``, ``stale_result``, ``error``, ``unknown`` (no result
                seen), ``success``; ``none`` when there is no tool step (see
                :func:`step_condition`)
world_state     over the steps in order: ``missing`` (a not-found answer),
                ``already_acted_on`` (result ``status`` starting ``already_``),
                ``duplicate`` (result ``duplicate: true``), ``partially_completed``
                (result ``status: partial``); else ``entity_exists`` (a successful result
                carrying an id); else ``unknown``
history         ``prior_failure`` (a failed step before a later successful one),
                ``prior_partial_action`` (a partial result before a later step),
                ``contradicts_earlier`` (a later user turn that takes back an earlier
                one: "actually", "no, ", "i meant"), ``repeat_visit`` (the ask says
                "again" / "already contacted"), else ``fresh``; then across the session
                (``session.id``, not ``user.id``; SQL post-pass ``session_history.sql``,
                the within value kept in ``history_within``): a ``fresh`` conversation
                after an earlier one of its session (start time, then id) becomes
                ``prior_failure`` when an earlier one failed or had a failed tool step,
                else ``repeat_visit``
user_stance     from the first ask, by keywords: ``adversarial``, ``frustrated``,
                ``hurried``, ``mistaken``, ``unsure``, ``conflicting``, else ``ordinary``;
                ``unknown`` when the ask was not captured (:mod:`processor.stance`)
policy_rule     with a policy document (``--policy FILE``, :mod:`processor.policy`): the id
                of the clause that the failing evaluations (else all evaluations; name,
                label, explanation) and the failure class match; when they match no
                clause, the clause the final reply and the steps (tool, arguments, error)
                match; keyword overlap of at least ``MIN_SHARED`` words, see
                :func:`processor.policy.match_clause`. Without a document or a match:
                the failure class, else the first evaluation's name; ``unspecified``
                (:func:`policy_rule`)
==============  ===========================================================================

A status such as ``paid`` or ``shipped`` in a result is data, not a fault.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from processor.outcomes import Outcome
from processor.policy import clause_index, match_clause
from processor.records import Step
from processor.stance import classify_stance

AXES: tuple[str, ...] = (
    "tool", "tool_condition", "world_state", "history", "user_stance", "policy_rule")
"""The six axes, in the order reports list them."""

_CONTRADICTION = re.compile(r"^\s*(actually|no,|no i|i meant|wait,|sorry, i meant)", re.I)
_REPEAT = ("again", "already contacted", "last time", "still not")


@dataclass(frozen=True)
class Situation:
    """A conversation's coordinates on the six axes."""

    tool: str
    """See the module table."""
    tool_condition: str
    """See the module table."""
    world_state: str
    """See the module table."""
    history: str
    """See the module table."""
    user_stance: str
    """See the module table."""
    policy_rule: str
    """See the module table."""


def _result_object(result: str | None) -> tuple[Any, bool]:
    """(parsed JSON or None, malformed?) for a tool result."""
    if result is None:
        return None, False
    text = result.strip()
    if not text.startswith(("{", "[")):
        return None, False
    try:
        return orjson.loads(text), False
    except orjson.JSONDecodeError:
        return None, True


def _fault_from_text(text: str) -> str | None:
    lowered = text.lower().replace("_", "").replace(" ", "")
    if "timeout" in lowered or "timedout" in lowered or "deadline" in lowered:
        return "timeout"
    if "permission" in lowered or "forbidden" in lowered or "unauthorized" in lowered \
            or lowered.startswith("403"):
        return "permission_denied"
    if "notfound" in lowered or lowered.startswith("404"):
        return "not_found"
    return None


def step_condition(step: Step) -> str:
    """The tool condition one step shows."""
    return _condition(step, _result_object(step.result))


def _condition(step: Step, result: tuple[Any, bool]) -> str:
    """:func:`step_condition`, given the step's result as :func:`_result_object` reads it."""
    if step.status == "error":
        return _fault_from_text(step.error or "") or "error"
    parsed, malformed = result
    if malformed:
        return "malformed_result"
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if error:
            return _fault_from_text(str(error)) or "error"
        if parsed.get("stale") is True:
            return "stale_result"
    if step.status == "missing":
        return "unknown"
    return "success"


def _world_state(steps: Sequence[Step], results: Sequence[tuple[Any, bool]],
                 conditions: Sequence[str]) -> str:
    exists = False
    for step, (parsed, _), condition in zip(steps, results, conditions, strict=True):
        if condition == "not_found":
            return "missing"
        if not isinstance(parsed, dict):
            continue
        status = str(parsed.get("status", "")).lower()
        if status.startswith("already_") or status.startswith("already "):
            return "already_acted_on"
        if parsed.get("duplicate") is True:
            return "duplicate"
        if status == "partial":
            return "partially_completed"
        if step.status == "ok" and any(key == "id" or key.endswith("_id") for key in parsed):
            exists = True
    return "entity_exists" if exists else "unknown"


def _history(first_ask: str | None, user_turns: Sequence[str | None],
             steps: Sequence[Step], results: Sequence[tuple[Any, bool]],
             conditions: Sequence[str]) -> str:
    for index, condition in enumerate(conditions):
        if condition not in ("success", "unknown") and "success" in conditions[index + 1:]:
            return "prior_failure"
    for index, (parsed, _) in enumerate(results[:-1]):
        if isinstance(parsed, dict) and str(parsed.get("status", "")).lower() == "partial" \
                and index < len(steps) - 1:
            return "prior_partial_action"
    if any(turn and _CONTRADICTION.search(turn) for turn in user_turns):
        return "contradicts_earlier"
    if first_ask and any(word in first_ask.lower() for word in _REPEAT):
        return "repeat_visit"
    return "fresh"


_REPLY_CHARS = 4000  # enough of a reply to say what it is about; bounds the tokenising


def policy_rule(outcome: Outcome, clauses: tuple[tuple[str, str], ...],
                final_reply: str | None, steps: Sequence[Step]) -> str:
    """The policy_rule axis value of a conversation (see the module table).

    ``clauses`` are :attr:`processor.options.ProcessOptions.policy_clauses`; their words
    are computed once per policy and process (:func:`processor.policy.clause_index`).
    """
    if clauses:
        index = clause_index(clauses)
        judged = [e for e in outcome.evaluations if e.passed is False] or \
            list(outcome.evaluations)
        texts = [outcome.failure_class]
        for evaluation in judged:
            texts += [evaluation.name, evaluation.label, evaluation.explanation]
        matched = match_clause(index, texts)
        if matched is None:
            conduct: list[str | None] = [final_reply[:_REPLY_CHARS] if final_reply else None]
            for step in steps:
                conduct += [step.tool, step.arguments, step.error]
            matched = match_clause(index, conduct)
        if matched is not None:
            return matched
    return outcome.failure_class or next(
        (e.name for e in outcome.evaluations if e.name), None) or "unspecified"


def situate(*, first_ask: str | None, user_turns: Sequence[str | None],
            steps: Sequence[Step], policy_rule: str) -> Situation:
    """Place one conversation on the six axes."""
    results = [_result_object(step.result) for step in steps]  # each result parsed once
    conditions = [_condition(step, result) for step, result in zip(steps, results, strict=True)]
    tools = []
    for step in steps:
        if step.tool not in tools:
            tools.append(step.tool)
    failing = next((index for index, condition in enumerate(conditions)
                    if condition != "success"), None)
    if failing is not None:
        tool, condition = steps[failing].tool, conditions[failing]
    elif len(tools) == 1:
        tool, condition = tools[0], "success"
    elif tools:
        tool, condition = "multi_tool", "success"
    else:
        tool, condition = "no_tool", "none"
    return Situation(
        tool=tool, tool_condition=condition,
        world_state=_world_state(steps, results, conditions),
        history=_history(first_ask, user_turns, steps, results, conditions),
        user_stance=classify_stance(first_ask), policy_rule=policy_rule or "unspecified",
    )
