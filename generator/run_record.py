"""The run record: what a generation run did, spent, covered, and where it fell short.

It is printed at the end of ``tracemill generate`` (text or ``--json``) and stored with the
run. *Degraded* flags name everything that makes the data less than it looks:

==================  =========================================================================
flag                meaning
==================  =========================================================================
same_model          one model plays two roles (agent and judge, say): it grades itself
lost_rollouts       rollouts that crashed (a bug; listed in ``lost``), not stored
grader_errors       rollouts stored ungraded because the grader failed
fallback_writer     the writer model failed and asks were used without paraphrase
agent_errors        conversations ended by a backend error after its retries
dead_tools          tools offered that no rollout called successfully
budget_overrun      a provider reported more tokens than the call reserved (max_tokens ignored)
unstored_rollouts   rollouts finished but not found in the store afterwards
==================  =========================================================================

Rollouts are counted once each, from what the store holds of the run: ``written`` is what
this invocation added, ``previously_stored`` what earlier invocations of the same run had
stored when it began (never another run's rollouts). Rollouts whose planned mutation did
not fire (the agent never reached the mutated record or the faulty call) are counted in
``mutations`` and named in a warning, and left out of ``cells`` and ``coverage``: they do
not show their situation. They are not a degraded flag: some always miss, and the share
that fired is the figure to watch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from generator.backends._spec import redact_secrets
from generator.budget import BudgetSummary
from generator.covering import CoverageSummary
from generator.plan import Plan
from generator.rollout_store import StoredRollout
from generator.run_config import RunConfig

SHOWN_IDS = 50
"""Most rollout ids of one kind (failing, mutation not fired) a record lists."""


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
    unfired: int = 0
    """Rollouts aimed at it whose mutation did not fire: they do not show the cell and
    are not in the counts above."""


@dataclass(frozen=True)
class MutationCounts:
    """Of one purpose's rollouts, whether their planned mutation took effect."""

    fired: int = 0
    """The world shows the mutation took effect."""
    not_fired: int = 0
    """It did not (the agent never reached the mutated record or faulty call): these do
    not show their situation."""
    not_applicable: int = 0
    """Nothing to take effect (reperson, paraphrase, explore without faults), or a world
    that cannot tell (``--world``)."""


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
    """Rollouts earlier invocations of the same run had stored (the figures below cover
    all of the run's rollouts)."""
    graded: int
    """Rollouts graded."""
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
    """Money spent (all roles) by the stored rollouts; ``budget`` also counts calls of
    rollouts that were cut off or lost."""
    faults_scheduled: int
    """Tool faults the plan scheduled in the stored rollouts."""
    faults_fired: int
    """Of those, the ones the agent ran into."""
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
    cut_by_budget: int = 0
    """Rollouts the budget ran out on before the agent said anything (not stored)."""
    last_errors: dict[str, str] = field(default_factory=dict)
    """The last error per role (agent, person, writer, grader)."""
    world: str = "simulated"
    """What answered the tool calls (``--world``)."""
    mutations: dict[str, MutationCounts] = field(default_factory=dict)
    """Per purpose: rollouts whose mutation fired, did not fire, or had none to fire."""
    failing_rollouts: list[str] = field(default_factory=list)
    """Ids of failed rollouts (at most :data:`SHOWN_IDS`; ``tracemill rollouts --run ID
    --outcome fail`` lists them all)."""
    unfired_rollouts: list[str] = field(default_factory=list)
    """Ids of rollouts whose mutation did not fire (at most :data:`SHOWN_IDS`)."""

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
    finished: int,
    earlier: int,
    stored: Sequence[StoredRollout],
    coverage: CoverageSummary,
    same_model: Sequence[tuple[str, str, str]],
    lost: Sequence[str],
    fallbacks: Sequence[str],
    errors: dict[str, str],
    duration_s: float,
    default_system_prompt: bool,
    cut_by_budget: int = 0,
    world_note: str | None = None,
) -> RunRecord:
    """Summarise a run from every rollout it stored, over all its invocations.

    ``finished`` rollouts ended in this invocation, which began with ``earlier`` of the
    run's rollouts already stored; what it wrote is read from the store, not assumed."""
    written = len(stored) - earlier
    graded = [r for r in stored if r.graded]
    passed = sum(1 for r in graded if r.passed)
    ended_by = Counter(r.ended_by for r in stored)
    planted = Counter(p for r in stored for p in r.planted)
    classes = Counter(r.failure_class or "unspecified" for r in graded if not r.passed)
    cells: dict[str, list[int]] = {}
    status: dict[str, str | None] = {}
    for r in stored:
        if r.cell is None:
            continue
        counts = cells.setdefault(r.cell, [0, 0, 0, 0])
        status[r.cell] = r.cell_status
        if r.mutation_fired is False:
            counts[3] += 1
            continue
        counts[0] += 1
        if r.graded:
            counts[1] += 1
            counts[2] += not r.passed
    grader_errors = sum(1 for r in stored if not r.graded and r.ended_by not in
                        ("agent_error", "budget"))
    scheduled = sum(r.faults_scheduled for r in stored)
    fired = sum(r.faults_fired for r in stored)
    degraded: list[str] = []
    warnings = list(plan.notes)
    mutations, unfired = _mutations(stored)
    if unfired:
        warnings.append(
            f"{len(unfired)} rollouts' planned mutation did not fire (the agent never "
            "reached the mutated record or the faulty call): they are not counted as showing "
            "their situation (cells and coverage leave them out); they stay stored, marked "
            f"mutation_fired=false (`tracemill rollouts --run {run_id} --mutation not_fired`)")
    if world_note:
        warnings.append(world_note)
    if finished != written:
        degraded.append("unstored_rollouts")
        warnings.append(f"{finished} rollouts finished in this invocation but {written} are "
                        "in the store; please report it")
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
    if grader_errors:
        degraded.append("grader_errors")
        warnings.append(f"{grader_errors} rollouts could not be graded: the grader failed "
                        "(see last_errors.grader); they are stored ungraded")
    if scheduled > fired:
        warnings.append(f"{scheduled - fired} of {scheduled} scheduled tool faults never "
                        "fired (the agent did not call the tool, or not that often); those "
                        "rollouts did not show their tool condition")
    called_ok = {tool for r in stored for tool in r.tools_ok}
    dead = [t.name for t in plan.tools if t.name not in called_ok]
    if stored and dead:
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
    roles = {"agent": redact_secrets(config.agent), "person": redact_secrets(config.person)}
    for role, spec in (("writer", config.writer), ("judge", config.judge),
                       ("grader", config.grader)):
        if spec:
            roles[role] = redact_secrets(spec)
    return RunRecord(
        run_id=run_id, resumed=resumed, agent=roles["agent"], roles=roles, seed=config.seed,
        budget=ledger, stop_reason=stop_reason, planned=len(plan.items),
        written=written, previously_stored=earlier, graded=len(graded),
        passed=passed, failed=len(graded) - passed, ended_by=dict(ended_by),
        purposes=dict(Counter(r.purpose for r in stored)),
        failure_classes=dict(classes), planted=dict(planted),
        cells=[CellResult(label, status[label], *counts)
               for label, counts in sorted(cells.items(), key=lambda kv: -kv[1][0])],
        coverage=coverage, pairs_planned=plan.pairs_planned,
        model_calls=sum(r.model_calls for r in stored),
        retries=sum(r.retries for r in stored),
        input_tokens=sum(r.input_tokens for r in stored),
        output_tokens=sum(r.output_tokens for r in stored),
        cost_usd=round(sum(r.cost_usd for r in stored), 6),
        faults_scheduled=scheduled, faults_fired=fired,
        duration_s=round(duration_s, 3),
        rollouts_per_s=round(written / duration_s, 1) if duration_s > 0 else 0.0,
        degraded=sorted(set(degraded)), warnings=warnings, lost=list(lost),
        cut_by_budget=cut_by_budget,
        last_errors=dict(errors), world=redact_secrets(config.world),
        mutations=mutations,
        failing_rollouts=[r.rollout_id for r in graded if not r.passed][:SHOWN_IDS],
        unfired_rollouts=unfired[:SHOWN_IDS],
    )


