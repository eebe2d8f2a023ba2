"""Benchmark: offline generation speed — graded rollouts per second with no model key.

Builds (once per invocation) a store from the synthetic production stream
(tests/support/synthetic.py, planted failures over two model versions) through the real
collector pipeline and processor, then per run copies it and runs the real
``run_generation`` with the offline seeded agent and the template person: plan, simulate
(world, person, agent), conduct checks, batched commits, run record — everything
``tracemill generate --agent offline`` does after processing.

Printed per run and as medians:

* graded rollouts/s of the whole run (target, issue 4: >= 200 with 5-turn conversations
  with tool calls);
* the shape of those conversations: person turns, agent model calls and tool calls per
  rollout, how they ended — and turns/s / 5, the rate of 5-turn-equivalent conversations;
* the ceiling measured in the same run: the same plan items through ``simulate()`` alone
  (no grading, no store, no run bookkeeping), and the ratio of the run to it.

    python bench/generator_offline.py                  # 3 runs of 3000 rollouts
    python bench/generator_offline.py --rollouts 1000 --runs 1
"""

from __future__ import annotations

import argparse
import asyncio
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
from generator.person import TemplatePerson
from generator.plan import PlanOptions, build_plan, load_plan_inputs
from generator.prices import PriceTable
from generator.run import RunConfig, run_generation
from generator.simulate import Limits, simulate
from processor.run import ProcessOptions, process
from tests.support.pipeline import store_requests
from tests.support.synthetic import production_stream
from tracemill.store import open_store


def build_store(folder: Path) -> Path:
    """A processed store holding the synthetic production stream."""
    db = folder / "base.duckdb"
    stream = production_stream(seed=5, conversations_per_version=400)
    store_requests(db, stream.requests, source="bench")
    store = open_store(db)
    process(store, ProcessOptions())
    store.checkpoint()
    store.close()
    return db


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
        started = time.perf_counter()
        record = asyncio.run(run_generation(store, config(rollouts, seed, concurrency), {},
                                            progress=False))
        wall = time.perf_counter() - started
        shape = store.query(
            "SELECT avg(len(list_filter(from_json(messages, '[\"JSON\"]'), "
            "lambda m: m->>'role' = 'user'))), avg(json_array_length(events)), "
            "avg(model_calls), count(*) FILTER (WHERE ended_by = 'max_turns') / count(*) "
            "FROM rollouts")[0]
    finally:
        store.close()
    turns, tools, calls, max_turns = (float(v) for v in shape)
    return {"rollouts": float(record.graded), "wall_s": wall,
            "graded_per_s": record.graded / wall, "turns": turns, "tool_calls": tools,
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
    args = parser.parse_args()
    results = []
    ceilings = []
    with tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        started = time.perf_counter()
        base = build_store(work)
        print(f"built the production store in {time.perf_counter() - started:.1f}s",
              flush=True)
        for index in range(args.runs):
            figures = run_once(base, work, args.rollouts, args.seed, args.concurrency)
            ceiling = asyncio.run(_ceiling(base, args.rollouts, args.seed, args.concurrency))
            results.append(figures)
            ceilings.append(ceiling)
            print(f"run {index + 1}: " + ", ".join(f"{k} {v:,.2f}" for k, v in figures.items())
                  + f", simulate-only ceiling {ceiling:,.1f}/s", flush=True)
    median = {key: statistics.median(r[key] for r in results) for key in results[0]}
    ceiling = statistics.median(ceilings)
    print(f"\nmedian over {args.runs} runs of {args.rollouts} rollouts "
          f"(offline agent, template person, max 5 turns, concurrency {args.concurrency})")
    print(f"  graded rollouts/s            {median['graded_per_s']:>10,.1f}   target >= 200")
    print(f"  simulate-only ceiling (/s)   {ceiling:>10,.1f}")
    print(f"  run / ceiling                {median['graded_per_s'] / ceiling:>10.2f}")
    print(f"  person turns per rollout     {median['turns']:>10.2f}   "
          f"({median['share_5_turns']:.0%} reach 5 turns)")
    print(f"  agent calls per rollout      {median['model_calls']:>10.2f}")
    print(f"  tool calls per rollout       {median['tool_calls']:>10.2f}")
    print(f"  5-turn equivalents/s         {median['five_turn_equiv_per_s']:>10,.1f}   "
          "(person turns/s / 5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
