"""``tracemill eval``: run the held-out set against one agent, or two (before / after).

Each held-out rollout (graded, its mutation not unfired) is a *task*: its plan item (the
situation, persona, goal, world state and faults) is read back from its run's stored plan
and simulated again ``k`` times (sample ``s`` uses the item's seed plus ``s``, so the
world and a seeded agent vary between samples) against the agent, with the run's system
prompt and tools and the template person. The tool calls go to the world the run used
(tracemill's simulation, or the team's own ``--world python:...`` / ``http...``) and each
sample is graded the way the run graded: the conduct checks, then its grader (``python:``
or ``judge`` with its judge model) when every check passed, at its pass threshold.
:class:`EvalSettings` overrides any of these; tasks whose runs answered or graded
differently are refused unless an override makes them one. An agent or grader error
counts as a failed sample and is reported. Figures and verdicts come from
:mod:`generator.eval_stats`; two agents graded or answered differently are not comparable.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import orjson

from generator.backends import BackendOptions, build_backend
from generator.budget import Budget, BudgetLedger
from generator.checks import CHECKS_STAMP, conduct_checks
from generator.errors import GeneratorError
from generator.eval_stats import Comparison, Estimate, TaskResult, compare, metric
from generator.graders import Grader, build_grader, combine
from generator.plan_codec import plan_from_json
from generator.prices import PriceTable
from generator.records import PlannedRollout, ToolSpec
from generator.simulate import simulate
from generator.split import SplitError, require_split_table
from generator.template_person import TemplatePerson
from generator.worlds import WorldSource, build_worlds
from tracemill.store import load_sql

SAMPLE_SEED_STEP = 1_000_003
"""Sample s of a task runs with the item's seed + s * this."""


@dataclass(frozen=True)
class EvalSettings:
    """How the samples are answered and graded: each field None takes the task's run's."""

    world: str | None = None
    """``simulated``, ``python:pkg.mod:fn`` or an ``http(s)://`` endpoint."""
    grader: str | None = None
    """``python:pkg.mod:fn``, ``judge``, or ``checks`` (conduct checks only)."""
    judge: str | None = None
    """The judge model for ``grader == "judge"``."""
    rubric: str | None = None
    """The judge's rubric text (needed when the run used its own: only its digest is
    stored)."""
    pass_threshold: float | None = None
    """Grader rewards at or above it pass."""


@dataclass(frozen=True)
class Grading:
    """One resolved way of answering and grading samples."""

    world: str
    """The world spec."""
    grader: str | None
    """The grader spec (None: conduct checks only)."""
    judge: str | None
    """The judge model spec (only with ``grader == "judge"``)."""
    rubric: str | None
    """The judge's rubric (None: the default one)."""
    pass_threshold: float
    """Grader rewards at or above it pass."""


@dataclass(frozen=True)
class EvalTask:
    """One held-out task, rebuilt from its run's stored plan."""

    task_id: str
    """The held-out rollout it comes from."""
    situation: str
    """Its situation's label."""
    item: PlannedRollout
    """The plan item to simulate."""
    tools: tuple[ToolSpec, ...]
    """The tools its run offered."""
    system_prompt: str
    """The system prompt its run gave the agent."""
    run_id: str = ""
    """The run it comes from."""


@dataclass(frozen=True)
class AgentEval:
    """One agent's results on the held-out tasks."""

    agent: str
    """The agent's spec."""
    k: int
    """Samples per task."""
    tasks: tuple[TaskResult, ...]
    """Per task: samples and passes."""
    errors: int
    """Samples that ended on an agent error (counted as failed)."""
    stamp: str
    """Who graded: the conduct checks' stamp, and the grader's when there is one."""
    world: str = "simulated"
    """What answered the tool calls."""

    @property
    def comparable_as(self) -> str:
        """What must be equal for two evaluations to be compared: grader and world."""
        return f"{self.stamp}; world {self.world}"

    def figures(self, seed: int = 0) -> dict[str, Estimate]:
        """pass@1, pass@k and pass^k over every task."""
        return {name: metric(self.tasks, self.k, name, seed)
                for name in ("pass@1", "pass@k", "pass^k")}

    def by(self, key: str, seed: int = 0) -> dict[str, Estimate]:
        """pass@1 per situation or per tool."""
        groups: dict[str, list[TaskResult]] = defaultdict(list)
        for task in self.tasks:
            groups[task.situation if key == "situation" else task.tool or "-"].append(task)
        return {name: metric(group, self.k, "pass@1", seed)
                for name, group in sorted(groups.items())}


