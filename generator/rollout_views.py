"""Stored rollouts as a person reads them: ``tracemill rollouts`` and ``rollouts show``.

:func:`list_rollouts` gives one :class:`RolloutSummary` per rollout matching a
:class:`RolloutFilter`; :func:`find_rollout` gives one :class:`RolloutDetail` in full:
the transcript (messages in OpenAI chat format, each tool result with the status the
world answered it with), its lineage to production conversations, the mutation and
whether it fired, and every grade (each conduct check with its reason, the grader's
verdict, labels people attached later). The ``render_*`` functions are the text the
command prints; ``to_json`` forms are what ``--json`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import duckdb
import orjson

from generator.backends.openai_compat import to_openai_messages
from generator.records import Message, ToolCall
from tracemill.store import load_sql

Outcome = Literal["pass", "fail", "ungraded"]


@dataclass(frozen=True)
class RolloutFilter:
    """Which rollouts to list (None: any)."""

    run_id: str | None = None
    """Only this run's."""
    situation: str | None = None
    """Aimed at this cell label (or a part of it, or a situation id)."""
    outcome: Outcome | None = None
    """pass, fail or ungraded."""
    mutation: Literal["fired", "not_fired", "none"] | None = None
    """Whether the planned mutation took effect (none: nothing to take effect)."""
    limit: int = 50
    """Most rows."""


@dataclass(frozen=True)
class RolloutSummary:
    """One line of ``tracemill rollouts``."""

    rollout_id: str
    """``run_id:index``; what ``rollouts show`` and ``label`` take."""
    run_id: str
    """The generation run."""
    index: int
    """Position in the run's plan."""
    purpose: str
    """target, explore or guard."""
    situation: str
    """The cell aimed at, or ``explore``."""
    axes: Mapping[str, str]
    """The six axis values it was built to show."""
    mutation: str
    """The mutation's kind (world_state, tool_fault, reperson, paraphrase, explore)."""
    mutation_detail: str
    """The mutation in plain words."""
    mutation_fired: bool | None
    """Whether it took effect (None: nothing to take effect, or the world cannot tell)."""
    outcome: Outcome
    """pass, fail or ungraded."""
    failure_class: str | None
    """Why it failed."""
    ended_by: str
    """How the conversation ended."""
    turns: int
    """Messages the person wrote."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return asdict(self)


@dataclass(frozen=True)
class CheckView:
    """One conduct check as graded."""

    name: str
    """The check."""
    passed: bool
    """False when the agent did what it looks for."""
    reason: str
    """Why, with the evidence."""
    credit: bool
    """True when it counted for the agent (a fault handled well)."""


@dataclass(frozen=True)
class LabelView:
    """A label attached to the rollout later (``tracemill label``)."""

    kind: str
    """human, program or model."""
    labeled_by: str
    """Who."""
    passed: bool | None
    """Their verdict."""
    reward: float | None
    """Their reward, if any."""
    note: str | None
    """Their note."""
    at: str
    """When (UTC)."""


@dataclass(frozen=True)
class RolloutDetail:
    """One rollout in full (``tracemill rollouts show``)."""

    summary: RolloutSummary
    """The list line."""
    cell_status: str | None
    """The cell's status in the map when planned."""
    situation_id: str | None
    """The failure-map situation's id, when the plan aimed at one."""
    seed: int
    """The rollout's seed."""
    source_conversations: tuple[str, ...]
    """Production conversations it derives from."""
    mutation_plan: Mapping[str, Any]
    """The planned mutation in full: kind, detail, world_state, faults."""
    persona: Mapping[str, Any]
    """The simulated person."""
    goal: Mapping[str, Any]
    """What they wanted and knew."""
    agent: str
    """The agent's spec."""
    messages: list[dict[str, Any]]
    """The conversation in OpenAI chat format."""
    tool_results: list[dict[str, Any]]
    """Per tool call the world answered: call id, tool, arguments, status, result."""
    planted: tuple[str, ...]
    """Mistakes the offline agent planted (truth for the checks)."""
    checks: tuple[CheckView, ...]
    """Every conduct check."""
    reward: float | None
    """The grade's reward (None: ungraded)."""
    passed: bool | None
    """The grade's verdict."""
    reason: str | None
    """The grade's reason."""
    labeled_by: str | None
    """Who graded it (checks stamp plus the grader's)."""
    error: str | None
    """The error that ended it or kept it ungraded."""
    labels: tuple[LabelView, ...]
    """Labels attached later."""
    tokens: int
    """Tokens of all roles."""
    cost_usd: float
    """Their price."""
    model_calls: int
    """Model calls of all roles."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form (messages in OpenAI chat format)."""
        body = asdict(self)
        body.update(body.pop("summary"))
        return body


