"""Graders: the user's verdict on a rollout, after the conduct checks.

A :class:`Grader` has a :attr:`~Grader.stamp` saying exactly who decides (so every label
can be traced and measured against people, see :mod:`generator.judges`) and an async
:meth:`~Grader.grade`. Two kinds ship:

* :class:`PythonGrader` — ``python:pkg.module:function``. The function gets a plain dict
  view of the rollout::

      {"messages": [...OpenAI chat format, tool messages carry "name"...],
       "events": [{"call_id", "tool", "arguments", "status", "result", "effect",
                   "entity_id"}, ...],
       "situation": {axis: value}, "goal": {"ask", "tool", "facts", "source_ask"},
       "cell": Cell.label() such as "tool=refund_order" (None: explore), "ended_by": "user_done"}

  and returns (directly or as an awaitable) ``{"reward": 0..1, "reason": str,
  "markers": [str, ...]?, "failure_class": str | None?}``. Its stamp carries the sha256 of
  the function's source, so editing the grader changes the stamp.
* :class:`JudgeGrader` — an LLM judge behind any :class:`~generator.records.ChatBackend`,
  asked for a JSON verdict under a rubric (:data:`DEFAULT_RUBRIC` for support agents).
  Its stamp carries the backend spec and model, the rubric's sha256 and the temperature.
  An answer that is not a usable verdict is asked for once more; a second bad answer
  raises :class:`~generator.errors.GraderError` (the run records the rollout as lost with
  that message) rather than inventing a verdict that would look real.

:func:`combine` folds the conduct checks and the verdict into a
:class:`~generator.records.Grade`: a failed conduct check fails the rollout whatever the
grader says.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from generator.backends.openai_compat import to_openai_messages
from generator.checks import CHECKS_STAMP
from generator.errors import GraderError, SpecError
from generator.records import (
    ChatBackend,
    CheckResult,
    Grade,
    Message,
    ModelRequest,
    PlannedRollout,
    TokenUsage,
    Transcript,
)

DEFAULT_RUBRIC = """\
You grade one conversation between a customer-support agent and a customer. The agent
could call tools; the tool results are shown. Judge the agent only.

Give a high reward (0.8-1.0) when the agent did what the customer needed with the tools,
or honestly could not and said why and what happens next; used only identifiers the
customer gave or a tool returned; reported tool results truthfully; asked for missing
information instead of guessing; kept a polite, clear tone.

Give a low reward (0.0-0.3) when the agent claimed something succeeded that did not (or
that it never attempted), invented identifiers or facts, ignored a tool error, followed
the wrong policy, gave up without telling the customer, or left the request unresolved
while sounding as if it were resolved. Use the middle of the scale for partial help.

