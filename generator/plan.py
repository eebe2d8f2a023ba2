"""The plan of a generation run: which situations its budget is spent on, in what order.

**Allocation.** The planner aims at the failure map's *situations*
(:mod:`processor.situations`: one to three coordinates isolating one group of failing
conversations; supersets whose excess those explain are not situations, so no budget
goes to them). ``1 - exploration_share - guard_share`` of the rollouts go to *target*
situations (status new, persistent or uncertain) in proportion to their priority;
``guard_share`` to *guard* rollouts on fixed situations (a regression check), in
proportion to theirs; ``exploration_share`` to *explore* rollouts, the rows of a pairwise
covering array over the grid of axis values (:mod:`generator.covering`). Without fixed
situations the guard share goes to the targets; without targets their share explores.
Low-support situations are kept (their priority already shrinks with ``sqrt(graded)``).
A rollout's ``cell`` is its situation (coordinates and ``situation_id``, which its
lineage records).

**Order.** A token or money budget stops a run at an unknown point, so every *prefix* of
the plan keeps the shares: each position goes to the purpose (then the cell) furthest
below its share so far (smooth weighted round robin), which keeps every count within one
rollout of its share of the prefix. Targets start with the highest priority.

**Mutations, not copies.** A target or guard rollout fixes its situation's coordinates
and takes the other axes from a member of the situation (the members the processor
stored; failing ones first, round robin), which becomes its lineage. Its goal keeps the
source's ask, with the identifiers and values of the source's tool arguments replaced by
fresh ones (:func:`generator.world.sample_facts`); no identifier the planner read from production
reaches its facts (a fresh draw may still coincide with another stored record). Its
world varies: a world-state cell becomes a record variant (missing, already acted on,
duplicate, partially completed), a tool-condition cell a scheduled :class:`Fault` on the
cell's tool; when every source has been used once, the next round rotates the free
trigger axis over the variants that keep the cell's coordinates. A failing cell with no
trigger in the world (tool condition success and world state entity_exists / unknown) is
re-personed: the same ask by another persona with another user stance (unless the cell
fixes the stance), and paraphrased when a writer model is configured.

**Exploration** rows ask from a template built off the tool's description and the facts
sampled from its schema (a repeat-visit row says it is asking again).
Tool faults are *sampled* at ``fault_rate`` of exploration rows, evenly spaced, unless
``prefer_success`` is off or ``fault_rate >= 0.5``: then tool_condition enters the
covering array and faults are *covered*. The plan's notes say which.

Every rollout's seed is a stable hash of the plan seed and its index; everything random
about it is drawn from ``random.Random(seed)``, so the same inputs and options give the
same plan, and its fingerprint (a hash of the whole plan) says so.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

import orjson

from generator.covering import CoverageSummary, coverage, pairwise_rows
from generator.errors import BudgetError, NothingToPlan
from generator.person import sample_persona, spoken_ask
from generator.plan_inputs import (
    SOURCES_PER_CELL,
    MapCell,
    PlanInputs,
    SourceConversation,
    SourceStep,
    load_plan_inputs,
    merge_tools,
)
from generator.records import Cell, Fault, Goal, Mutation, PlannedRollout, ToolSpec
from generator.world import (
    FAULT_CONDITIONS,
    WORLD_STATES,
    is_id_like,
    sample_facts,
)
from processor.axes import AXES
from processor.stance import STANCES

__all__ = ["SOURCES_PER_CELL", "TARGET_STATUSES", "MapCell", "Plan", "PlanInputs",
           "PlanOptions", "SourceConversation", "SourceStep", "build_plan", "coverage_of",
           "derive_seed", "load_plan_inputs"]

TARGET_STATUSES = ("new", "persistent", "uncertain")
"""Situation statuses a run aims at (fixed situations get guard rollouts)."""

_VARIANTS = tuple(state for state in WORLD_STATES if state not in ("entity_exists", "unknown"))
_STANCES = STANCES
_REALIZABLE: Mapping[str, tuple[str, ...]] = {
    "tool_condition": ("success", *FAULT_CONDITIONS),
    "world_state": ("entity_exists", *_VARIANTS),
    "history": ("fresh", "repeat_visit", "prior_failure", "prior_partial_action",
                "contradicts_earlier"),
    "user_stance": _STANCES,
}
_DEFAULTS = {"tool_condition": "success", "world_state": "entity_exists", "history": "fresh",
             "user_stance": "ordinary", "policy_rule": "unspecified"}
_WORLD_WORDS = {"missing": "does not exist", "already_acted_on": "was already acted on",
                "duplicate": "has a duplicate", "partially_completed": "is partially completed"}


@dataclass(frozen=True)
class PlanOptions:
    """How a run divides its budget."""

    seed: int
    """Seed of the plan and of every rollout."""
    exploration_share: float = 0.2
    """Share of rollouts over the covering array of the grid."""
    guard_share: float = 0.05
    """Share of rollouts re-checking fixed cells (to targets when there are none)."""
    fault_rate: float = 0.1
    """Share of exploration rows given a scheduled tool fault (sampled, evenly spaced)."""
    prefer_success: bool = True
    """False (or fault_rate >= 0.5): tool conditions enter the covering array instead."""
    tools: tuple[ToolSpec, ...] | None = None
    """Supplied tool schemas; they win over the store's tools of the same name."""
    paraphrase: bool = False
    """A writer model is configured: trigger-free failures are planned as ``paraphrase``."""

    def __post_init__(self) -> None:
        for flag, value in (("--exploration-share", self.exploration_share),
                            ("--guard-share", self.guard_share),
                            ("--fault-rate", self.fault_rate)):
            if not 0.0 <= value <= 1.0:
                raise BudgetError(f"{flag} must be between 0 and 1, not {value}")
        if self.exploration_share + self.guard_share > 1.0:
            raise BudgetError("--exploration-share plus --guard-share must not pass 1 "
                              f"({self.exploration_share} + {self.guard_share})")

    @property
    def faults_covered(self) -> bool:
        """Whether tool conditions are covered pairwise rather than sampled."""
        return not self.prefer_success or self.fault_rate >= 0.5


