"""The six axes of a situation and the rules that place a conversation on them.

Every rule reads the assembled conversation only (plus its outcome's evaluations), so it
is deterministic and testable. Each tool result is read once, by
:func:`processor.results.read_result` (span status, error type and the result body alike:
``{"status": "not_found"}`` on an OK span is a failure). A step is a *plain success* when
its reading is ``success`` with no world-state signal. Value sets:

==============  ===========================================================================
axis            values and rule (first match wins)
==============  ===========================================================================
tool            the *focal* tool, where the conversation went wrong: the tool of the first
                step that is not a plain success (a failure by span or body, a result never
                seen, or a body that says missing / already acted on / duplicate /
                partial); else the first state-changing action (the first verb of its name:
                cancel, update, create, book, refund, send, transfer, enable, suspend, ...,
                :func:`processor.tool_verbs.is_action`); else the last step's tool;
                ``no_tool`` when there is no step. The full list of tools called (first-call
                order) is kept apart (:attr:`Situation.tools`, column ``tools``), and the
                index of the step that went wrong (:attr:`Situation.focal_step`, column
                ``focal_step``; None when no step went wrong)
tool_condition  of the focal step: ``timeout``, ``permission_denied``, ``not_found``,
                ``malformed_result``, ``stale_result``, ``error``, ``unknown`` (no result
                seen), ``success``; ``none`` when there is no tool step. A later retry of
                the failing tool, successful or not, does not change it
world_state     what the focal step's body says: ``missing`` (a not-found reading),
                ``already_acted_on``, ``duplicate``, ``partially_completed``; else the first
                such signal of the other steps, in order; else ``entity_exists`` (a
                successful result carrying an id); else ``unknown``. Permission and stale
                data are tool conditions, not world states
history         read only from what happened before the focal step, never from the
                conversation's own later outcome or retries: ``prior_failure`` (the first
                ask, or a user turn before the focal step, says an earlier attempt failed:
                "I tried this before and it didn't go through"), ``prior_partial_action``
                (says part of it was done before), ``contradicts_earlier`` (a user turn
                before the focal step takes back an earlier one: "actually", "no, ", "i
                meant"), ``repeat_visit`` (the first ask says the person was in touch
                before: "I'm asking again", "I called on Monday", "your colleague
                promised", "my third message", "following up on case 4471"; a bare
                "again" is a fault that recurs or a wish, not a contact:
                :mod:`processor._history_cues`), else ``fresh``. Steps before the
                focal step are plain successes by construction, so they add nothing.
                User turns count as before the focal step when the caller says how
                many steps preceded each (``turn_steps``, from the ordered transcript:
                :func:`user_turn_steps`), else all of them do; without a step every
                turn counts. Then across the session
                (``session.id``, not ``user.id``; SQL post-pass ``session_history.sql``,
                the within value kept in ``history_within``): a ``fresh`` conversation
                after an earlier one of its session (start time, then id) becomes
                ``prior_failure`` when an earlier one failed or had a failed tool step,
                ``prior_partial_action`` when an earlier one's world state was
                ``partially_completed``, else ``repeat_visit``
user_stance     from the first ask (:func:`processor.stance.classify_stance`):
                ``adversarial``, ``frustrated``, ``hurried``, ``mistaken``, ``unsure``,
                ``conflicting``, else ``ordinary``; ``unknown`` when the ask was not
                captured
policy_rule     with a policy document (``--policy FILE``, :mod:`processor.policy`): the id
                of the clause that the failing evaluations (else all evaluations; name,
                label, explanation) and the failure class match; when they match no
                clause, the clause the final reply and the steps (tool, arguments, error)
                match; keyword overlap of at least ``MIN_SHARED`` words, see
                :func:`processor.policy.match_clause`. Without a document or a match:
                the failure class, else the first evaluation's name; ``unspecified``
                (:func:`policy_rule`)
==============  ===========================================================================

A status such as ``paid`` or ``shipped`` in a result is data, not a fault
(:mod:`processor.results` has the full reading table).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from processor._history_cues import PRIOR_FAILURE, PRIOR_PARTIAL, says_contact
from processor.outcomes import Outcome
from processor.policy import clause_index, match_clause
from processor.records import Message, Step
from processor.results import ResultReading, read_result
from processor.stance import classify_stance
from processor.tool_verbs import is_action

AXES: tuple[str, ...] = (
    "tool", "tool_condition", "world_state", "history", "user_stance", "policy_rule")
"""The six axes, in the order reports list them."""

_CONTRADICTION = re.compile(r"^\s*(actually|no,|no i|i meant|wait,|sorry, i meant)", re.I)
_PRIOR_FAILURE = PRIOR_FAILURE
_PRIOR_PARTIAL = PRIOR_PARTIAL

_WORLD_SIGNALS = ("missing", "already_acted_on", "duplicate", "partially_completed")


@dataclass(frozen=True)
class Situation:
    """A conversation's coordinates on the six axes, with the steps they were read from."""

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
    tools: tuple[str, ...] = ()
    """Every tool called, in order of first call (not an axis: the ``tool`` axis keeps
    only the focal tool)."""
    focal_step: int | None = None
    """Index in the steps of the step that went wrong (the first that is not a plain
    success); None when none did or there were no steps (not an axis)."""


