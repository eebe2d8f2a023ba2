"""The run record: what a generation run did, spent, covered, and where it fell short.

It is printed at the end of ``tracemill generate`` (text or ``--json``) and stored with the
run. *Degraded* flags name everything that makes the data less than it looks:

==================  =========================================================================
flag                meaning
==================  =========================================================================
same_model          one model plays two roles (agent and judge, say): it grades itself
lost_rollouts       rollouts that crashed or could not be graded (listed in ``lost``)
fallback_writer     the writer model failed and asks were used without paraphrase
agent_errors        conversations ended by a backend error after its retries
dead_tools          tools offered that no rollout called successfully
budget_overrun      a provider reported more tokens than the call reserved (max_tokens ignored)
==================  =========================================================================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from generator.budget import BudgetSummary
from generator.covering import CoverageSummary
from generator.plan import Plan
from generator.records import Rollout

if TYPE_CHECKING:
    from generator.run import RunConfig


@dataclass(frozen=True)
class CellResult:
    """What the rollouts aimed at one cell showed."""

    cell: str
    """``axis=value & axis=value``."""
    status: str | None
    """The cell's status in the failure map."""
    rollouts: int
    """Rollouts aimed at it that finished."""
    graded: int
    """Of those, graded."""
    failed: int
    """Of those, failed."""


@dataclass(frozen=True)
class RunRecord:
    """The record of one generation run."""

    run_id: str
    """Identity of the run (rollout ids are ``run_id:index``)."""
    resumed: bool
    """True when this invocation continued an unfinished run."""
    agent: str
    """The agent spec."""
    roles: dict[str, str]
    """Spec of every role (agent, person, writer, judge, grader)."""
    seed: int
    """The run's seed."""
    budget: BudgetSummary
    """Budget kind, limit and spend."""
    stop_reason: str
    """budget, time_limit, saturated, agent_failing, plan_done or interrupted."""
    planned: int
    """Rollouts in the plan."""
    written: int
    """Rollouts stored by this invocation."""
    previously_stored: int
    """Rollouts an earlier invocation of the same run had stored."""
    graded: int
    """Rollouts graded by this invocation."""
    passed: int
    """Of those, passed."""
    failed: int
    """Of those, failed."""
    ended_by: dict[str, int]
    """How conversations ended."""
    purposes: dict[str, int]
    """Rollouts per purpose (target, explore, guard)."""
    failure_classes: dict[str, int]
    """Failed rollouts per failure class."""
    planted: dict[str, int]
    """Mistakes the offline agent planted (truth for the conduct checks)."""
    cells: list[CellResult]
    """Per target / guard cell: rollouts, graded, failed."""
    coverage: CoverageSummary
    """Pairs of axis values in the grid (``planned``: all pairs of the grid) and those the
    finished rollouts show (``covered``, ``fraction``)."""
    pairs_planned: int
    """Pairs of the grid the plan's rollouts were built to show."""
    model_calls: int
    """Model calls of all roles."""
    retries: int
    """Agent model calls that were retried before they succeeded (429, 5xx, timeouts)."""
    input_tokens: int
    """Tokens in (all roles)."""
    output_tokens: int
    """Tokens out (all roles)."""
    cost_usd: float
    """Money spent (all roles)."""
    duration_s: float
    """Wall time of this invocation."""
    rollouts_per_s: float
    """Finished rollouts per second of wall time."""
    degraded: list[str]
    """Degraded flags (see the module table); empty for a clean run."""
    warnings: list[str]
    """Plain sentences: what was sampled rather than covered, defaults that were used, ..."""
    lost: list[str] = field(default_factory=list)
    """Rollouts lost and why."""
    last_errors: dict[str, str] = field(default_factory=dict)
    """The last error per role (agent, person, writer, grader)."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON-able form."""
        return asdict(self)


