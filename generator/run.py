"""A generation run: plan a budget over the failure map, simulate, grade, store, report.

:func:`run_generation` is what ``tracemill generate`` calls. It

1. builds the parts that play the run's roles (:mod:`generator.roles`: agent, person,
   writer, judge, grader, world) from their spec strings;
2. finds the run to work on (:mod:`generator.resume`): the newest unfinished run with
   the same fingerprint is resumed with the plan it stored, else a new run is planned
   (:mod:`generator.plan`: as many rollouts as the budget could pay for, in an order
   whose every prefix respects the shares);
3. executes it (:mod:`generator.execute`) to its stop rule, committing rollouts as they
   finish (``on_progress`` hears the run id as soon as it is settled, and the count of
   finished rollouts after each; ``stop`` ends it early, see :class:`Execution`); and
4. builds the :class:`~generator.run_record.RunRecord` from what the store holds of the run,
   stores it and returns it.

Everything random comes from the plan items' seeds, so the same seed, store and specs
give the same rollouts with the offline backends (with remote models, what the model
says is up to the model).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping

import duckdb

from generator.backends import BackendOptions
from generator.budget import BudgetLedger
from generator.covering import coverage
from generator.execute import FAILING_IN_A_ROW, Execution, Progress, RolloutWriter, Row
from generator.plan import Plan, PlanOptions, build_plan, load_plan_inputs
from generator.plan_codec import plan_from_json, plan_to_json
from generator.prices import PriceTable
from generator.resume import FINISHED_BY, charge_earlier, resolve_run
from generator.roles import Roles, check_prices
from generator.rollout_store import (
    finish_run,
    insert_rollouts,
    start_run,
    stored_progress,
    stored_rollouts,
)
from generator.run_config import (
    RunConfig,
    config_summary,
    fingerprint,
    plan_capacity,
    plan_summary,
    same_model_roles,
)
from generator.run_record import RunRecord, build_record
from generator.world import load_tool_file
from tracemill.store import Store

_log = logging.getLogger("tracemill.generator")


async def run_generation(
    store: Store,
    config: RunConfig,
    credentials: Mapping[str, str],
    *,
    resume: str | None = None,
    fresh: bool = False,
    progress: bool = True,
    on_progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> RunRecord:
    """Run one generation run to its stop rule and return its record (also stored).

    An unfinished run with the same configuration is resumed (``fresh`` starts a new one
    instead): it simulates the plan it stored, skips the rollouts it already stored and
    charges what it already spent to the budget.

    ``on_progress`` is told ``(run id, rollouts finished)`` once the run is recorded
    (with what earlier invocations stored, when resumed) and after each finished rollout.
    Setting ``stop`` (from any thread) starts no more rollouts; those in flight finish and
    are stored, and the run is stored ``interrupted`` (resumable)."""
    started = time.monotonic()
    options = config.backend or BackendOptions()
    prices = options.prices
    roles = Roles(config, credentials, options)
    try:
        check_prices(config, prices)
        identity = fingerprint(config)
        cursor = store.cursor()
        try:
            run_id, previous = resolve_run(cursor, identity, resume, fresh)
            if previous is None:
                plan = _new_plan(cursor, config, prices)
                start_run(cursor, run_id, identity, config.seed, config_summary(config),
                          plan_summary(plan), plan_to_json(plan))
            else:
                plan = plan_from_json(previous.plan_body)
            so_far = stored_progress(cursor, run_id)
        finally:
            cursor.close()
        if on_progress is not None:
            on_progress(run_id, len(so_far.indices))
        ledger = BudgetLedger(config.budget)
        charge_earlier(ledger, so_far, previous)
        writer = RolloutWriter(lambda rows: _insert(store, run_id, rows))
        execution = Execution(writer, config, roles, plan, ledger, prices, run_id,
                              so_far.indices, progress, on_progress=on_progress, stop=stop)
        stop_reason = await execution.run()
        cursor = store.cursor()
        try:
            stored = stored_rollouts(cursor, run_id)
            record = build_record(
                run_id=run_id, resumed=previous is not None, config=config, plan=plan,
                ledger=ledger.summary(), stop_reason=stop_reason,
                finished=len(execution.finished), earlier=len(so_far.indices),
                stored=stored,
                coverage=coverage(plan.grid, [r.situation for r in stored
                                              if r.mutation_fired is not False]),
                same_model=same_model_roles(config), lost=execution.lost,
                fallbacks=execution.fallbacks, errors=execution.last_errors,
                duration_s=time.monotonic() - started,
                default_system_prompt=config.system_prompt is None,
                cut_by_budget=execution.cut_by_budget, world_note=roles.worlds.note,
            )
            finish_run(cursor, run_id, record, finished=stop_reason in FINISHED_BY)
        finally:
            cursor.close()
        return record
    finally:
        try:
            await roles.aclose()
        except Exception:  # the record is what matters; a backend that closes badly is logged
            _log.warning("closing the run's model clients failed", exc_info=True)


def _insert(store: Store, run_id: str, rows: list[Row]) -> None:
    cursor = store.cursor()
    try:
        insert_rollouts(cursor, rows)
    finally:
        cursor.close()
    _log.debug("stored rollouts", extra={"fields": {"run_id": run_id, "rollouts": len(rows)}})


def _new_plan(cursor: duckdb.DuckDBPyConnection, config: RunConfig,
              prices: PriceTable) -> Plan:
    tools = load_tool_file(config.tools_file) if config.tools_file else None
    inputs = load_plan_inputs(cursor, tools=tools)
    return build_plan(inputs, plan_capacity(config, prices),
                      config.plan or PlanOptions(seed=config.seed))


__all__ = ["FAILING_IN_A_ROW", "FINISHED_BY", "RunConfig", "config_summary", "plan_summary",
           "run_generation", "same_model_roles"]