def read_step(step: Step) -> ResultReading:
    """What one step's result says (:func:`processor.results.read_result`)."""
    return read_result(step.result, status=step.status, error=step.error, tool=step.tool)


def step_condition(step: Step) -> str:
    """The tool condition one step shows."""
    return read_step(step).condition


def user_turn_steps(transcript: Sequence[Message]) -> tuple[int, ...]:
    """For each user message after the first, how many tool calls came before it.

    ``transcript`` is the ordered exchange (:attr:`processor.assemble.Assembled.transcript`);
    its tool calls are the conversation's steps in the same order, so a user turn whose
    count is at most ``k`` was said before step ``k`` was called.
    """
    calls = 0
    counts: list[int] = []
    seen_first = False
    for message in transcript:
        if message.role == "user":
            if seen_first:
                counts.append(calls)
            seen_first = True
        elif message.role == "assistant":
            calls += len(message.tool_calls)
    return tuple(counts)


def _focus(steps: Sequence[Step], readings: Sequence[ResultReading]) -> tuple[int | None, bool]:
    """(index of the focal step, whether it went wrong); (None, False) without steps."""
    for index, reading in enumerate(readings):
        if not reading.plain:
            return index, True
    for index, step in enumerate(steps):
        if is_action(step.tool):
            return index, False
    return (len(steps) - 1, False) if steps else (None, False)


def _world_state(focal: int | None, readings: Sequence[ResultReading]) -> str:
    if focal is not None and readings[focal].world_state in _WORLD_SIGNALS:
        return readings[focal].world_state or "unknown"
    for reading in readings:
        if reading.world_state in _WORLD_SIGNALS:
            return reading.world_state or "unknown"
    if any(reading.has_id and reading.condition == "success" for reading in readings):
        return "entity_exists"
    return "unknown"


# Substrings every match of the two patterns above contains: most asks have none, and
# the patterns are slow to run over text that cannot match.
_FAILURE_HINTS = ("fail", "didn", "did not", "error", "no luck", "never went")
_PARTIAL_HINTS = ("part", "some of", "half of", "only some", "only half")


def _says(texts: Sequence[str], pattern: re.Pattern[str], hints: tuple[str, ...]) -> bool:
    for text in texts:
        lowered = text.lower()
        for hint in hints:
            if hint in lowered:
                if pattern.search(text):
                    return True
                break
    return False


def _history(first_ask: str | None, earlier_turns: Sequence[str | None]) -> str:
    said = [text for text in (first_ask, *earlier_turns) if text]
    if _says(said, _PRIOR_FAILURE, _FAILURE_HINTS):
        return "prior_failure"
    if _says(said, _PRIOR_PARTIAL, _PARTIAL_HINTS):
        return "prior_partial_action"
    if any(turn and _CONTRADICTION.search(turn) for turn in earlier_turns):
        return "contradicts_earlier"
    if first_ask and says_contact(first_ask):
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
            steps: Sequence[Step], policy_rule: str,
            turn_steps: Sequence[int] | None = None) -> Situation:
    """Place one conversation on the six axes (see the module table).

    ``turn_steps`` says, for each of ``user_turns``, how many steps came before it
    (:func:`user_turn_steps`); without it every user turn counts as said before the focal
    step.
    """
    readings = [read_step(step) for step in steps]  # each result parsed once
    focal, went_wrong = _focus(steps, readings)
    tools = tuple(dict.fromkeys(step.tool for step in steps))
    if focal is None:
        tool, condition = "no_tool", "none"
    else:
        tool, condition = steps[focal].tool, readings[focal].condition
    if focal is None or turn_steps is None or len(turn_steps) != len(user_turns):
        earlier = tuple(user_turns)
    else:
        earlier = tuple(turn for turn, before in zip(user_turns, turn_steps, strict=True)
                        if before <= focal)
    return Situation(
        tool=tool, tool_condition=condition,
        world_state=_world_state(focal, readings),
        history=_history(first_ask, earlier),
        user_stance=classify_stance(first_ask), policy_rule=policy_rule or "unspecified",
        tools=tools, focal_step=focal if went_wrong else None,
    )
