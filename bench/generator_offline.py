"""Benchmark: offline generation — graded rollouts per second with no model key, and
whether the rollouts show what they were planned to show.

Builds (once per invocation) two stores through the real collector pipeline and
processor: the project's synthetic production stream (tests/support/synthetic.py, planted
failures over two model versions) and a production-shaped stream from an outside world
(tests/support/tau2_stream.py: tau2-bench's airline and telecom conversations through the
real OpenTelemetry SDK, on a seed not used while developing). Per store and run it copies
the store and runs the real ``run_generation`` with the offline seeded agent and the
template person: plan, simulate (world, person, agent), conduct checks, batched commits,
run record — everything ``tracemill generate --agent offline`` does after processing.

Printed per run and as medians:

* graded rollouts/s of the whole run (target, issue 4: >= 200 with 5-turn conversations
  with tool calls);
* the shape of those conversations: person turns, agent model calls and tool calls per
  rollout, how they ended — and turns/s / 5, the rate of 5-turn-equivalent conversations;
* the ceiling measured in the same run: the same plan items through ``simulate()`` alone
  (no grading, no store, no run bookkeeping), and the ratio of the run to it;
* issue 9's proof, per store, each figure with its n (tests/generator/_careful.py): with
  the offline agent, the share of rollouts whose mutation needs the world in which it
  fired (target >= 90%); in exploration rollouts without faults, the tools never called
  successfully (target: none); a careful scripted agent (look up, then act with the exact
  ids the person gave) replaying those exploration tasks, the share it completes
  (target >= 95%); and whether any run record raised ``dead_tools`` (target: never).

    python bench/generator_offline.py                  # 3 runs of 3000 rollouts per store
    python bench/generator_offline.py --rollouts 1000 --runs 1 --stores tau2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.backends import BackendOptions
from generator.budget import Budget, BudgetLedger
from generator.offline_agent import OfflineAgent
from generator.plan import PlanOptions, build_plan, load_plan_inputs
from generator.prices import PriceTable
from generator.run import RunConfig, run_generation
from generator.simulate import Limits, simulate
from generator.template_person import TemplatePerson
from processor.run import ProcessOptions, process
from tests.generator._careful import Proof, measure
from tests.support.pipeline import store_requests
from tests.support.synthetic import production_stream
from tracemill.store import open_store

TAU2_SEED = 11
"""The tau2 stream's seed here: not one used while developing the agent (3, 7)."""


def build_store(folder: Path, kind: str = "synthetic", conversations: int = 3000) -> Path:
    """A processed store holding the synthetic production stream, or (``tau2``) a
    tau2-bench airline+telecom stream of ``conversations``."""
    db = folder / f"base-{kind}.duckdb"
    if kind == "tau2":
        from tests.support.tau2_stream import tau2_stream  # needs the tau2 extra

        requests = tau2_stream(seed=TAU2_SEED, conversations=conversations).requests
    else:
        requests = production_stream(seed=5, conversations_per_version=400).requests
    store_requests(db, requests, source="bench")
    store = open_store(db)
    process(store, ProcessOptions())
    store.checkpoint()
    store.close()
    return db


def proof(base: Path, rollouts: int, seed: int) -> Proof:
    """Issue 9's figures for the plan a run of ``rollouts`` makes on the store."""
    store = open_store(base, read_only=True)
    try:
        plan = build_plan(load_plan_inputs(store.cursor()), rollouts, PlanOptions(seed=seed))
    finally:
        store.close()
    return measure(plan, limits=Limits(max_turns=5))


def config(rollouts: int, seed: int, concurrency: int) -> RunConfig:
    return RunConfig(agent="offline", budget=Budget("rollouts", rollouts), seed=seed,
                     concurrency=concurrency, saturation_window=0, limits=Limits(max_turns=5),
                     plan=PlanOptions(seed=seed), backend=BackendOptions())


def run_once(base: Path, work: Path, rollouts: int, seed: int, concurrency: int
             ) -> dict[str, float]:
    db = work / "run.duckdb"
    for path in (db, db.with_name(db.name + ".wal")):
        path.unlink(missing_ok=True)
    shutil.copy(base, db)
    store = open_store(db)
    try:
        started, cpu = time.perf_counter(), time.process_time()
        record = asyncio.run(run_generation(store, config(rollouts, seed, concurrency), {},
                                            progress=False))
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
        shape = store.query(
            "SELECT avg(len(list_filter(from_json(messages, '[\"JSON\"]'), "
            "lambda m: m->>'role' = 'user'))), avg(json_array_length(events)), "
            "avg(model_calls), count(*) FILTER (WHERE ended_by = 'max_turns') / count(*) "
            "FROM rollouts")[0]
    finally:
        store.close()
    turns, tools, calls, max_turns = (float(v) for v in shape)
    return {"rollouts": float(record.graded), "wall_s": wall,
            "dead_tools": float("dead_tools" in record.degraded),
            "graded_per_s": record.graded / wall, "graded_per_cpu_s": record.graded / cpu,
            "turns": turns, "tool_calls": tools,
            "model_calls": calls, "share_5_turns": max_turns,
            "five_turn_equiv_per_s": record.graded * turns / 5 / wall}