def load_tasks(cursor: duckdb.DuckDBPyConnection) -> list[EvalTask]:
    """The held-out tasks, or a :class:`SplitError` naming what to run first."""
    require_split_table(cursor)
    rows = cursor.execute(load_sql("generator", "eval_tasks.sql")).fetchall()
    if not rows:
        (split,) = cursor.execute("SELECT count(*) FROM splits").fetchone() or (0,)
        raise SplitError("no held-out tasks: run `tracemill split` first" if not split else
                         "the held-out side holds no graded rollout whose mutation fired; "
                         "generate more (`tracemill generate`) and split again")
    plans: dict[str, Any] = {}
    tasks: list[EvalTask] = []
    for rollout_id, run_id, idx, label, plan_body, messages in rows:
        if run_id not in plans:
            plans[run_id] = plan_from_json(plan_body)
        plan = plans[run_id]
        item = next(i for i in plan.items if i.index == idx)
        first = (orjson.loads(messages) or [{}])[0]
        tasks.append(EvalTask(rollout_id, label, item, tuple(plan.tools),
                              str(first.get("content") or "") if first.get("role") == "system"
                              else "", run_id))
    return tasks


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:12]


def resolve_grading(cursor: duckdb.DuckDBPyConnection, tasks: Sequence[EvalTask],
                    settings: EvalSettings) -> Grading:
    """The one way every task is answered and graded: its run's, overridden by
    ``settings``; a :class:`SplitError` naming the flags when the runs disagree or a run's
    settings cannot be rebuilt (a custom rubric, a spec whose secrets were masked)."""
    runs = {run_id: row for run_id, *row in cursor.execute(
        load_sql("generator", "eval_runs.sql")).fetchall()}
    found: dict[Grading, list[str]] = defaultdict(list)
    for run_id in sorted({task.run_id for task in tasks}):
        world, grader, judge, rubric_digest, threshold = runs[run_id]
        grader = settings.grader if settings.grader is not None else grader
        grader = None if grader == "checks" else grader
        judge = (settings.judge or judge) if grader == "judge" else None
        if grader == "judge" and rubric_digest is not None and settings.rubric is None:
            raise SplitError(f"run {run_id} was graded by a judge with its own rubric "
                             f"({rubric_digest}); pass --rubric FILE with the same text")
        if (grader == "judge" and settings.rubric is not None and rubric_digest is not None
                and _digest(settings.rubric) != rubric_digest):
            raise SplitError(f"--rubric is not the rubric run {run_id} was graded with "
                             f"({_digest(settings.rubric)} vs {rubric_digest})")
        grading = Grading(world=settings.world or world, grader=grader, judge=judge,
                          rubric=settings.rubric if grader == "judge" else None,
                          pass_threshold=(settings.pass_threshold
                                          if settings.pass_threshold is not None
                                          else float(threshold)))
        found[grading].append(run_id)
    if len(found) > 1:
        ways = "; ".join(f"runs {', '.join(ids)}: world {g.world}, grader "
                         f"{g.grader or 'checks'}" + (f", judge {g.judge}" if g.judge else "")
                         for g, ids in found.items())
        raise SplitError("the held-out tasks come from runs answered or graded differently "
                         f"({ways}); pass --world, --grader and --judge to evaluate them all "
                         "one way")
    (grading,) = found
    for name, spec in (("--world", grading.world), ("--judge", grading.judge)):
        if spec and "***" in spec:
            raise SplitError(f"the run's {name.removeprefix('--')} {spec!r} was stored with "
                             f"its secrets masked; pass {name} with the full spec")
    if grading.grader == "judge" and not grading.judge:
        raise SplitError("--grader judge needs a judge model: pass --judge SPEC")
    return grading


