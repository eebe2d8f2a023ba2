# mypy: ignore-errors
"""The bridge to tracemill's simulated world and conduct checks (no verifiers types here).

A task's world is its plan item (seed, the person's facts, world state, faults) and its
run's tools: :class:`generator.world.World` answers the same calls the same way from them,
so the tool server and the rewards both *replay* the agent's calls through a fresh world.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from generator.checks import conduct_checks
from generator.graders import combine
from generator.plan_codec import plan_from_json
from generator.records import (
    CheckResult,
    Grade,
    Message,
    PlannedRollout,
    TokenUsage,
    ToolCall,
    ToolSpec,
    Transcript,
    WorldEvent,
)
from generator.world import World

Effect = tuple[str, str, str]
"""(tool, created|updated|deleted, record id)."""
PASS_THRESHOLD = 0.5
"""What tracemill's grade passes at (conduct checks only: every check passing gives 1)."""


@functools.cache
def runs() -> dict[str, dict[str, Any]]:
    """The exported runs: their tools (tracemill's form) by run id."""
    text = resources.files(__package__).joinpath("data", "runs.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def tools_of(run_id: str) -> tuple[ToolSpec, ...]:
    """The tools run ``run_id`` offered, as tracemill's world reads them."""
    try:
        specs = runs()[run_id]["tools"]
    except KeyError:
        raise KeyError(f"run {run_id!r} is not in this export's data/runs.json") from None
    return tuple(ToolSpec(name=t["name"], description=t["description"],
                          parameters=t["parameters"], exemplars=tuple(t["exemplars"]),
                          source=t["source"]) for t in specs)


def openai_tools(run_id: str) -> list[dict[str, Any]]:
    """The run's tools as OpenAI function schemas (name, description, parameters)."""
    return [{"name": t.name, "description": t.description,
             "parameters": dict(t.parameters) or {"type": "object", "properties": {}}}
            for t in tools_of(run_id)]


def plan_item(item: dict[str, Any]) -> PlannedRollout:
    """The plan item, read back with tracemill's own plan codec."""
    plan = {"items": [item], "tools": [], "grid": {}, "pairs_planned": 0,
            "pairs_in_grid": 0, "shares": {}, "notes": [], "fingerprint": ""}
    return plan_from_json(json.dumps(plan)).items[0]


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def replay(item: dict[str, Any], run_id: str,
           calls: Iterable[tuple[str, str, Any]]) -> list[WorldEvent]:
    """The world's answers to ``calls`` ((id, tool, arguments) in order) from a fresh
    world of the task: deterministic for the world's seed and the calls before."""
    world = World.for_plan(plan_item(item), tools_of(run_id))
    return [world.call(ToolCall(id=call_id, name=name, arguments=_arguments(arguments)))
            for call_id, name, arguments in calls]


def end_state(events: Sequence[WorldEvent]) -> tuple[Effect, ...]:
    """What the calls left in the world: each record created, updated or deleted."""
    return tuple(sorted({(e.tool, e.effect, e.entity_id or "") for e in events
                         if e.effect is not None}))


def _message(message: dict[str, Any]) -> Message:
    calls = tuple(ToolCall(id=c["id"], name=c["name"], arguments=_arguments(c["arguments"]))
                  for c in message.get("tool_calls") or ())
    return Message(role=message["role"], content=message.get("content"), tool_calls=calls,
                   tool_call_id=message.get("tool_call_id"), name=message.get("name"))


def transcript(item: dict[str, Any], run_id: str,
               messages: Sequence[dict[str, Any]]) -> Transcript:
    """The conversation as tracemill's checks read it: the agent's calls are answered
    again by the task's world (the events), the tool messages keep what the agent saw."""
    parsed = [_message(m) for m in messages]
    calls = [(c.id, c.name, c.arguments) for m in parsed if m.role == "assistant"
             for c in m.tool_calls]
    return Transcript(messages=tuple(parsed), events=tuple(replay(item, run_id, calls)),
                      ended_by="user_done", usage=TokenUsage(), cost_usd=0.0,
                      model_calls=sum(1 for m in parsed if m.role == "assistant"))


def grade(item: dict[str, Any], run_id: str,
          messages: Sequence[dict[str, Any]]) -> tuple[Grade, tuple[Effect, ...]]:
    """tracemill's conduct grade of the conversation, and the end state it left."""
    plan = plan_item(item)
    seen = transcript(item, run_id, messages)
    checks: tuple[CheckResult, ...] = conduct_checks(
        plan, seen, tools_of(run_id), harness_markers=(plan.persona.aside(),))
    return combine(checks, None, pass_threshold=PASS_THRESHOLD), end_state(seen.events)