def _outcome(graded: bool, passed: bool | None) -> Outcome:
    if not graded:
        return "ungraded"
    return "pass" if passed else "fail"


def _situation(cell: str | None, purpose: str) -> str:
    return cell or purpose


def list_rollouts(cursor: duckdb.DuckDBPyConnection,
                  where: RolloutFilter) -> list[RolloutSummary]:
    """Stored rollouts matching ``where``: the newest run first, then plan order."""
    rows = cursor.execute(load_sql("generator", "list_rollouts.sql"),
                          [where.run_id, where.situation, where.outcome, where.mutation,
                           where.limit]).fetchall()
    return [RolloutSummary(
        rollout_id=r[0], run_id=r[1], index=int(r[2]), purpose=r[3],
        situation=_situation(r[4], r[3]), axes=orjson.loads(r[5]), mutation=r[6] or "",
        mutation_detail=r[7] or "", mutation_fired=r[8], outcome=_outcome(r[9], r[10]),
        failure_class=r[11], ended_by=r[12], turns=int(r[13] or 0)) for r in rows]


def _messages(stored: Sequence[Mapping[str, Any]]) -> tuple[Message, ...]:
    return tuple(Message(
        role=m["role"], content=m.get("content"),
        tool_calls=tuple(ToolCall(c["id"], c["name"], c["arguments"])
                         for c in m.get("tool_calls") or ()),
        tool_call_id=m.get("tool_call_id"), name=m.get("name")) for m in stored)


def chat_messages(stored: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Stored messages (the generator's shape) in OpenAI chat format, as ``show`` gives them."""
    return to_openai_messages(_messages(stored))


def find_rollout(cursor: duckdb.DuckDBPyConnection, rollout_id: str) -> RolloutDetail | None:
    """One stored rollout in full, or None."""
    r = cursor.execute(load_sql("generator", "show_rollout.sql"), [rollout_id]).fetchone()
    if r is None:
        return None
    lineage = orjson.loads(r[8])
    messages = _messages(orjson.loads(r[11]))
    mutation = lineage.get("mutation") or {}
    summary = RolloutSummary(
        rollout_id=r[0], run_id=r[1], index=int(r[2]), purpose=r[3],
        situation=_situation(r[4], r[3]), axes=orjson.loads(r[6]),
        mutation=mutation.get("kind", ""), mutation_detail=mutation.get("detail", ""),
        mutation_fired=r[29], outcome=_outcome(r[21], r[23]), failure_class=r[24],
        ended_by=r[13], turns=sum(1 for m in messages if m.role == "user"))
    labels = cursor.execute(load_sql("generator", "rollout_labels.sql"), [rollout_id]).fetchall()
    return RolloutDetail(
        summary=summary, cell_status=r[5],
        situation_id=(lineage.get("cell") or {}).get("situation_id"), seed=int(r[7]),
        source_conversations=tuple(lineage.get("source_conversations") or ()),
        mutation_plan=mutation, persona=orjson.loads(r[9]), goal=orjson.loads(r[10]),
        agent=r[15], messages=to_openai_messages(messages),
        tool_results=[{key: event.get(key) for key in
                       ("call_id", "tool", "arguments", "status", "result", "mutated")}
                      for event in orjson.loads(r[12])],
        planted=tuple(r[14] or ()),
        checks=tuple(CheckView(c["name"], bool(c["passed"]), c.get("reason") or "",
                               bool(c.get("credit"))) for c in orjson.loads(r[27])),
        reward=r[22], passed=r[23], reason=r[25], labeled_by=r[28], error=r[20],
        labels=tuple(LabelView(*label) for label in labels),
        tokens=int(r[16]) + int(r[17]), cost_usd=float(r[18]), model_calls=int(r[19]))


def _fired(value: bool | None) -> str:
    return "n/a" if value is None else "fired" if value else "NOT fired"


def render_list(rows: Sequence[RolloutSummary]) -> str:
    """The table ``tracemill rollouts`` prints."""
    header = ("ROLLOUT", "RUN", "PURPOSE", "SITUATION", "MUTATION", "FIRED", "OUTCOME",
              "FAILURE", "TURNS")
    table = [header] + [
        (r.rollout_id, r.run_id, r.purpose, r.situation, r.mutation, _fired(r.mutation_fired),
         r.outcome, r.failure_class or "-", str(r.turns)) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths,
                                                                        strict=False))
                     + "  " + row[-1] for row in table)


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in (text or "").splitlines() or [""])