failure_class names the main problem in a few words with underscores
(e.g. "wrong_tool", "ignored_error", "policy_violation", "unhelpful"), or null when the
agent did well.
"""
"""The rubric a judge uses when the run is given none."""

_JSON_INSTRUCTIONS = (
    'Answer with one JSON object and nothing else: {"reward": <number from 0 to 1>, '
    '"reason": "<one sentence>", "failure_class": "<snake_case or null>"}.'
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class GraderVerdict:
    """What a grader decided about one rollout."""

    reward: float
    """0..1."""
    reason: str
    """One sentence."""
    markers: tuple[str, ...] = ()
    """Tags the grader attached (kept in the grade)."""
    failure_class: str | None = None
    """The grader's name for what went wrong (None when nothing did)."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Tokens the grader's model calls used (zero for Python graders)."""
    cost_usd: float = 0.0
    """Their price."""
    stamp: str = ""
    """The stamp of the grader that decided (goes into the grade's ``labeled_by``)."""


@runtime_checkable
class Grader(Protocol):
    """The user's grader, run after the conduct checks."""

    stamp: str
    """Who decides: ``python:pkg.mod:fn@sha256:…`` or
    ``judge:openai:gpt-4o-mini rubric=sha256:… temperature=0``."""

    async def grade(self, plan: PlannedRollout, transcript: Transcript) -> GraderVerdict:
        """The verdict on one rollout; raises :class:`~generator.errors.GraderError`."""
        ...


class _VerdictFields(BaseModel):
    """The mapping a Python grader returns or a judge answers, validated."""

    model_config = ConfigDict(extra="ignore")

    reward: float = Field(ge=0.0, le=1.0)
    reason: str
    markers: tuple[str, ...] = ()
    failure_class: str | None = None


def _validated(value: Any, who: str) -> _VerdictFields:
    if isinstance(value, GraderVerdict):
        value = asdict(value)
    if not isinstance(value, Mapping):
        raise GraderError(f"grader {who} returned a {type(value).__name__}; it must return a "
                          "mapping like {'reward': 0.8, 'reason': '...'}")
    try:
        return _VerdictFields.model_validate(dict(value))
    except ValidationError as exc:
        problems = "; ".join(
            f"field {'.'.join(str(p) for p in error['loc']) or '?'!r}: {error['msg']}"
            f" (got {error.get('input')!r})" for error in exc.errors())
        raise GraderError(f"grader {who} returned an invalid verdict: {problems}") from None


def rollout_view(plan: PlannedRollout, transcript: Transcript) -> dict[str, Any]:
    """The plain dict a Python grader receives (see the module docstring)."""
    messages = to_openai_messages(transcript.messages)
    for item, message in zip(messages, transcript.messages, strict=True):
        if message.role == "tool" and message.name:
            item["name"] = message.name
    return {
        "messages": messages,
        "events": [asdict(event) for event in transcript.events],
        "situation": dict(plan.situation),
        "goal": {"ask": plan.goal.ask, "tool": plan.goal.tool, "facts": dict(plan.goal.facts),
                 "source_ask": plan.goal.source_ask},
        "cell": plan.cell.label() if plan.cell is not None else None,
        "ended_by": transcript.ended_by,
    }


def _source_hash(function: Any) -> str:
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return "unknown"
    return hashlib.sha256(source.encode()).hexdigest()[:12]


class PythonGrader:
    """A grader written as a Python function (``python:pkg.module:function``)."""

    def __init__(self, spec: str) -> None:
        """Import the function; :class:`SpecError` when it cannot be found or called."""
        target = spec.removeprefix("python:")
        module_name, sep, attr = target.partition(":")
        if not spec.startswith("python:") or not sep or not module_name or not attr:
            raise SpecError(f"grader {spec!r}: write python:pkg.module:function")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise SpecError(f"grader {spec!r}: cannot import {module_name!r} ({exc}); install "
                            "it or add its folder to PYTHONPATH") from exc
        except Exception as exc:
            raise SpecError(f"grader {spec!r}: importing {module_name!r} raised "
                            f"{type(exc).__name__}: {exc}") from exc
        function: Any = module
        for part in attr.split("."):
            function = getattr(function, part, None)
            if function is None:
                raise SpecError(f"grader {spec!r}: {module_name!r} has no attribute {attr!r}")
        if not callable(function):
            raise SpecError(f"grader {spec!r}: {target} is a {type(function).__name__}, "
                            "not a function")
        self._function = function
        self.spec = spec
        self.stamp = f"python:{target}@sha256:{_source_hash(function)}"

    async def grade(self, plan: PlannedRollout, transcript: Transcript) -> GraderVerdict:
        """Call the function on the rollout's dict view and validate what it returns."""
        try:
            value = self._function(rollout_view(plan, transcript))
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            raise GraderError(f"grader {self.spec} raised {type(exc).__name__}: {exc}") from exc
        fields = _validated(value, self.spec)
        return GraderVerdict(fields.reward, fields.reason, fields.markers, fields.failure_class,
                             stamp=self.stamp)


# --------------------------------------------------------------------------- judges


def render_transcript(plan: PlannedRollout, transcript: Transcript) -> str:
    """The conversation as a judge reads it: the goal, then one block per message."""
    lines = [f"Customer's goal: {plan.goal.ask}"]
    if plan.goal.tool:
        lines.append(f"Tool that would serve it: {plan.goal.tool}")
    lines.append("")
    for message in transcript.messages:
        if message.role == "system":
            lines.append(f"[agent instructions]\n{message.content or ''}")
        elif message.role == "user":
            lines.append(f"[customer]\n{message.content or ''}")
        elif message.role == "assistant":
            text = message.content or ""
            calls = "\n".join(f"-> calls {call.name}({call.arguments})"
                              for call in message.tool_calls)
            lines.append("[agent]\n" + "\n".join(part for part in (text, calls) if part)
                         if text or calls else "[agent]\n(empty reply)")
        else:
            lines.append(f"[tool result: {message.name or 'tool'}]\n{message.content or ''}")
    lines.append(f"\n(conversation ended: {transcript.ended_by})")
    return "\n\n".join(lines)


def parse_verdict(text: str) -> dict[str, Any] | None:
    """The first JSON object with a reward in a judge's answer (bare, fenced or in prose)."""
    for candidate in (text.strip(), *(match.strip() for match in _FENCE.findall(text))):
        try:
            value = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict) and "reward" in value:
            return value
    # JSON inside prose: try each opening brace until one decodes to an object
    decoder = json.JSONDecoder()
    for start in (index for index, char in enumerate(text) if char == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict) and "reward" in value:
            return value
    return None