def _mutations(stored: Sequence[StoredRollout]) -> tuple[dict[str, MutationCounts], list[str]]:
    """Per purpose, whose mutation fired; and the ids of those whose did not."""
    counts: dict[str, Counter[str]] = {}
    unfired = []
    for r in stored:
        key = ("not_applicable" if r.mutation_fired is None
               else "fired" if r.mutation_fired else "not_fired")
        counts.setdefault(r.purpose, Counter())[key] += 1
        if r.mutation_fired is False:
            unfired.append(r.rollout_id)
    return ({purpose: MutationCounts(c["fired"], c["not_fired"], c["not_applicable"])
             for purpose, c in sorted(counts.items())}, unfired)


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
    ]
    if record.ended_by:
        lines.append("  ended by: " + ", ".join(
            f"{k} {v}" for k, v in sorted(record.ended_by.items())))
    if record.cut_by_budget:
        lines.append(f"  cut by the budget before the agent spoke (not stored): "
                     f"{record.cut_by_budget}")
    if record.failure_classes:
        lines.append("  failures: " + ", ".join(
            f"{k} {v}" for k, v in Counter(record.failure_classes).most_common()))
    for purpose, m in record.mutations.items():
        lines.append(f"  mutation ({purpose}): fired in {m.fired}, did not fire in "
                     f"{m.not_fired}, none to fire in {m.not_applicable}")
    for cell in record.cells[:10]:
        unfired = f" ({cell.unfired} more whose mutation did not fire)" if cell.unfired else ""
        lines.append(f"  aimed at {cell.cell} [{cell.status}]: {cell.rollouts} rollouts, "
                     f"{cell.failed} of {cell.graded} graded failed{unfired}")
    if record.world != "simulated":
        lines.append(f"  world: {record.world}")
    if record.failing_rollouts:
        shown = record.failing_rollouts[:5]
        more = record.failed - len(shown)
        lines.append("  failing rollouts: " + ", ".join(shown)
                     + (f" and {more} more" if more > 0 else ""))
    outcome = " --outcome fail" if record.failing_rollouts else ""
    lines.append(f"  read them: tracemill rollouts --run {record.run_id}{outcome}; "
                 "tracemill rollouts show ROLLOUT_ID")
    lines.append("  degraded: " + (", ".join(record.degraded) if record.degraded else "no"))
    lines.extend(f"  warning: {w}" for w in record.warnings)
    lines.extend(f"  lost: {item}" for item in record.lost[:10])
    lines.extend(f"  last {role} error: {text}" for role, text in record.last_errors.items())
    return "\n".join(lines)