async def _ceiling(base: Path, rollouts: int, seed: int, concurrency: int) -> float:
    """Rollouts/s of simulate() alone over the same plan items."""
    store = open_store(base, read_only=True)
    try:
        cursor = store.cursor()
        plan = build_plan(load_plan_inputs(cursor), rollouts, PlanOptions(seed=seed))
    finally:
        store.close()
    agent, person = OfflineAgent(), TemplatePerson()
    ledger = BudgetLedger(Budget("rollouts", rollouts))
    prices = PriceTable.default()
    semaphore = asyncio.Semaphore(concurrency)

    async def one(item: object) -> None:
        async with semaphore:
            await simulate(item, tools=plan.tools, agent=agent, person=person,  # type: ignore[arg-type]
                           ledger=ledger, prices=prices)

    started = time.perf_counter()
    await asyncio.gather(*(one(item) for item in plan.items))
    return len(plan.items) / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=3000, help="Rollouts per run.")
    parser.add_argument("--runs", type=int, default=3, help="Runs; medians are printed.")
    parser.add_argument("--seed", type=int, default=1, help="Run seed.")
    parser.add_argument("--concurrency", type=int, default=32, help="Conversations in flight.")
    parser.add_argument("--stores", default="synthetic,tau2",
                        help="Stores to run on, comma-separated: synthetic, tau2.")
    parser.add_argument("--tau2-conversations", type=int, default=3000,
                        help="Conversations in the tau2 stream.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work_dir:
        for kind in args.stores.split(","):
            bench_store(Path(work_dir), kind.strip(), args)
    return 0


def bench_store(work: Path, kind: str, args: argparse.Namespace) -> None:
    results = []
    ceilings = []
    started = time.perf_counter()
    base = build_store(work, kind, args.tau2_conversations)
    label = (f"tau2 airline+telecom stream, seed {TAU2_SEED}, {args.tau2_conversations} "
             "conversations" if kind == "tau2" else "synthetic production stream")
    print(f"\n== {kind}: built the store ({label}) in {time.perf_counter() - started:.1f}s",
          flush=True)
    for index in range(args.runs):
        figures = run_once(base, work, args.rollouts, args.seed, args.concurrency)
        ceiling = asyncio.run(_ceiling(base, args.rollouts, args.seed, args.concurrency))
        results.append(figures)
        ceilings.append(ceiling)
        print(f"run {index + 1}: " + ", ".join(f"{k} {v:,.2f}" for k, v in figures.items())
              + f", simulate-only ceiling {ceiling:,.1f}/s", flush=True)
    proven = proof(base, args.rollouts, args.seed)
    median = {key: statistics.median(r[key] for r in results) for key in results[0]}
    ceiling = statistics.median(ceilings)
    print(f"\n{kind}: median over {args.runs} runs of {args.rollouts} rollouts "
          f"(offline agent, template person, max 5 turns, concurrency {args.concurrency})")
    print(f"  graded rollouts/s            {median['graded_per_s']:>10,.1f}   target >= 200")
    print(f"  graded rollouts per CPU-s    {median['graded_per_cpu_s']:>10,.1f}   (the "
          f"process's CPU time: what the wall-clock rate is on an idle core; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores now)")
    print(f"  simulate-only ceiling (/s)   {ceiling:>10,.1f}")
    print(f"  run / ceiling                {median['graded_per_s'] / ceiling:>10.2f}")
    print(f"  person turns per rollout     {median['turns']:>10.2f}   "
          f"({median['share_5_turns']:.0%} reach 5 turns)")
    print(f"  agent calls per rollout      {median['model_calls']:>10.2f}")
    print(f"  tool calls per rollout       {median['tool_calls']:>10.2f}")
    print(f"  5-turn equivalents/s         {median['five_turn_equiv_per_s']:>10,.1f}   "
          "(person turns/s / 5)")
    dead = sum(r["dead_tools"] for r in results)
    print(f"  mutation fired               {proven.fired_share:>10.1%}   target >= 90% "
          f"({proven.fired} of {proven.needs_world} rollouts whose mutation needs the "
          "world)")
    unused = ", ".join(proven.unused_in_explore) or "none"
    print(f"  tools never called ok        {len(proven.unused_in_explore):>10}   target 0 "
          f"(of {len(proven.tools)} tools, in {proven.explore_clean} exploration "
          f"rollouts without faults: {unused}; of the tools they asked for where the task "
          f"can succeed, never called ok: {', '.join(proven.aimed_unused) or 'none'})")
    print(f"  careful agent completes      {proven.careful_share:>10.1%}   target >= 95% "
          f"({proven.careful_met} of {proven.careful_n} exploration tasks without faults, "
          f"intact world; {proven.careful_own_met} of {proven.careful_own_n} in their own "
          "world where the task can succeed)")
    print(f"  dead_tools raised            {dead:>10.0f}   target 0 (of {len(results)} run "
          "records)")


if __name__ == "__main__":
    raise SystemExit(main())