@dataclass
class _Judging:
    """What one agent's samples are answered and graded by."""

    worlds: WorldSource
    grader: Grader | None
    grading: Grading


async def _sample(task: EvalTask, sample: int, agent: Any, ledger: BudgetLedger,
                  prices: PriceTable, gate: asyncio.Semaphore,
                  judging: _Judging) -> tuple[bool, bool]:
    item = replace(task.item, seed=task.item.seed + sample * SAMPLE_SEED_STEP)
    worlds = judging.worlds
    async with gate:
        # each sample is a rollout of its own: a team's world keeps them apart by run id
        world = worlds.for_rollout(item, task.tools, f"eval-{sample}-{task.task_id}")
        transcript = await simulate(item, tools=task.tools, agent=agent,
                                    person=TemplatePerson(), ledger=ledger, prices=prices,
                                    system_prompt=task.system_prompt, world=world,
                                    blocking_world=worlds.blocking)
        if transcript.ended_by == "agent_error":
            return False, True
        checks = conduct_checks(item, transcript, task.tools,
                                harness_markers=(item.persona.aside(),))
        verdict = None
        if judging.grader is not None and all(check.passed for check in checks):
            try:
                verdict = await judging.grader.grade(item, transcript)
            except GeneratorError:
                return False, True
    return combine(checks, verdict, pass_threshold=judging.grading.pass_threshold).passed, False


async def evaluate(tasks: Sequence[EvalTask], agent_spec: str, k: int,
                   credentials: Mapping[str, str], concurrency: int = 16,
                   grading: Grading | None = None) -> AgentEval:
    """Run every task k times against one agent, answered and graded as ``grading`` says
    (default: the simulated world and the conduct checks)."""
    grading = grading or Grading("simulated", None, None, None, 0.5)
    options = BackendOptions()
    ledger = BudgetLedger(Budget.parse(str(len(tasks) * k * 2 + 10)))
    prices = PriceTable.default()
    gate = asyncio.Semaphore(concurrency)
    owned: list[Any] = []
    worlds = build_worlds(grading.world)
    try:
        agent = build_backend(agent_spec, role="agent", credentials=credentials,
                              options=options)
        owned.append(agent)
        judge = None
        if grading.grader == "judge" and grading.judge:
            judge = build_backend(grading.judge, role="judge", credentials=credentials,
                                  options=options)
            owned.append(judge)
        grader = build_grader(grading.grader, judge_backend=judge, rubric=grading.rubric)
        judging = _Judging(worlds, grader, grading)
        outcomes = await asyncio.gather(*(
            _sample(task, s, agent, ledger, prices, gate, judging)
            for task in tasks for s in range(k)))
    finally:
        try:
            for backend in owned:
                await backend.aclose()
        finally:
            worlds.close()
    results = []
    for i, task in enumerate(tasks):
        mine = outcomes[i * k:(i + 1) * k]
        results.append(TaskResult(task.task_id, task.situation, task.item.goal.tool or "",
                                  k, sum(1 for passed, _ in mine if passed)))
    stamp = CHECKS_STAMP if grader is None else f"{CHECKS_STAMP} + {grader.stamp}"
    return AgentEval(agent_spec, k, tuple(results), sum(1 for _, e in outcomes if e),
                     stamp, worlds.spec)


