"""``tracemill eval``: run the held-out set against one agent, or two (before / after).

Each held-out rollout (graded, its mutation not unfired) is a *task*: its plan item (the
situation, persona, goal, world state and faults) is read back from its run's stored plan
and simulated again ``k`` times (sample ``s`` uses the item's seed plus ``s``, so the
world and a seeded agent vary between samples) against the agent, with the run's system
prompt and tools, the template person and the simulated world, and graded by the conduct
checks. An agent error counts as a failed sample and is reported. Figures and verdicts
come from :mod:`generator.eval_stats`.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import orjson

from generator.backends import BackendOptions, build_backend
from generator.budget import Budget, BudgetLedger
from generator.checks import CHECKS_STAMP, conduct_checks
from generator.eval_stats import Comparison, Estimate, TaskResult, compare, metric
from generator.graders import combine
from generator.plan_codec import plan_from_json
from generator.prices import PriceTable
from generator.records import PlannedRollout, ToolSpec
from generator.simulate import simulate
from generator.split import SplitError, require_split_table
from generator.template_person import TemplatePerson
from tracemill.store import load_sql

SAMPLE_SEED_STEP = 1_000_003
"""Sample s of a task runs with the item's seed + s * this."""


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
    """Who graded (the conduct checks' stamp)."""

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
                              else ""))
    return tasks


async def _sample(task: EvalTask, sample: int, agent: Any, ledger: BudgetLedger,
                  prices: PriceTable, gate: asyncio.Semaphore) -> tuple[bool, bool]:
    item = replace(task.item, seed=task.item.seed + sample * SAMPLE_SEED_STEP)
    async with gate:
        transcript = await simulate(item, tools=task.tools, agent=agent,
                                    person=TemplatePerson(), ledger=ledger, prices=prices,
                                    system_prompt=task.system_prompt)
    if transcript.ended_by == "agent_error":
        return False, True
    checks = conduct_checks(item, transcript, task.tools,
                            harness_markers=(item.persona.aside(),))
    return combine(checks, None, pass_threshold=0.5).passed, False


async def evaluate(tasks: Sequence[EvalTask], agent_spec: str, k: int,
                   credentials: Mapping[str, str], concurrency: int = 16) -> AgentEval:
    """Run every task k times against one agent."""
    options = BackendOptions()
    agent = build_backend(agent_spec, role="agent", credentials=credentials, options=options)
    ledger = BudgetLedger(Budget.parse(str(len(tasks) * k * 2 + 10)))
    prices = PriceTable.default()
    gate = asyncio.Semaphore(concurrency)
    try:
        outcomes = await asyncio.gather(*(
            _sample(task, s, agent, ledger, prices, gate) for task in tasks for s in range(k)))
    finally:
        await agent.aclose()
    results = []
    for i, task in enumerate(tasks):
        mine = outcomes[i * k:(i + 1) * k]
        results.append(TaskResult(task.task_id, task.situation, task.item.goal.tool or "",
                                  k, sum(1 for passed, _ in mine if passed)))
    return AgentEval(agent_spec, k, tuple(results), sum(1 for _, e in outcomes if e),
                     CHECKS_STAMP)


def render_eval(evals: Sequence[AgentEval], comparison: Comparison | None) -> str:
    """The text ``tracemill eval`` prints: every figure with its interval and n."""
    lines: list[str] = []
    for result in evals:
        lines.append(f"agent {result.agent}: {len(result.tasks)} held-out tasks x "
                     f"k={result.k} samples, graded by {result.stamp}"
                     + (f"; {result.errors} samples ended on an agent error (failed)"
                        if result.errors else ""))
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
                    **{name: plain(e) for name, e in r.figures().items()},
                    "per_tool": {n: plain(e) for n, e in r.by("tool").items()},
                    "per_situation": {n: plain(e) for n, e in r.by("situation").items()},
                    "tasks": [{"task_id": t.task_id, "n": t.n, "c": t.c} for t in r.tasks]}
                   for r in evals],
        "comparison": None if comparison is None else {
            "verdict": comparison.verdict, "reason": comparison.reason,
            "difference": plain(comparison.difference), "p_value": comparison.p_value},
    }


def run_eval(cursor: duckdb.DuckDBPyConnection, agents: Sequence[str], k: int,
             credentials: Mapping[str, str]) -> tuple[list[AgentEval], Comparison | None]:
    """Evaluate one agent, or two and compare the second (after) with the first (before)."""
    if k < 1:
        raise SplitError(f"--k must be 1 or more (got {k})")
    tasks = load_tasks(cursor)
    evals = [asyncio.run(evaluate(tasks, spec, k, credentials)) for spec in agents]
    comparison = (compare(evals[0].tasks, evals[1].tasks,
                          stamps=(evals[0].stamp, evals[1].stamp))
                  if len(evals) == 2 else None)
    return evals, comparison


__all__ = ["AgentEval", "EvalTask", "eval_json", "evaluate", "load_tasks", "render_eval",
           "run_eval"]
