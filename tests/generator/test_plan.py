"""The plan of a run, over a real store holding a real failure map.

A synthetic production stream (tests/support/synthetic.py) goes through the real collector
pipeline into a DuckDB file, the real processor builds its failure map (situations and
their members), and the planner reads that store.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.metrics import Metrics
from collector.pipeline import Pipeline
from generator.covering import all_pairs
from generator.errors import BudgetError, NothingToPlan
from generator.plan import (
    Plan,
    PlanInputs,
    PlanOptions,
    build_plan,
    coverage_of,
    derive_seed,
    load_plan_inputs,
)
from generator.records import Cell, ToolSpec
from generator.world import FAULT_CONDITIONS, is_id_like
from processor.run import ProcessOptions, process
from tests.support.synthetic import TRUTH, production_stream
from tracemill.config import Settings
from tracemill.store import Store, open_store

CAPACITY = 240


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    db = tmp_path_factory.mktemp("plan") / "production.duckdb"
    opened = open_store(db)
    pipeline = Pipeline(Settings(db=db, decode_workers=0), opened, Metrics())
    pipeline.start()
    try:
        for request in production_stream(seed=5, conversations_per_version=330).requests:
            pipeline.intake.export_blocking("traces", request, "test")
    finally:
        pipeline.close(drain_all=True)
    process(opened, ProcessOptions())
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def inputs(store: Store) -> PlanInputs:
    cursor = store.cursor()
    try:
        return load_plan_inputs(cursor)
    finally:
        cursor.close()


@pytest.fixture(scope="module")
def plan(inputs: PlanInputs) -> Plan:
    return build_plan(inputs, CAPACITY, PlanOptions(seed=1))


def _map(store: Store) -> dict[str, tuple[str, float]]:
    """Situation id → (status, priority), as the processor stored them."""
    rows = store.query("SELECT situation_id, status, priority FROM situations")
    return {situation: (status, priority) for situation, status, priority in rows}


def _label(cell: tuple[tuple[str, str], ...]) -> str:
    return Cell.of(dict(cell)).label()


def _naming(planted: tuple[tuple[str, str], ...], cells: list[Cell]) -> Cell:
    """The one cell whose coordinates hold the planted ones (a situation may be named by
    one more coordinate where that isolates its failures better)."""
    (found,) = [cell for cell in cells if set(planted) <= set(cell.coordinates().items())]
    return found


def _conversation(store: Store, conversation_id: str) -> dict[str, object]:
    columns = ("outcome", "steps", "first_ask", "tool", "tool_condition", "world_state",
               "history", "user_stance", "policy_rule")
    row = store.query(f"SELECT {', '.join(columns)} FROM conversations "  # noqa: S608
                      "WHERE conversation_id = ?", [conversation_id])[0]
    return dict(zip(columns, row, strict=True))


def test_inputs_hold_the_map_tools_and_sources(inputs: PlanInputs, store: Store) -> None:
    statuses = {cell.cell: cell.status for cell in inputs.cells}
    for planted, status in TRUTH.items():
        assert statuses[_naming(planted, list(statuses))] == status
    assert "passing" not in statuses.values()
    stored = _map(store)
    assert {c.cell.situation_id for c in inputs.cells} == set(stored)
    priorities = [cell.priority for cell in inputs.cells]
    assert priorities == sorted(priorities, reverse=True)
    assert {tool.name for tool in inputs.tools} == {
        "lookup_order", "check_inventory", "cancel_order", "issue_refund", "update_address"}
    assert all(tool.source == "observed" and tool.exemplars for tool in inputs.tools)
    for cell in inputs.cells:
        assert cell.sources, cell.cell.label()
        failed = [inputs.conversations[c].failed for c in cell.sources]
        assert failed == sorted(failed, reverse=True)  # failing ones first
        members = {row[0] for row in store.query(
            "SELECT conversation_id FROM situation_members WHERE situation_id = ?",
            [cell.cell.situation_id])}
        assert set(cell.sources) <= members  # the processor's members, not re-derived
        for conversation_id in cell.sources:
            situation = inputs.conversations[conversation_id].situation
            assert set(situation) == {"tool", "tool_condition", "world_state", "history",
                                      "user_stance", "policy_rule"}
            assert all(situation[axis] == value
                       for axis, value in cell.cell.coordinates().items())
    assert inputs.map_cells == store.query("SELECT count(*) FROM failure_map")[0][0]


def test_targets_follow_priority(plan: Plan, inputs: PlanInputs, store: Store) -> None:
    targets = [c for c in inputs.cells if c.status in ("new", "persistent", "uncertain")]
    items = [item for item in plan.items if item.purpose == "target"]
    per_cell = Counter(item.cell for item in items)
    total = sum(c.priority for c in targets)
    for cell in targets:
        assert abs(per_cell[cell.cell] - len(items) * cell.priority / total) <= 1, cell
    aimed = [cell for cell in per_cell if cell is not None]
    for truth, status in TRUTH.items():
        if status in ("new", "persistent"):
            assert _naming(truth, aimed) in per_cell
    assert items[0].cell == max(targets, key=lambda c: c.priority).cell
    statuses = _map(store)
    for item in plan.items:
        if item.cell is not None:
            assert item.cell.situation_id is not None
            assert item.cell_status == statuses[item.cell.situation_id][0]
            assert (item.purpose == "guard") == (item.cell_status == "fixed")
    assert plan.shares["target"] == len(items)
    assert plan.shares["new"] + plan.shares["persistent"] + plan.shares.get(
        "uncertain", 0) == len(items)


def test_every_prefix_respects_the_shares(plan: Plan, inputs: PlanInputs) -> None:
    shares = {"target": 0.75, "explore": 0.2, "guard": 0.05}
    counts: Counter[str] = Counter()
    cells: Counter[Cell | None] = Counter()
    targets = {c.cell: c.priority for c in inputs.cells
               if c.status in ("new", "persistent", "uncertain")}
    total = sum(targets.values())
    for k, item in enumerate(plan.items, start=1):
        counts[item.purpose] += 1
        for purpose, share in shares.items():
            assert abs(counts[purpose] - share * k) <= 1, (k, purpose)
        if item.purpose == "target":
            cells[item.cell] += 1
            for cell, priority in targets.items():
                assert abs(cells[cell] - priority / total * counts["target"]) <= 1.5


def test_exploration_covers_the_grid(plan: Plan) -> None:
    grid = plan.grid
    assert grid["tool_condition"] == ("success",)
    assert set(grid["tool"]) == {tool.name for tool in plan.tools}
    assert "unknown" not in grid["world_state"]
    explore = [item for item in plan.items if item.purpose == "explore"]
    assert all(item.cell is None and item.mutation.kind == "explore" for item in explore)
    sizes = sorted((len(values) for values in grid.values()), reverse=True)
    assert len(explore) >= sizes[0] * sizes[1]  # enough rows for the whole array
    grid_pairs = all_pairs(grid)
    assert plan.pairs_in_grid == len(grid_pairs)
    assert coverage_of([i for i in explore if not i.mutation.faults], grid).fraction >= 0.9
    assert coverage_of(plan.items, grid).covered == plan.pairs_planned
    assert plan.pairs_planned == plan.pairs_in_grid
    assert any("exploration runs the whole covering array" in note for note in plan.notes)


def test_a_small_plan_says_how_much_of_the_grid_it_covers(inputs: PlanInputs) -> None:
    small = build_plan(inputs, 20, PlanOptions(seed=1))
    assert small.pairs_planned < small.pairs_in_grid
    note = next(note for note in small.notes if note.startswith("exploration runs"))
    assert "4 of the" in note and f"of the grid's {small.pairs_in_grid} pairs" in note


def test_faults_are_sampled_and_said_so(plan: Plan) -> None:
    explore = [item for item in plan.items if item.purpose == "explore"]
    faulted = [item for item in explore if item.mutation.faults]
    assert len(faulted) == int(len(explore) * 0.1)
    for item in faulted:
        (fault,) = item.mutation.faults
        assert fault.tool == item.situation["tool"] == item.goal.tool
        assert fault.condition == item.situation["tool_condition"] in FAULT_CONDITIONS
    assert len({item.mutation.faults[0].condition for item in faulted}) == min(
        len(faulted), len(FAULT_CONDITIONS))
    assert any("tool faults are sampled at 10% of exploration rows" in note
               and "not covered" in note and "--no-prefer-success" in note
               for note in plan.notes)


def test_faults_can_be_covered(inputs: PlanInputs) -> None:
    covered = build_plan(inputs, CAPACITY, PlanOptions(seed=1, prefer_success=False))
    assert covered.grid["tool_condition"] == ("success", *FAULT_CONDITIONS)
    assert any("covered pairwise" in note for note in covered.notes)
    explore = [item for item in covered.items if item.purpose == "explore"]
    pairs = {(i.situation["tool"], i.situation["tool_condition"]) for i in explore}
    assert pairs == set(itertools.product(covered.grid["tool"], covered.grid["tool_condition"]))
    for item in explore:
        condition = item.situation["tool_condition"]
        assert [f.condition for f in item.mutation.faults] == (
            [] if condition == "success" else [condition])
    high_rate = build_plan(inputs, 50, PlanOptions(seed=1, fault_rate=0.5))
    assert high_rate.grid["tool_condition"] == covered.grid["tool_condition"]


def test_lineage_and_mutations(plan: Plan, store: Store) -> None:
    aimed = [item for item in plan.items if item.purpose != "explore"]
    for item in aimed:
        assert item.cell is not None
        (source_id,) = item.source_conversations
        source = _conversation(store, source_id)
        for axis, value in item.cell.coordinates().items():
            assert source[axis] == value and item.situation[axis] == value
        assert item.goal.source_ask == source["first_ask"]
        kind = item.mutation.kind
        fixed = item.cell.coordinates()
        if fixed.get("tool_condition") in FAULT_CONDITIONS:
            assert kind == "tool_fault"
        elif fixed.get("world_state") in ("missing", "already_acted_on", "duplicate",
                                          "partially_completed"):
            assert kind == "world_state"
            assert item.mutation.world_state == fixed["world_state"]
        if kind == "tool_fault":
            assert [f.condition for f in item.mutation.faults] == [
                item.situation["tool_condition"]]
        if kind == "reperson":
            assert item.situation["tool_condition"] not in FAULT_CONDITIONS
            if "user_stance" not in fixed:
                assert item.situation["user_stance"] != source["user_stance"]
        assert item.persona.stance == item.situation["user_stance"]
    timeout = [i for i in aimed if i.cell is not None
               and i.cell.label() == "tool=lookup_order & tool_condition=timeout"]
    assert timeout and all(
        [(f.tool, f.condition) for f in i.mutation.faults] == [("lookup_order", "timeout")]
        for i in timeout)
    # a cell's first rollouts come from failing conversations, one each, in turn
    first = [i.source_conversations[0] for i in aimed if i.cell == aimed[0].cell][:5]
    assert len(set(first)) == len(first)
    assert all(_conversation(store, c)["outcome"] == "fail" for c in first)
    kinds = Counter(item.mutation.kind for item in aimed)
    assert kinds["tool_fault"] and kinds["reperson"]


def test_facts_are_fresh_and_the_ask_names_them(plan: Plan, inputs: PlanInputs,
                                                store: Store) -> None:
    def ids(arguments: str | None) -> set[str]:
        parsed = json.loads(arguments or "{}")
        return {str(v) for k, v in parsed.items() if is_id_like(k, None)}

    loaded = {value for c in inputs.conversations.values() for s in c.steps
              for value in ids(s.arguments)}
    stored: set[str] = set()
    for (steps,) in store.query("SELECT steps FROM conversations"):
        for step in json.loads(steps):
            stored |= ids(step["arguments"])
    assert len(loaded) > 100 and len(stored) > 300
    schemas = {tool.name: tool.parameters["properties"] for tool in plan.tools}
    coincidences = 0
    for item in plan.items:
        assert item.goal.facts or item.goal.tool is None, item
        properties = schemas.get(item.goal.tool or "", {})
        for key, value in item.goal.facts.items():
            if is_id_like(key, properties.get(key)):
                # never a value the planner read (its sources and exemplars) ...
                assert value not in loaded, (item.index, key, value)
                # ... and a fresh draw rarely lands on another stored order by chance
                coincidences += value in stored
        if item.goal.source_ask is not None:
            named = [value for value in stored if value in item.goal.source_ask]
            assert not any(value in item.goal.ask for value in named), item.goal
            if named and item.goal.facts:
                assert any(value in item.goal.ask for value in item.goal.facts.values())
    # by chance only: short ids (SKUs like TRS-168 draw from ~1,000 values) meet stored
    # ones now and then; 5 of 240 since the learned stance reader moved the plan's cells
    assert coincidences <= 0.03 * len(plan.items)
    same_cell = [i for i in plan.items if i.cell == plan.items[0].cell]
    assert len({i.seed for i in same_cell}) == len(same_cell)
    with_facts = [tuple(i.goal.facts.items()) for i in same_cell if i.goal.facts]
    assert len(with_facts) > len(same_cell) // 2 and len(set(with_facts)) == len(with_facts)
    assert len({i.persona for i in same_cell}) > len(same_cell) // 2


def test_same_inputs_same_plan(plan: Plan, inputs: PlanInputs, store: Store) -> None:
    again = build_plan(inputs, CAPACITY, PlanOptions(seed=1))
    assert again == plan
    cursor = store.cursor()
    try:
        reloaded = load_plan_inputs(cursor)
    finally:
        cursor.close()
    assert build_plan(reloaded, CAPACITY, PlanOptions(seed=1)).fingerprint == plan.fingerprint
    other = build_plan(inputs, CAPACITY, PlanOptions(seed=2))
    assert other.fingerprint != plan.fingerprint
    assert [i.seed for i in plan.items] == [derive_seed(1, i) for i in range(CAPACITY)]
    assert len({i.seed for i in plan.items}) == CAPACITY
    prefix = build_plan(inputs, 50, PlanOptions(seed=1))
    assert prefix.items == plan.items[:50]  # a bigger capacity only extends the plan


def test_share_moves_when_a_purpose_has_nothing(inputs: PlanInputs) -> None:
    unguarded = dataclasses.replace(
        inputs, cells=tuple(c for c in inputs.cells if c.status != "fixed"))
    result = build_plan(unguarded, 100, PlanOptions(seed=1))
    assert result.shares["guard"] == 0 and result.shares["target"] == 80
    assert any("guard share (5%) goes to targets" in note for note in result.notes)
    untargeted = dataclasses.replace(
        inputs, cells=tuple(c for c in inputs.cells if c.status == "fixed"))
    result = build_plan(untargeted, 100, PlanOptions(seed=1))
    assert (result.shares["target"], result.shares["explore"], result.shares["guard"]) == (
        0, 95, 5)
    assert any("target share (75%) explores" in note for note in result.notes)


def test_paraphrase_and_reperson(inputs: PlanInputs, plan: Plan) -> None:
    with_writer = build_plan(inputs, CAPACITY, PlanOptions(seed=1, paraphrase=True))
    kinds = [(a.mutation.kind, b.mutation.kind) for a, b in zip(
        plan.items, with_writer.items, strict=True)]
    assert ("reperson", "paraphrase") in kinds
    assert all(b == ("paraphrase" if a == "reperson" else a) for a, b in kinds)
    assert any("not paraphrased (no writer model configured)" in n for n in plan.notes)


def test_nothing_to_plan_on_an_empty_store(tmp_path: Path) -> None:
    empty = open_store(tmp_path / "empty.duckdb")
    try:
        cursor = empty.cursor()
        with pytest.raises(NothingToPlan, match="--tools"):
            load_plan_inputs(cursor)
        tool = ToolSpec("lookup_order", "Look up an order by its id.", {
            "type": "object", "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"]})
        inputs = load_plan_inputs(cursor, tools=[tool])
        cursor.close()
    finally:
        empty.close()
    result = build_plan(inputs, 30, PlanOptions(seed=3))
    assert result.shares["explore"] == 30
    assert any("no failure map" in note for note in result.notes)
    first = result.items[0].goal
    # spoken as a person would ask, naming the order, never the schema's own words
    assert "order" in first.ask and first.facts["order_id"] in first.ask
    assert "Look up an order by its id" not in first.ask


def test_supplied_tools_win(inputs: PlanInputs) -> None:
    supplied = ToolSpec("issue_refund", "Refund an order, fully or in part.", {
        "type": "object", "properties": {"order_id": {"type": "string", "pattern": "^A-"},
                                         "amount": {"type": "number"}},
        "required": ["order_id", "amount"]})
    result = build_plan(inputs, CAPACITY, PlanOptions(seed=1, tools=(supplied,)))
    by_name = {tool.name: tool for tool in result.tools}
    assert by_name["issue_refund"] is supplied and len(by_name) == 5
    assert any("supplied tool schemas are used for issue_refund" in n for n in result.notes)
    refunds = [i for i in result.items if i.goal.tool == "issue_refund"]
    assert refunds and all("amount" in i.goal.facts for i in refunds)
    explore = [i for i in refunds if i.purpose == "explore"]
    assert explore and "refund" in explore[0].goal.ask
    assert explore[0].goal.facts["order_id"] in explore[0].goal.ask


def test_bad_options_are_refused() -> None:
    with pytest.raises(BudgetError, match="--exploration-share"):
        PlanOptions(seed=0, exploration_share=1.5)
    with pytest.raises(BudgetError, match="must not pass 1"):
        PlanOptions(seed=0, exploration_share=0.8, guard_share=0.3)