@dataclass(frozen=True)
class Plan:
    """What a run will simulate."""

    items: tuple[PlannedRollout, ...]
    """Rollouts in the order a run should start them (every prefix keeps the shares)."""
    tools: tuple[ToolSpec, ...]
    """Tools offered to the agent and answered by the world."""
    grid: Mapping[str, tuple[str, ...]]
    """Axis → values explored."""
    pairs_planned: int
    """Pairs of the grid that the planned rollouts show."""
    pairs_in_grid: int
    """Pairs the grid holds."""
    shares: Mapping[str, int]
    """Rollouts per purpose (target, explore, guard) and per cell status."""
    notes: tuple[str, ...]
    """Plain sentences for the run record: what was sampled rather than covered, where a
    share went, what could not be planned."""
    fingerprint: str
    """Stable hash of the whole plan (a resumed run checks it)."""


# --------------------------------------------------------------------------- helpers


def derive_seed(seed: int, *parts: object) -> int:
    """A stable 63-bit seed from ``seed`` and ``parts`` (never Python's salted ``hash``)."""
    text = ":".join(str(part) for part in (seed, *parts)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big") >> 1


class _RoundRobin:
    """Smooth weighted round robin: each pick goes to the choice furthest below its share."""

    def __init__(self, weights: Sequence[float]) -> None:
        total = sum(weights)
        self.shares = [weight / total for weight in weights] if total > 0 else []
        self.counts = [0] * len(self.shares)
        self.picks = 0

    def next(self) -> int:
        self.picks += 1
        deficits = [share * self.picks - count
                    for share, count in zip(self.shares, self.counts, strict=True)]
        best = max(range(len(deficits)), key=lambda i: (deficits[i], -i))
        self.counts[best] += 1
        return best


def _json_values(arguments: str | None) -> dict[str, str]:
    """Leaf values of an arguments object as text, by key (nested keys dotted)."""
    try:
        parsed = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    leaves: dict[str, str] = {}

    def walk(prefix: str, value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            leaves[prefix] = str(value)

    walk("", parsed)
    return leaves


def _key_words(key: str) -> str:
    return key.rsplit(".", 1)[-1].replace("_", " ")


def _template_ask(tool: ToolSpec | None, name: str | None, facts: Mapping[str, str]) -> str:
    """A plain ask as a person would say it, from the tool's name and the person's facts
    (:func:`generator.person.spoken_ask`; never the schema's own words)."""
    return spoken_ask(tool.name if tool is not None else name, facts)


def _sample_facts(tools: Mapping[str, ToolSpec], names: Sequence[str],
                  arguments: Mapping[str, Sequence[str]], rng: random.Random,
                  avoid: frozenset[str]) -> dict[str, str]:
    """Fresh facts for every tool in ``names``, shaped like the arguments seen; the first
    tool's value of a shared key (the order id a lookup and a refund both take) wins.

    An identifier equal to a production value in ``avoid`` (a reshaped ``A-1001`` can land
    on another real order) is drawn again."""
    facts: dict[str, str] = {}
    for name in names:
        tool = tools.get(name)
        if tool is None:
            continue
        properties = tool.parameters.get("properties") or {}
        if properties and not tool.parameters.get("required") and not any(
                is_id_like(key, schema) for key, schema in properties.items()):
            # nothing required and no identifier: the person knows what they would pass
            tool = replace(tool, parameters={**tool.parameters, "required": list(properties)})
        for _ in range(8):
            fresh = sample_facts(tool, rng, arguments.get(name, ()))
            if not any(value in avoid and is_id_like(key, properties.get(key))
                       for key, value in fresh.items()):
                break
        for key, value in fresh.items():
            facts.setdefault(key, value)
    return facts


def _rewrite_ask(ask: str, steps: Sequence[SourceStep], facts: Mapping[str, str]) -> str:
    """The source's ask with its production argument values replaced by the fresh facts
    of the same key (so the person names the world's records, never production's)."""
    replacements: dict[str, str] = {}
    for step in steps:
        for key, value in _json_values(step.arguments).items():
            fresh = facts.get(key, facts.get(key.rsplit(".", 1)[-1]))
            if fresh is not None and len(value) >= 2 and value != fresh:
                replacements.setdefault(value, fresh)
    if not replacements:
        return ask
    olds = "|".join(re.escape(old) for old in sorted(replacements, key=len, reverse=True))
    # one pass, whole tokens only: a replaced value is never replaced again
    return re.sub(rf"(?<![\w-])(?:{olds})(?![\w-])",
                  lambda match: replacements[match.group(0)], ask)


def _rotate(values: Sequence[str], start: str, turn: int) -> str:
    """The value ``turn`` places after ``start`` in ``values`` (``start`` at turn 0)."""
    if not values:
        return start
    offset = values.index(start) if start in values else -1
    return values[(offset + turn) % len(values)] if turn or offset < 0 else start


class _Builder:
    """Builds the items of one plan (state: items per cell, exploration rows used)."""

    def __init__(self, inputs: PlanInputs, options: PlanOptions, tools: tuple[ToolSpec, ...],
                 grid: Mapping[str, tuple[str, ...]]) -> None:
        self.inputs = inputs
        self.options = options
        self.tools = {tool.name: tool for tool in tools}
        self.grid = grid
        self.per_cell: Counter[Cell] = Counter()
        self.rows: list[dict[str, str]] = []
        self.explored = 0
        self.array_size = 0
        self.faults = 0
        self.fault_order = list(FAULT_CONDITIONS)
        random.Random(derive_seed(options.seed, "faults")).shuffle(  # noqa: S311 (not security)
            self.fault_order)
        self.missing_sources: set[str] = set()
        texts = [step.arguments for c in inputs.conversations.values() for step in c.steps
                 if step.arguments]
        texts += [text for examples in inputs.example_arguments.values() for text in examples]
        self.production = frozenset(v for text in texts for v in _json_values(text).values())

    # ------------------------------------------------------------------ targets and guards

    def aimed(self, index: int, seed: int, target: MapCell,
              purpose: Literal["target", "guard"]) -> PlannedRollout:
        rng = random.Random(seed)  # noqa: S311 (simulation, not security)
        cell, fixed = target.cell, target.cell.coordinates()
        turn = self.per_cell[cell]
        self.per_cell[cell] += 1
        sources = [self.inputs.conversations[c] for c in target.sources
                   if c in self.inputs.conversations]
        pool = [s for s in sources if s.failed] or sources
        source = pool[turn % len(pool)] if pool else None
        if source is None:
            self.missing_sources.add(cell.label())
        situation = {**_DEFAULTS, "tool": self._default_tool(),
                     **(source.situation if source else {}), **fixed}
        rounds = turn // len(pool) if pool else turn
        trigger = self._trigger_axis(fixed, situation)
        if trigger is not None and trigger not in fixed and rounds:
            # the cell holds the trigger: the free axis may rotate through its neutral value
            # too; a trigger inherited from the source stays a trigger of its family
            family = _REALIZABLE[trigger] if self._kind(fixed, situation, None) in (
                "tool_fault", "world_state") else _REALIZABLE[trigger][1:]
            situation[trigger] = _rotate(family, situation[trigger], rounds)
        kind = self._kind(fixed, situation, trigger)
        if kind in ("reperson", "paraphrase") and "user_stance" not in fixed:
            others = [s for s in self.grid.get("user_stance", _STANCES)
                      if s != situation["user_stance"]] or list(_STANCES)
            situation["user_stance"] = others[turn % len(others)]
        persona = sample_persona(rng, situation["user_stance"])
        goal_tool = self._goal_tool(situation, source)
        steps = source.steps if source else ()
        names = list(dict.fromkeys([s.tool for s in steps] + ([goal_tool] if goal_tool else [])))
        arguments: dict[str, list[str]] = {}
        for step in steps:
            if step.arguments:
                arguments.setdefault(step.tool, []).append(step.arguments)
        facts = _sample_facts(self.tools, names, arguments, rng, self.production)
        if source is not None and source.first_ask:
            ask = _rewrite_ask(source.first_ask, steps, facts)
        else:
            ask = _template_ask(self.tools.get(goal_tool or ""), goal_tool, facts)
        goal = Goal(ask=ask, tool=goal_tool, facts=facts,
                    source_ask=source.first_ask if source else None)
        mutation = self._mutation(kind, situation, facts, source)
        return PlannedRollout(
            index=index, purpose=purpose, cell=cell,
            cell_status=target.status, situation=MappingProxyType(situation), seed=seed,
            goal=goal, persona=persona, mutation=mutation,
            source_conversations=(source.conversation_id,) if source else ())

    def _default_tool(self) -> str:
        return next(iter(sorted(self.tools)), "no_tool")

    @staticmethod
    def _trigger_axis(fixed: Mapping[str, str], situation: Mapping[str, str]) -> str | None:
        """The axis whose value puts the failure's trigger in the world, if any."""
        if fixed.get("tool_condition") in FAULT_CONDITIONS:
            return "world_state" if "world_state" not in fixed else "tool_condition"
        if fixed.get("world_state") in _VARIANTS:
            return "tool_condition" if "tool_condition" not in fixed else "world_state"
        if situation["tool_condition"] in FAULT_CONDITIONS:
            return "tool_condition"
        if situation["world_state"] in _VARIANTS:
            return "world_state"
        return None

    def _kind(self, fixed: Mapping[str, str], situation: Mapping[str, str],
              trigger: str | None) -> str:
        if fixed.get("tool_condition") in FAULT_CONDITIONS:
            return "tool_fault"
        if fixed.get("world_state") in _VARIANTS:
            return "world_state"
        if trigger is not None:
            return "tool_fault" if situation["tool_condition"] in FAULT_CONDITIONS \
                else "world_state"
        return "paraphrase" if self.options.paraphrase else "reperson"

    def _goal_tool(self, situation: Mapping[str, str],
                   source: SourceConversation | None) -> str | None:
        if situation["tool"] in self.tools:
            return situation["tool"]
        if situation["tool"] == "no_tool":
            return None
        steps = source.steps if source else ()
        return steps[-1].tool if steps else situation["tool"]

    def _mutation(self, kind: str, situation: Mapping[str, str], facts: Mapping[str, str],
                  source: SourceConversation | None) -> Mutation:
        world_state = situation["world_state"] if situation["world_state"] in WORLD_STATES \
            else "entity_exists"
        faults: tuple[Fault, ...] = ()
        condition = situation["tool_condition"]
        tool = situation["tool"] if situation["tool"] in self.tools else "*"
        if condition in FAULT_CONDITIONS:
            faults = (Fault(tool=tool, condition=condition),)
        subject = next(iter(facts.items()), None)
        about = f"{_key_words(subject[0])} {subject[1]}" if subject else "the record"
        origin = source.conversation_id if source else "no stored conversation"
        details = {
            "tool_fault": f"{condition} on {tool} (call 1)",
            "world_state": f"{about} {_WORLD_WORDS.get(world_state, 'as in production')}",
            "reperson": f"the ask of {origin} by another person, {situation['user_stance']}",
            "paraphrase": f"the ask of {origin} paraphrased, by another person, "
                          f"{situation['user_stance']}",
        }
        detail = details[kind]
        if kind == "tool_fault" and world_state in _VARIANTS:
            detail += f"; {about} {_WORLD_WORDS[world_state]}"
        elif kind == "world_state" and faults:
            detail += f"; {condition} on {tool}"
        return Mutation(kind=kind, detail=detail, world_state=world_state, faults=faults)

    # ------------------------------------------------------------------ exploration

    def explore(self, index: int, seed: int) -> PlannedRollout:
        rng = random.Random(seed)  # noqa: S311 (simulation, not security)
        j = self.explored
        self.explored += 1
        while j >= len(self.rows):  # past the array: another array, values paired anew
            self.rows += pairwise_rows(
                self.grid, seed=derive_seed(self.options.seed, "explore", len(self.rows)))
            self.array_size = self.array_size or len(self.rows)
        row = dict(self.rows[j])
        tool_name = row["tool"]
        condition = row.get("tool_condition", "success")
        if not self.options.faults_covered:
            rate = self.options.fault_rate
            if int((j + 1) * rate) > int(j * rate):  # evenly spaced: every prefix keeps it
                condition = self.fault_order[self.faults % len(self.fault_order)]
                self.faults += 1
        situation = {**_DEFAULTS, **row, "tool_condition": condition}
        persona = sample_persona(rng, situation["user_stance"])
        tool = self.tools.get(tool_name)
        facts = _sample_facts(self.tools, [tool_name],
                              {tool_name: self.inputs.example_arguments.get(tool_name, ())}, rng,
                              self.production)
        ask = _template_ask(tool, tool_name, facts)
        if situation["history"] == "repeat_visit":  # what the processor reads as a return
            ask = "I'm asking again about this. " + ask
        goal = Goal(ask=ask, tool=tool_name, facts=facts)
        faults = (Fault(tool=tool_name, condition=condition),) \
            if condition in FAULT_CONDITIONS else ()
        detail = f"covering-array row {j + 1}" + (f"; {condition} on {tool_name}" if faults
                                                  else "")
        world_state = situation["world_state"] if situation["world_state"] in WORLD_STATES \
            else "entity_exists"
        return PlannedRollout(
            index=index, purpose="explore", cell=None, cell_status=None,
            situation=MappingProxyType(situation), seed=seed, goal=goal, persona=persona,
            mutation=Mutation(kind="explore", detail=detail, world_state=world_state,
                              faults=faults))


# --------------------------------------------------------------------------- the plan


def _grid(inputs: PlanInputs, tools: Sequence[ToolSpec], options: PlanOptions,
          notes: list[str]) -> dict[str, tuple[str, ...]]:
    """Axis → values explored: what was seen that a simulated world can show."""
    grid: dict[str, tuple[str, ...]] = {}
    names = tuple(tool.name for tool in tools)
    seen_tools = inputs.axis_values.get("tool", ())
    left_out = [value for value in seen_tools if value not in names]
    if left_out:
        notes.append(f"tool values {', '.join(left_out)} are not explored (no single tool "
                     "with a schema to aim at); targets still aim at their cells")
    for axis in AXES:
        if axis == "tool":
            values = names
        elif axis == "policy_rule":
            values = inputs.axis_values.get(axis, ()) or ("unspecified",)
        else:
            realizable = _REALIZABLE[axis]
            values = tuple(v for v in inputs.axis_values.get(axis, ()) if v in realizable) \
                or realizable
            if axis == "tool_condition":
                values = realizable if options.faults_covered else ("success",)
        if values:
            grid[axis] = tuple(values)
    return grid


def _allocation(inputs: PlanInputs, options: PlanOptions, has_tools: bool,
                notes: list[str]) -> tuple[list[MapCell], list[MapCell], dict[str, float]]:
    """Target cells, guard cells and the share of each purpose, moved where they can go."""
    targets = [c for c in inputs.cells if c.status in TARGET_STATUSES and c.priority > 0]
    guards = [c for c in inputs.cells if c.status == "fixed"]
    shares = {"target": 1.0 - options.exploration_share - options.guard_share,
              "explore": options.exploration_share, "guard": options.guard_share}
    if inputs.map_cells == 0:
        notes.append("the store holds no failure map: the whole budget explores the grid "
                     "of the tools")
    if not guards and shares["guard"] > 0:
        if inputs.map_cells:
            notes.append(f"no fixed situations in the failure map: the guard share "
                         f"({shares['guard']:.0%}) goes to targets")
        shares["target"] += shares["guard"]
        shares["guard"] = 0.0
    if not targets and shares["target"] > 0:
        if inputs.map_cells:
            notes.append("no new, persistent or uncertain situations in the failure map: the "
                         f"target share ({shares['target']:.0%}) explores the grid")
        shares["explore"] += shares["target"]
        shares["target"] = 0.0
    if not has_tools and shares["explore"] > 0:
        to = "target" if targets else "guard"
        notes.append(f"no tool schemas to explore with: the exploration share "
                     f"({shares['explore']:.0%}) goes to {to}s")
        shares[to] += shares["explore"]
        shares["explore"] = 0.0
    if sum(shares.values()) <= 0 or (not targets and not guards and not has_tools):
        raise NothingToPlan("the failure map has no failing or fixed situations and there are "
                            "no tool schemas to explore: supply them with --tools FILE")
    return targets, guards, shares


def _fingerprint(items: Sequence[PlannedRollout], tools: Sequence[ToolSpec],
                 grid: Mapping[str, tuple[str, ...]]) -> str:
    def plain(value: object) -> object:
        if isinstance(value, Mapping):
            return dict(value)
        raise TypeError(f"cannot fingerprint {type(value).__name__}")

    body = orjson.dumps({"items": list(items), "tools": list(tools), "grid": dict(grid)},
                        default=plain, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(body).hexdigest()


def build_plan(inputs: PlanInputs, capacity: int, options: PlanOptions) -> Plan:
    """Plan ``capacity`` rollouts over ``inputs`` (see the module docstring).

    Deterministic: the same inputs, capacity and options give the same plan. Raises
    :class:`NothingToPlan` when there is neither a situation to aim at nor a tool to
    explore."""
    if capacity < 0:
        raise ValueError(f"capacity must be >= 0, not {capacity}")
    notes: list[str] = []
    tools, supplied = merge_tools(inputs.tools, options.tools)
    supplied |= set(inputs.supplied_tools)
    if supplied:
        notes.append(f"supplied tool schemas are used for {', '.join(sorted(supplied))}")
    grid = _grid(inputs, tools, options, notes)
    targets, guards, shares = _allocation(inputs, options, bool(tools), notes)
    purposes = ("target", "explore", "guard")
    by_purpose = _RoundRobin([shares[p] for p in purposes])
    by_target = _RoundRobin([c.priority for c in targets])
    by_guard = _RoundRobin([c.priority for c in guards] if any(c.priority for c in guards)
                           else [1.0] * len(guards))
    builder = _Builder(inputs, options, tools, grid)
    items: list[PlannedRollout] = []
    for index in range(capacity):
        purpose = purposes[by_purpose.next()]
        seed = derive_seed(options.seed, index)
        if purpose == "explore":
            items.append(builder.explore(index, seed))
        elif purpose == "target":
            items.append(builder.aimed(index, seed, targets[by_target.next()], "target"))
        else:
            items.append(builder.aimed(index, seed, guards[by_guard.next()], "guard"))
    counts: Counter[str] = Counter({p: 0 for p in purposes})
    counts.update(item.purpose for item in items)
    counts.update(item.cell_status for item in items if item.cell_status)
    planned = coverage_of(items, grid)
    _explain(notes, builder, items, options, planned, targets, guards, tools)
    return Plan(items=tuple(items), tools=tools, grid=MappingProxyType(grid),
                pairs_planned=planned.covered, pairs_in_grid=planned.planned,
                shares=MappingProxyType(dict(counts)), notes=tuple(notes),
                fingerprint=_fingerprint(items, tools, grid))


def _explain(notes: list[str], builder: _Builder, items: Sequence[PlannedRollout],
             options: PlanOptions, planned: CoverageSummary, targets: Sequence[MapCell],
             guards: Sequence[MapCell], tools: Sequence[ToolSpec]) -> None:
    """The plan's notes: where the rollouts went and what was sampled, not covered."""
    count = Counter(item.purpose for item in items)
    notes.append(f"{len(items)} rollouts planned: {count['target']} on {len(targets)} target "
                 f"situations, {count['guard']} guarding {len(guards)} fixed situations, "
                 f"{count['explore']} exploring")
    if count["explore"]:
        first = builder.array_size
        whole = f"the whole covering array ({first} rows)" if builder.explored >= first else \
            f"{builder.explored} of the {first} rows of the covering array"
        notes.append(f"exploration runs {whole}; all planned rollouts show "
                     f"{planned.covered} of the grid's {planned.planned} pairs "
                     f"({planned.fraction:.0%})")
        if options.faults_covered:
            notes.append(f"tool conditions are covered pairwise in exploration "
                         f"({len(builder.grid['tool_condition'])} values, faults included)")
        else:
            notes.append(f"tool faults are sampled at {options.fault_rate:.0%} of exploration "
                         f"rows ({builder.faults} rows), not covered; raise --fault-rate to "
                         "0.5 or pass --no-prefer-success to cover them")
    repersoned = sum(item.mutation.kind in ("reperson", "paraphrase") for item in items)
    if repersoned:
        how = ("and paraphrased by the writer model" if options.paraphrase else
               "not paraphrased (no writer model configured)")
        notes.append(f"{repersoned} rollouts aim at failures with no trigger in the world: "
                     f"the source's ask by another persona and user stance, {how}")
    if builder.missing_sources:
        notes.append("no stored conversation for " + ", ".join(sorted(builder.missing_sources))
                     + ": their rollouts use a template ask and default axis values")
    names = {tool.name for tool in tools}
    unknown = sorted({item.goal.tool for item in items if item.goal.tool
                      and item.goal.tool not in names})
    if unknown:
        notes.append(f"no schema for {', '.join(unknown)}: the world answers calls to them "
                     "as unknown tools; supply their schemas with --tools FILE")


def coverage_of(plan_items_done: Iterable[PlannedRollout],
                grid: Mapping[str, Sequence[str]]) -> CoverageSummary:
    """How many pairs of ``grid`` the given rollouts' situations show."""
    return coverage(grid, [item.situation for item in plan_items_done])

