"""Outcomes: did a conversation pass? Read from labels, evaluations and reward attributes.

Precedence, first that decides wins:

1. a label attached later (``tracemill label FILE``), newest first;
2. ``gen_ai.evaluation.result`` wherever it arrives: a span event, a log record, or a
   standalone span carrying ``gen_ai.evaluation.*`` attributes; a conversation fails when
   any evaluation fails;
3. a reward attribute (configurable keys, default ``reward`` and ``tracemill.reward``) on
   any of its spans, the root span first.

An evaluation passes by its label (pass, passed, true, success, correct, yes / fail,
failed, false, failure, incorrect, no) or else by ``gen_ai.evaluation.score.value`` against
the threshold (default 0.5, inclusive); a reward likewise. Numbers and booleans under
score-like attribute names that were *not* read are reported (:func:`unread_scores`), so
that a store full of ``score`` attributes never shows up silently as "ungraded".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from processor.records import LogRow, SpanRow

EVALUATION_EVENT = "gen_ai.evaluation.result"
_PASS = frozenset({"pass", "passed", "true", "success", "succeeded", "correct", "yes", "good"})
_FAIL = frozenset({"fail", "failed", "false", "failure", "incorrect", "no", "bad", "error"})
_SCORE_LIKE = re.compile(
    r"(^|[._])(score|reward|rating|grade|graded|passed|pass|success|correct|accuracy|judge|"
    r"feedback|thumbs)([._]|$)", re.I)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation result as read."""

    name: str | None
    """gen_ai.evaluation.name: what was judged (often a policy rule)."""
    score: float | None
    """gen_ai.evaluation.score.value."""
    label: str | None
    """gen_ai.evaluation.score.label."""
    explanation: str | None
    """gen_ai.evaluation.explanation."""
    passed: bool | None
    """The verdict (None when neither label nor score decides)."""
    channel: str
    """span_event, log_record or span."""


@dataclass(frozen=True)
class Label:
    """A label attached after the fact."""

    passed: bool | None
    """The verdict when given directly."""
    reward: float | None
    """The reward when given."""
    kind: str
    """human, program or model."""
    labeled_by: str
    """Who made it."""


@dataclass(frozen=True)
class Outcome:
    """The verdict on one conversation and where it came from."""

    outcome: str | None
    """pass, fail, or None (ungraded)."""
    reward: float | None
    """The score behind it, when numeric."""
    source: str | None
    """label:<kind>, evaluation:<name>, or attribute:<key>."""
    labeled_by: str | None
    """Who made the deciding label or evaluation."""
    failure_class: str | None
    """The failing evaluation's name, or a failure_class attribute."""
    evaluations: tuple[Evaluation, ...]
    """Every evaluation read."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _verdict(label: Any, score: float | None, threshold: float) -> bool | None:
    if isinstance(label, str) and label.strip().lower() in _PASS:
        return True
    if isinstance(label, str) and label.strip().lower() in _FAIL:
        return False
    if isinstance(label, bool):
        return label
    return None if score is None else score >= threshold


def _evaluation(attributes: dict[str, Any], channel: str, threshold: float) -> Evaluation:
    score = _number(attributes.get("gen_ai.evaluation.score.value"))
    label = attributes.get("gen_ai.evaluation.score.label")
    name = attributes.get("gen_ai.evaluation.name")
    explanation = attributes.get("gen_ai.evaluation.explanation")
    return Evaluation(
        name=str(name) if name is not None else None, score=score,
        label=str(label) if label is not None else None,
        explanation=str(explanation) if explanation is not None else None,
        passed=_verdict(label, score, threshold), channel=channel)


def read_evaluations(spans: Sequence[SpanRow], logs: Sequence[LogRow],
                     threshold: float) -> list[Evaluation]:
    """Every gen_ai.evaluation.result of a conversation, in time order."""
    found: list[tuple[int, Evaluation]] = []
    for span in spans:
        if "gen_ai.evaluation.name" in span.attributes or \
                "gen_ai.evaluation.score.value" in span.attributes:
            found.append((span.start_unix_nano, _evaluation(span.attributes, "span", threshold)))
        for event in span.events:
            if event.get("name") == EVALUATION_EVENT:
                attributes = event.get("attributes")
                time = event.get("time_unix_nano")
                found.append((time if isinstance(time, int) else span.start_unix_nano,
                              _evaluation(attributes if isinstance(attributes, dict) else {},
                                          "span_event", threshold)))
    for record in logs:
        if record.event_name == EVALUATION_EVENT:
            attributes = dict(record.attributes)
            if isinstance(record.body, dict):
                attributes = {**record.body, **attributes}
            found.append((record.time_unix_nano,
                          _evaluation(attributes, "log_record", threshold)))
    return [evaluation for _, evaluation in sorted(found, key=lambda item: item[0])]


def decide(spans: Sequence[SpanRow], logs: Sequence[LogRow], labels: Sequence[Label], *,
           reward_keys: Sequence[str], threshold: float) -> Outcome:
    """The outcome of one conversation (spans in time order, root spans first)."""
    evaluations = tuple(read_evaluations(spans, logs, threshold))
    failing = next((e for e in evaluations if e.passed is False), None)
    failure_class = failing.name if failing else None
    if failure_class is None:
        for span in spans:
            value = span.attributes.get("failure_class") or span.attributes.get(
                "tracemill.failure_class")
            if isinstance(value, str):
                failure_class = value
                break
    for label in labels:
        passed = label.passed if label.passed is not None else (
            None if label.reward is None else label.reward >= threshold)
        if passed is not None:
            return Outcome("pass" if passed else "fail", label.reward, f"label:{label.kind}",
                           label.labeled_by, failure_class, evaluations)
    decided = [e for e in evaluations if e.passed is not None]
    if decided:
        deciding = failing or decided[-1]
        return Outcome("pass" if deciding.passed else "fail", deciding.score,
                       f"evaluation:{deciding.name or 'unnamed'}", deciding.name,
                       failure_class, evaluations)
    ordered = sorted(spans, key=lambda span: span.parent_span_id is not None)
    for key in reward_keys:
        for span in ordered:
            reward = _number(span.attributes.get(key))
            if reward is not None:
                return Outcome("pass" if reward >= threshold else "fail", reward,
                               f"attribute:{key}", None, failure_class, evaluations)
    return Outcome(None, None, None, None, failure_class, evaluations)


def unread_scores(spans: Sequence[SpanRow], reward_keys: Sequence[str]) -> list[str]:
    """Score-like attributes with numeric or boolean values that no rule reads."""
    names: set[str] = set()
    for span in spans:
        for key, value in span.attributes.items():
            # most values are text: the type test first spares the name tests
            if not isinstance(value, (bool, int, float)) or key in reward_keys:
                continue
            score_like = _SCORE_KEYS.get(key)
            if score_like is None:
                score_like = not key.startswith(_NOT_SCORES) and bool(_SCORE_LIKE.search(key))
                if len(_SCORE_KEYS) < 4096:
                    _SCORE_KEYS[key] = score_like
            if score_like:
                names.add(key)
    return sorted(names)


_NOT_SCORES = ("gen_ai.evaluation.", "gen_ai.usage.", "llm.token_count")
"""Score-like names that are read elsewhere (evaluations) or are counts, not scores."""
_SCORE_KEYS: dict[str, bool] = {}
"""Attribute names seen, with whether they are score-like (a bounded cache: attribute
names are few, values many)."""