def render_eval(evals: Sequence[AgentEval], comparison: Comparison | None) -> str:
    """The text ``tracemill eval`` prints: every figure with its interval and n."""
    lines: list[str] = []
    for result in evals:
        lines.append(f"agent {result.agent}: {len(result.tasks)} held-out tasks x "
                     f"k={result.k} samples, graded by {result.stamp}, world {result.world}"
                     + (f"; {result.errors} samples ended on an agent or grader error "
                        "(failed)" if result.errors else ""))
        for name, estimate in result.figures().items():
            lines.append(f"  {name.replace('k', str(result.k)) if name != 'pass@1' else name:<8}"
                         f" {estimate.render()}")
        for key in ("tool", "situation"):
            lines.append(f"  pass@1 per {key}:")
            lines += [f"    {estimate.render()}  {name}"
                      for name, estimate in result.by(key).items()]
    if comparison is not None:
        d = comparison.difference
        lines.append(f"after - before (pass@1, paired per task): {comparison.verdict.upper()}"
                     f" ({comparison.reason})")
        if comparison.p_value is not None:
            lines.append(f"  difference {d.render()}, permutation p = "
                         f"{comparison.p_value:.4f}")
    return "\n".join(lines)


def eval_json(evals: Sequence[AgentEval], comparison: Comparison | None) -> dict[str, Any]:
    """What ``tracemill eval --json`` prints."""
    def plain(e: Estimate) -> dict[str, float | int]:
        return {"value": e.value, "low": e.low, "high": e.high, "n": e.n}

    return {
        "agents": [{"agent": r.agent, "k": r.k, "errors": r.errors, "graded_by": r.stamp,
                    "world": r.world,
                    **{name: plain(e) for name, e in r.figures().items()},
                    "per_tool": {n: plain(e) for n, e in r.by("tool").items()},
                    "per_situation": {n: plain(e) for n, e in r.by("situation").items()},
                    "tasks": [{"task_id": t.task_id, "situation": t.situation,
                               "tool": t.tool, "n": t.n, "c": t.c} for t in r.tasks]}
                   for r in evals],
        "comparison": None if comparison is None else {
            "verdict": comparison.verdict, "reason": comparison.reason,
            "difference": plain(comparison.difference), "p_value": comparison.p_value},
    }


def load_baseline(report: Any, source: str) -> AgentEval:
    """The last agent of an earlier ``tracemill eval --json`` report, to compare with;
    a :class:`SplitError` naming ``source`` when it is not one."""
    try:
        entry = report["agents"][-1]
        tasks = tuple(TaskResult(str(t["task_id"]), str(t["situation"]), str(t["tool"]),
                                 int(t["n"]), int(t["c"])) for t in entry["tasks"])
        return AgentEval(str(entry["agent"]), int(entry["k"]), tasks, int(entry["errors"]),
                         str(entry["graded_by"]), str(entry.get("world", "simulated")))
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise SplitError(f"--baseline {source}: not a `tracemill eval --json` report "
                         f"({type(exc).__name__}: {exc}); save one with "
                         "`tracemill eval ... --json > FILE`") from None


def run_eval(cursor: duckdb.DuckDBPyConnection, agents: Sequence[str], k: int,
             credentials: Mapping[str, str], settings: EvalSettings | None = None,
             baseline: AgentEval | None = None,
             ) -> tuple[list[AgentEval], Comparison | None]:
    """Evaluate one agent, or two and compare the second (after) with the first (before),
    each answered and graded the way the tasks' runs were (or as ``settings`` says). A
    ``baseline`` (an earlier evaluation) stands in for the first: it is not comparable
    when it was graded or answered otherwise, or on other tasks."""
    if k < 1:
        raise SplitError(f"--k must be 1 or more (got {k})")
    tasks = load_tasks(cursor)
    grading = resolve_grading(cursor, tasks, settings or EvalSettings())
    evals = [] if baseline is None else [baseline]
    evals += [asyncio.run(evaluate(tasks, spec, k, credentials, grading=grading))
              for spec in agents]
    comparison = (compare(evals[0].tasks, evals[1].tasks,
                          stamps=(evals[0].comparable_as, evals[1].comparable_as))
                  if len(evals) == 2 else None)
    return evals, comparison


__all__ = ["AgentEval", "EvalSettings", "EvalTask", "Grading", "eval_json", "evaluate",
           "load_baseline", "load_tasks", "render_eval", "resolve_grading", "run_eval"]
