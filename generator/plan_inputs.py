"""What a plan is made from: the failure map, axis values, tools and source conversations.

:func:`load_plan_inputs` reads them from the store in a few queries
(``generator/sql/plan_*.sql``): the map's *situations* (``situations``) with the members
the processor stored for them (``situation_members``), and axis values from the
processor's coordinates view (``processor/sql/coordinates.sql``); :mod:`generator.plan`
turns them into a plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import duckdb
import orjson

from generator.errors import NothingToPlan, ToolSchemaError
from generator.records import Cell, ToolSpec
from generator.world import tool_from_structure
from tracemill.store import load_sql

__all__ = ["SOURCES_PER_CELL", "MapCell", "PlanInputs", "SourceConversation", "SourceStep",
           "load_plan_inputs", "merge_tools"]

SOURCES_PER_CELL = 24
"""Most production conversations loaded per situation (failing ones first)."""


@dataclass(frozen=True)
class SourceStep:
    """One tool step of a production conversation."""

    tool: str
    """The tool called."""
    arguments: str | None
    """Its arguments as JSON text (None when not captured)."""
    result: str | None
    """Its result text."""
    status: str
    """ok, error or missing."""


@dataclass(frozen=True)
class SourceConversation:
    """A production conversation a rollout may derive from."""

    conversation_id: str
    """Its id (the rollout's lineage)."""
    first_ask: str | None
    """The first user message (None when content was not captured)."""
    steps: tuple[SourceStep, ...]
    """Its tool steps, in order."""
    situation: Mapping[str, str]
    """Its six axis values."""
    failed: bool
    """Its outcome was a failure."""


@dataclass(frozen=True)
class MapCell:
    """A situation of the failure map as the planner sees it."""

    cell: Cell
    """Its coordinates and situation id."""
    status: str
    """new, persistent, uncertain or fixed."""
    priority: float
    """The map's priority (weight by status x fail rate x sqrt(graded))."""
    budget_share: float
    """The map's suggested share of a budget (for reports; the plan uses ``priority``)."""
    conversations: int
    """Members of the situation, all versions."""
    graded_latest: int
    """Graded in the latest period."""
    failed_latest: int
    """Failed among them."""
    low_support: bool
    """Fewer than the minimum graded conversations in the latest period."""
    sources: tuple[str, ...]
    """Ids of its source conversations (members), its own first, then failing ones (see
    :data:`SOURCES_PER_CELL`)."""


@dataclass(frozen=True)
class PlanInputs:
    """What the store holds for planning."""

    cells: tuple[MapCell, ...]
    """The map's situations, the highest priority first."""
    map_cells: int
    """Cells in the failure map, passing ones included (0: no map computed)."""
    axis_values: Mapping[str, tuple[str, ...]]
    """Values seen on each axis in the stored conversations."""
    tools: tuple[ToolSpec, ...]
    """Tools the world can answer (supplied ones replace stored ones of the same name)."""
    conversations: Mapping[str, SourceConversation]
    """Source conversations by id."""
    example_arguments: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    """A few real arguments texts per tool, to shape exploration facts."""
    supplied_tools: tuple[str, ...] = ()
    """Names of the tools that were supplied rather than read from the store."""


# --------------------------------------------------------------------------- loading


def _coordinates(pairs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``[{"axis": ..., "value": ...}]`` (a list from SQL or JSON) as axis → value."""
    return {str(pair["axis"]): str(pair["value"]) for pair in pairs}


def _steps(text: str | None) -> tuple[SourceStep, ...]:
    steps = []
    for step in orjson.loads(text or "[]"):
        if isinstance(step, dict) and step.get("tool"):
            steps.append(SourceStep(str(step["tool"]), step.get("arguments"),
                                    step.get("result"), str(step.get("status") or "missing")))
    return tuple(steps)


def _is_json(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _stored_tool(name: str, schema: str, source: str,
                 exemplars: tuple[str, ...]) -> ToolSpec:
    """A tool_schemas row as a tool: a definition offered to the model is already a JSON
    schema; an observed row holds an argument structure to be turned into one."""
    if source != "definitions":
        return tool_from_structure(name, schema, exemplars=exemplars, source=source)
    try:
        definition = orjson.loads(schema)
    except orjson.JSONDecodeError as exc:
        raise ToolSchemaError(
            f"the stored definition of tool {name!r} is not JSON ({exc}): {schema[:80]!r}; "
            "rebuild the tool catalog with `tracemill process`") from None
    if not isinstance(definition, dict):
        definition = {}
    description = definition.get("description")
    text = description if isinstance(description, str) and description.strip() \
        else tool_from_structure(name, "{}").description  # the default observed tools get
    return ToolSpec(name=name, description=text,
                    parameters=_object_schema(definition.get("parameters")),
                    exemplars=exemplars, source="definitions")


def _object_schema(given: Any) -> dict[str, Any]:
    """``given`` as an object schema the world can check arguments against: agents'
    definitions are not validated by anyone, so a stray ``required`` name (absent from
    ``properties``) or a non-object ``properties`` is dropped rather than trusted."""
    schema = dict(given) if isinstance(given, dict) else {}
    schema["type"] = "object"
    props = schema.get("properties")
    schema["properties"] = props if isinstance(props, dict) else {}
    required = schema.get("required")
    schema["required"] = [key for key in required if isinstance(key, str)
                          and key in schema["properties"]] if isinstance(required, list) else []
    return schema


def merge_tools(stored: Iterable[ToolSpec],
                 supplied: Iterable[ToolSpec] | None) -> tuple[tuple[ToolSpec, ...], set[str]]:
    """Stored tools overlaid with supplied ones (supplied win), by name; and the names
    that were supplied."""
    tools = {tool.name: tool for tool in stored}
    names = set()
    for tool in supplied or ():
        tools[tool.name] = tool
        names.add(tool.name)
    return tuple(tools[name] for name in sorted(tools)), names


def load_plan_inputs(cursor: duckdb.DuckDBPyConnection, *,
                     tools: Sequence[ToolSpec] | None = None) -> PlanInputs:
    """Read the failure map, axis values, tools and source conversations for a plan.

    ``tools`` (supplied schemas) win over the store's. Raises :class:`NothingToPlan` when
    the store holds neither a failure map nor tool schemas and none are supplied."""
    cursor.execute(load_sql("processor", "coordinates.sql"))
    size = cursor.execute(load_sql("generator", "plan_map_size.sql")).fetchone()
    map_cells = int(size[0]) if size else 0
    values: dict[str, list[str]] = {}
    for axis, value in cursor.execute(load_sql("generator", "plan_axis_values.sql")).fetchall():
        values.setdefault(axis, []).append(value)
    conversations: dict[str, SourceConversation] = {}
    sources: dict[str, list[str]] = {}
    for situation_id, conversation_id, first_ask, steps, failed, coordinates in cursor.execute(
            load_sql("generator", "plan_sources.sql"), [SOURCES_PER_CELL]).fetchall():
        sources.setdefault(situation_id, []).append(conversation_id)
        if conversation_id not in conversations:
            conversations[conversation_id] = SourceConversation(
                conversation_id, first_ask, _steps(steps),
                MappingProxyType(_coordinates(coordinates)), bool(failed))
    cells = tuple(
        MapCell(Cell.of(_coordinates(orjson.loads(coordinates)), situation_id), status,
                float(priority), float(share), int(count), int(graded), int(failed), bool(low),
                tuple(sources.get(situation_id, ())))
        for situation_id, coordinates, status, priority, share, count, graded, failed, low
        in cursor.execute(load_sql("generator", "plan_cells.sql")).fetchall())
    examples: dict[str, list[str]] = {}
    results: dict[str, list[str]] = {}
    for tool, arguments, result, status in cursor.execute(
            load_sql("generator", "plan_exemplars.sql")).fetchall():
        if arguments:
            examples.setdefault(tool, []).append(arguments)
        if status == "ok" and result and _is_json(result):  # a malformed body shapes nothing
            results.setdefault(tool, []).append(result)
    stored = [_stored_tool(name, schema, source, tuple(results.get(name, ())))
              for name, schema, source in cursor.execute(
                  load_sql("generator", "plan_tools.sql")).fetchall()]
    merged, supplied = merge_tools(stored, tools)
    if map_cells == 0 and not merged:
        raise NothingToPlan(
            "the store holds no failure map and no tool schemas, so there is nothing to "
            "plan: send traces and run `tracemill process` first, or supply tool schemas "
            "with --tools FILE to explore without a map")
    return PlanInputs(
        cells=cells, map_cells=map_cells,
        axis_values=MappingProxyType({axis: tuple(v) for axis, v in values.items()}),
        tools=merged, conversations=MappingProxyType(conversations),
        example_arguments=MappingProxyType({t: tuple(a) for t, a in examples.items()}),
        supplied_tools=tuple(sorted(supplied)))
