"""The worlds behind the exported rollouts, for exports that rebuild them (verifiers).

A rollout's world is its plan item (seed, the person's facts, world state, faults, the
goal's tool) and its run's tool schemas: :class:`generator.world.World` answers the same
calls the same way from them. Rollouts that share a world (the same item replayed against
another agent, or k samples of it) make one *task*; the end states its passing rollouts
left (the records their calls created, updated or deleted) are the task's references.
Only tracemill's own simulated world can be rebuilt: rollouts answered by a team's own
system (``generate --world python:...`` or ``http...``) are left out and counted.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import duckdb
import orjson

from generator.exports._data import ExportData, ExportRollout
from generator.run_config import SIMULATED_WORLD
from tracemill.store import load_sql

Effect = tuple[str, str, str]
"""(tool, created|updated|deleted, record id) — one change a call left in the world."""


@dataclass(frozen=True)
class ExportTask:
    """One world the exported rollouts ran in."""

    task_id: str
    """Digest of the plan item and the run's tools (stable across exports)."""
    run_id: str
    """The first run that planned it (its tools and system prompt)."""
    item: dict[str, Any]
    """The plan item, in the run's stored plan's JSON form."""
    rollouts: tuple[ExportRollout, ...]
    """The exported rollouts that ran in it."""
    references: tuple[tuple[Effect, ...], ...]
    """The distinct end states its passing rollouts left (sorted effects each)."""


@dataclass(frozen=True)
class TaskWorlds:
    """Every exported rollout's world, grouped into tasks per side."""

    tasks: dict[str, tuple[ExportTask, ...]]
    """Side (train / held_out) -> its tasks."""
    tools: dict[str, list[dict[str, Any]]]
    """Run -> its tool schemas in tracemill's form (with exemplars: the world needs them)."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Rollouts without a rebuildable world, per reason (external_world, no_plan)."""


def _digest(item: dict[str, Any], tools: list[dict[str, Any]]) -> str:
    world = {k: v for k, v in item.items() if k != "index"}
    return hashlib.sha256(orjson.dumps({"item": world, "tools": tools},
                                       option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]


def load_task_worlds(cursor: duckdb.DuckDBPyConnection, data: ExportData) -> TaskWorlds:
    """Group the exported rollouts of ``data`` by world, with each world's references."""
    items: dict[str, dict[int, dict[str, Any]]] = {}
    tools: dict[str, list[dict[str, Any]]] = {}
    external: set[str] = set()
    for run_id, plan_body, world in cursor.execute(
            load_sql("generator", "export_world_runs.sql")).fetchall():
        if world != SIMULATED_WORLD:
            external.add(run_id)
        if plan_body is None:
            continue
        plan = orjson.loads(plan_body)
        items[run_id] = {int(item["index"]): item for item in plan.get("items") or ()}
        tools[run_id] = plan.get("tools") or []
    wanted = {row.rollout_id: row for row in data.train + data.held_out}
    left_out: Counter[str] = Counter()
    grouped: dict[str, dict[str, list[ExportRollout]]] = {"train": {}, "held_out": {}}
    worlds: dict[str, tuple[str, dict[str, Any]]] = {}
    references: dict[str, set[tuple[Effect, ...]]] = {}
    result = cursor.execute(load_sql("generator", "export_world_effects.sql"))
    while batch := result.fetchmany(10_000):
        for rollout_id, idx, effects in batch:
            row = wanted.get(rollout_id)
            if row is None:
                continue
            if row.run_id in external:
                left_out["external_world"] += 1
                continue
            item = items.get(row.run_id, {}).get(idx)
            if item is None:
                left_out["no_plan"] += 1
                continue
            key = _digest(item, tools[row.run_id])
            worlds.setdefault(key, (row.run_id, item))
            grouped[row.side].setdefault(key, []).append(row)
            if row.passed:
                end = tuple(sorted({(str(t), str(e), str(r)) for t, e, r in effects or ()}))
                references.setdefault(key, set()).add(end)
    tasks = {side: tuple(
        ExportTask(task_id=key, run_id=worlds[key][0], item=worlds[key][1],
                   rollouts=tuple(rows), references=tuple(sorted(references.get(key, ()))))
        for key, rows in sorted(by_key.items())) for side, by_key in grouped.items()}
    used = {task.run_id for side in tasks.values() for task in side}
    return TaskWorlds(tasks=tasks, tools={run: tools[run] for run in sorted(used)},
                      left_out=dict(left_out))


__all__ = ["Effect", "ExportTask", "TaskWorlds", "load_task_worlds"]
