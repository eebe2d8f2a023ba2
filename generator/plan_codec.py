"""A plan as JSON and back, so that a resumed run simulates exactly what it planned.

A run stores its whole :class:`~generator.plan.Plan` with its row; resuming reads it back
instead of planning again over a failure map that new spans may have changed since.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import orjson

from generator.plan import Plan
from generator.records import (
    Cell,
    Fault,
    Goal,
    Mutation,
    Persona,
    PlannedRollout,
    ToolSpec,
)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def plan_to_json(plan: Plan) -> str:
    """The plan as one JSON document."""
    return orjson.dumps({
        "items": plan.items, "tools": plan.tools, "grid": dict(plan.grid),
        "pairs_planned": plan.pairs_planned, "pairs_in_grid": plan.pairs_in_grid,
        "shares": dict(plan.shares), "notes": plan.notes, "fingerprint": plan.fingerprint,
    }, default=_plain).decode()


def _item(data: dict[str, Any]) -> PlannedRollout:
    cell = Cell(**data["cell"]) if data["cell"] else None
    goal = data["goal"]
    mutation = data["mutation"]
    return PlannedRollout(
        index=int(data["index"]), purpose=data["purpose"], cell=cell,
        cell_status=data["cell_status"],
        situation=MappingProxyType(dict(data["situation"])), seed=int(data["seed"]),
        goal=Goal(ask=goal["ask"], tool=goal["tool"], facts=dict(goal["facts"]),
                  source_ask=goal["source_ask"]),
        persona=Persona(**data["persona"]),
        mutation=Mutation(kind=mutation["kind"], detail=mutation["detail"],
                          world_state=mutation["world_state"],
                          faults=tuple(Fault(**fault) for fault in mutation["faults"])),
        source_conversations=tuple(data["source_conversations"]),
    )


def _tool(data: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=data["name"], description=data["description"],
                    parameters=data["parameters"], exemplars=tuple(data["exemplars"]),
                    source=data["source"])


def plan_from_json(text: str) -> Plan:
    """Read back what :func:`plan_to_json` wrote."""
    data = orjson.loads(text)
    return Plan(
        items=tuple(_item(item) for item in data["items"]),
        tools=tuple(_tool(tool) for tool in data["tools"]),
        grid=MappingProxyType({axis: tuple(values) for axis, values in data["grid"].items()}),
        pairs_planned=int(data["pairs_planned"]), pairs_in_grid=int(data["pairs_in_grid"]),
        shares=MappingProxyType(dict(data["shares"])), notes=tuple(data["notes"]),
        fingerprint=data["fingerprint"],
    )