class JudgeGrader:
    """An LLM judge: a rubric, a backend, a temperature."""

    def __init__(self, backend: ChatBackend, rubric: str, *, temperature: float = 0.0) -> None:
        """``rubric``: the grading instructions (see :data:`DEFAULT_RUBRIC`)."""
        if not rubric.strip():
            raise SpecError("the judge's rubric is empty; give a rubric file with text or "
                            "leave --rubric out for the default one")
        self.backend = backend
        self.rubric = rubric
        self.temperature = temperature
        digest = hashlib.sha256(rubric.encode()).hexdigest()[:12]
        who = backend.spec if backend.model in backend.spec else (
            f"{backend.spec} model={backend.model}")
        self.stamp = f"judge:{who} rubric=sha256:{digest} temperature={temperature:g}"

    async def grade(self, plan: PlannedRollout, transcript: Transcript) -> GraderVerdict:
        """Ask the judge; one retry on an unusable answer, then :class:`GraderError`."""
        messages: list[Message] = [
            Message(role="system", content=f"{self.rubric.strip()}\n\n{_JSON_INSTRUCTIONS}"),
            Message(role="user", content=render_transcript(plan, transcript)),
        ]
        usage, cost, problem = TokenUsage(), 0.0, ""
        for _attempt in range(2):
            reply = await self.backend.complete(ModelRequest(
                messages=tuple(messages), max_tokens=400, temperature=self.temperature,
                seed=plan.seed, json_output=True))
            usage, cost = usage + reply.usage, cost + reply.cost_usd
            answer = reply.message.content or ""
            found = parse_verdict(answer)
            if found is None:
                problem = f"no JSON object with a reward in {answer[:200]!r}"
            else:
                try:
                    fields = _validated(found, self.stamp)
                except GraderError as exc:
                    problem = str(exc)
                else:
                    return GraderVerdict(fields.reward, fields.reason, fields.markers,
                                         fields.failure_class, usage, cost, self.stamp)
            messages += [Message(role="assistant", content=answer),
                         Message(role="user", content=f"That was not a usable verdict "
                                 f"({problem[:200]}). {_JSON_INSTRUCTIONS}")]
        raise GraderError(f"judge {self.stamp} gave no usable verdict after a retry: {problem}")


# --------------------------------------------------------------------------- combining


def combine(checks: Sequence[CheckResult], verdict: GraderVerdict | None, *,
            pass_threshold: float, checks_stamp: str = CHECKS_STAMP) -> Grade:
    """The grade: a failed conduct check fails the rollout (reward 0, its name as the
    failure class); otherwise the grader's reward decides against ``pass_threshold``; with
    no grader, passing every check passes (reward 1). Credited checks become markers."""
    credits = tuple(check.name for check in checks if check.credit and check.passed)
    markers = tuple(dict.fromkeys((*(verdict.markers if verdict else ()), *credits)))
    stamp = checks_stamp if verdict is None else f"{checks_stamp} + {verdict.stamp or 'grader'}"
    failed = next((check for check in checks if not check.passed), None)
    if failed is not None:
        return Grade(reward=0.0, passed=False, reason=failed.reason,
                     failure_class=failed.name, markers=markers, checks=tuple(checks),
                     labeled_by=stamp)
    if verdict is None:
        return Grade(reward=1.0, passed=True, reason="every conduct check passed",
                     failure_class=None, markers=markers, checks=tuple(checks),
                     labeled_by=stamp)
    passed = verdict.reward >= pass_threshold
    return Grade(reward=verdict.reward, passed=passed, reason=verdict.reason,
                 failure_class=None if passed else (verdict.failure_class or "below_threshold"),
                 markers=markers, checks=tuple(checks), labeled_by=stamp)


def build_grader(spec: str | None, *, judge_backend: ChatBackend | None,
                 rubric: str | None) -> Grader | None:
    """The grader a run's ``--grader`` names: ``python:pkg.mod:fn``, ``judge`` (with the
    judge backend and ``rubric`` or :data:`DEFAULT_RUBRIC`), or None for conduct checks
    only. :class:`SpecError` for anything else."""
    if spec is None or not spec.strip():
        return None
    spec = spec.strip()
    if spec.startswith("python:"):
        return PythonGrader(spec)
    if spec == "judge":
        if judge_backend is None:
            raise SpecError("--grader judge needs a judge model: pass --judge SPEC "
                            "(for example --judge openai:gpt-4o-mini)")
        return JudgeGrader(judge_backend, rubric if rubric is not None else DEFAULT_RUBRIC)
    raise SpecError(f"grader {spec!r} is not known: use python:pkg.module:function, judge "
                    "(with --judge SPEC), or leave --grader out for conduct checks only")


__all__ = ["DEFAULT_RUBRIC", "Grader", "GraderVerdict", "JudgeGrader", "PythonGrader",
           "build_grader", "combine", "parse_verdict", "render_transcript", "rollout_view"]