def build_record(
    *,
    run_id: str,
    resumed: bool,
    config: RunConfig,
    plan: Plan,
    ledger: BudgetSummary,
    stop_reason: str,
    finished: Sequence[Rollout],
    previously_stored: int,
    coverage: CoverageSummary,
    same_model: Sequence[tuple[str, str, str]],
    lost: Sequence[str],
    fallbacks: Sequence[str],
    errors: dict[str, str],
    duration_s: float,
    default_system_prompt: bool,
) -> RunRecord:
    """Summarise a run from what it finished."""
    graded = [r for r in finished if r.grade is not None]
    passed = sum(1 for r in graded if r.grade is not None and r.grade.passed)
    ended_by = Counter(r.transcript.ended_by for r in finished)
    planted = Counter(p for r in finished for p in r.transcript.planted)
    classes = Counter(r.grade.failure_class or "unspecified" for r in graded
                      if r.grade is not None and not r.grade.passed)
    cells: dict[str, list[int]] = {}
    status: dict[str, str | None] = {}
    for r in finished:
        if r.plan.cell is None:
            continue
        label = r.plan.cell.label()
        counts = cells.setdefault(label, [0, 0, 0])
        status[label] = r.plan.cell_status
        counts[0] += 1
        if r.grade is not None:
            counts[1] += 1
            counts[2] += not r.grade.passed
    degraded: list[str] = []
    warnings = list(plan.notes)
    for first, second, model in same_model:
        degraded.append("same_model")
        warnings.append(f"the {first} and the {second} are both {model}: a model grading or "
                        f"playing against itself flatters itself; give the {second} another "
                        "model")
    if lost:
        degraded.append("lost_rollouts")
        warnings.append(f"{len(lost)} rollouts were lost (see lost)")
    if fallbacks:
        degraded.append("fallback_writer")
        warnings.append(f"{len(fallbacks)} asks were not paraphrased because the writer "
                        "failed (see last_errors.writer)")
    if ended_by.get("agent_error"):
        degraded.append("agent_errors")
        warnings.append(f"{ended_by['agent_error']} conversations ended on an agent backend "
                        "error after retries (see last_errors.agent); they are stored "
                        "ungraded")
    called_ok = {e.tool for r in finished for e in r.transcript.events if e.status == "ok"}
    dead = [t.name for t in plan.tools if t.name not in called_ok]
    if finished and dead:
        degraded.append("dead_tools")
        warnings.append("tools no rollout called successfully: " + ", ".join(sorted(dead)))
    if ledger.overruns:
        degraded.append("budget_overrun")
        warnings.append(f"{ledger.overruns} model calls used more tokens than reserved "
                        "(the provider ignored max_tokens)")
    if default_system_prompt and config.agent.split(":", 1)[0] not in ("offline", "python"):
        warnings.append("the agent ran with tracemill's default system prompt; pass your "
                        "agent's own with --system-prompt FILE")
    if config.grader is None:
        warnings.append("graded by conduct checks only; add --grader python:mod:fn or "
                        "--grader judge --judge MODEL for the task's own criteria")
    roles = {"agent": config.agent, "person": config.person}
    for role, spec in (("writer", config.writer), ("judge", config.judge),
                       ("grader", config.grader)):
        if spec:
            roles[role] = spec
    return RunRecord(
        run_id=run_id, resumed=resumed, agent=config.agent, roles=roles, seed=config.seed,
        budget=ledger, stop_reason=stop_reason, planned=len(plan.items),
        written=len(finished), previously_stored=previously_stored, graded=len(graded),
        passed=passed, failed=len(graded) - passed, ended_by=dict(ended_by),
        purposes=dict(Counter(r.plan.purpose for r in finished)),
        failure_classes=dict(classes), planted=dict(planted),
        cells=[CellResult(label, status[label], *counts)
               for label, counts in sorted(cells.items(), key=lambda kv: -kv[1][0])],
        coverage=coverage, pairs_planned=plan.pairs_planned,
        model_calls=sum(r.transcript.model_calls for r in finished),
        retries=sum(r.transcript.retries for r in finished),
        input_tokens=sum(r.transcript.usage.input_tokens for r in finished),
        output_tokens=sum(r.transcript.usage.output_tokens for r in finished),
        cost_usd=round(sum(r.transcript.cost_usd for r in finished), 6),
        duration_s=round(duration_s, 3),
        rollouts_per_s=round(len(finished) / duration_s, 1) if duration_s > 0 else 0.0,
        degraded=sorted(set(degraded)), warnings=warnings, lost=list(lost),
        last_errors=dict(errors),
    )


def render_record(record: RunRecord) -> str:
    """The record as the few lines ``tracemill generate`` prints."""
    b = record.budget
    lines = [
        f"run {record.run_id}{' (resumed)' if record.resumed else ''}: "
        f"stopped by {record.stop_reason}",
        f"  rollouts: {record.written} written this time"
        + (f" (+{record.previously_stored} earlier)" if record.previously_stored else "")
        + f" of {record.planned} planned; {record.graded} graded: {record.passed} passed, "
          f"{record.failed} failed",
        f"  budget: {b.spent:g} of {b.limit:g} {b.kind} spent; {record.model_calls} model "
        f"calls ({record.retries} retried), "
        f"{record.input_tokens + record.output_tokens} tokens, "
        f"${record.cost_usd:.4f}",
        f"  coverage: {record.coverage.covered} of the grid's {record.coverage.planned} "
        f"pairs shown ({record.coverage.fraction:.0%}); the plan aimed at "
        f"{record.pairs_planned}",
        f"  speed: {record.rollouts_per_s:g} rollouts/s over {record.duration_s:g} s",
        "  ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(record.ended_by.items())),
    ]
    if record.failure_classes:
        lines.append("  failures: " + ", ".join(
            f"{k} {v}" for k, v in Counter(record.failure_classes).most_common()))
    for cell in record.cells[:10]:
        lines.append(f"  aimed at {cell.cell} [{cell.status}]: {cell.rollouts} rollouts, "
                     f"{cell.failed} of {cell.graded} graded failed")
    lines.append("  degraded: " + (", ".join(record.degraded) if record.degraded else "no"))
    lines.extend(f"  warning: {w}" for w in record.warnings)
    lines.extend(f"  lost: {item}" for item in record.lost[:10])
    lines.extend(f"  last {role} error: {text}" for role, text in record.last_errors.items())
    return "\n".join(lines)