def render_detail(d: RolloutDetail) -> str:
    """The text ``tracemill rollouts show`` prints."""
    s = d.summary
    verdict = s.outcome + (f" ({s.failure_class})" if s.failure_class else "")
    lines = [
        f"rollout {s.rollout_id}: {verdict}, ended by {s.ended_by} after {s.turns} turns",
        f"  run {s.run_id}, plan item {s.index}, purpose {s.purpose}, seed {d.seed}, "
        f"agent {d.agent}",
        f"  situation: {s.situation}" + (f" [{d.cell_status}]" if d.cell_status else "")
        + (f" (situation {d.situation_id})" if d.situation_id else ""),
        "    " + ", ".join(f"{axis}={value}" for axis, value in sorted(s.axes.items())),
        f"  mutation: {s.mutation}: {s.mutation_detail} ({_fired(s.mutation_fired)})",
        "  lineage: " + (", ".join(d.source_conversations) if d.source_conversations
                         else "no production conversation (exploration)"),
        f"  person: {d.persona.get('name')} ({d.persona.get('tone')}, "
        f"{d.persona.get('texture')}, patience {d.persona.get('patience')}); "
        f"wants: {d.goal.get('ask')}",
        f"  spend: {d.model_calls} model calls, {d.tokens} tokens, ${d.cost_usd:.4f}",
        "",
        "transcript",
    ]
    results = {t["call_id"]: t for t in d.tool_results}
    for m in d.messages:
        role = m["role"]
        if role == "tool":
            event = results.get(m.get("tool_call_id") or "", {})
            marked = ", the mutation" if event.get("mutated") else ""
            lines.append(f"  [tool {event.get('tool', '?')} -> {event.get('status', '?')}"
                         f"{marked}] {m.get('content') or ''}")
            continue
        if m.get("content"):
            lines.append(f"  [{role}]")
            lines.append(_indent(str(m["content"])))
        elif not m.get("tool_calls"):
            lines.append(f"  [{role}] (empty)")
        for call in m.get("tool_calls") or ():
            fn = call["function"]
            lines.append(f"  [{role} calls] {fn['name']}({fn['arguments']})  id={call['id']}")
    lines += ["", "grades"]
    for check in d.checks:
        mark = "credit" if check.credit else "pass" if check.passed else "FAIL"
        lines.append(f"  {mark:<6} {check.name}: {check.reason}")
    if d.reward is None:
        lines.append("  verdict: ungraded" + (f" ({d.error})" if d.error else ""))
    else:
        lines.append(f"  verdict: {'pass' if d.passed else 'fail'}, reward {d.reward:g}: "
                     f"{d.reason} (labeled by {d.labeled_by})")
    if d.planted:
        lines.append("  planted by the offline agent: " + ", ".join(d.planted))
    for label in d.labels:
        said = "pass" if label.passed else "fail" if label.passed is not None else \
            f"reward {label.reward}"
        lines.append(f"  {label.kind} label by {label.labeled_by} at {label.at}: {said}"
                     + (f" ({label.note})" if label.note else ""))
    return "\n".join(lines)


__all__ = ["CheckView", "LabelView", "RolloutDetail", "RolloutFilter", "RolloutSummary",
           "chat_messages", "find_rollout", "list_rollouts", "render_detail", "render_list"]
