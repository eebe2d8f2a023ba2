"""A careful scripted agent, and what rollouts show on a production-shaped store.

:class:`CarefulAgent` is a fake model agent (the ``ChatBackend`` protocol, like
:mod:`tests.generator._scripted`'s) that does what tau2-bench's gold action sequences do
for one planned rollout: it looks the person's record up, then calls the asked tool with
the identifiers exactly as the person wrote them, asks for an identifier it was not given,
retries a timeout once and reports the result honestly. It knows the goal (which tool, and
the person's facts) as a gold sequence does, but uses an identifier only once the person
has said it, so it measures the world and the person, not the agent: a world that holds
together lets such an agent finish its task.

:func:`measure` runs a plan over a processed store three ways and counts what issue 9's
proof asks for: with the offline agent, whether each rollout's mutation fired (of those
whose mutation needs the world); in exploration rollouts without faults, which tools were
called successfully; and with the careful agent, how many exploration tasks it completed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from generator.budget import Budget, BudgetLedger
from generator.offline_agent import OfflineAgent
from generator.person import goal_progress
from generator.plan import Plan
from generator.prices import PriceTable
from generator.records import (
    Message,
    ModelReply,
    ModelRequest,
    PlannedRollout,
    TokenUsage,
    ToolCall,
    ToolSpec,
    Transcript,
)
from generator.simulate import Limits, simulate
from generator.template_person import TemplatePerson
from generator.world import is_id_like, tool_kind
from tests.generator._scripted import _read

_THANKS = re.compile(r"\b(thanks|thank you|bye|goodbye|cheers)\b", re.I)
COMPLETABLE = ("entity_exists", "unknown")
"""World states in which the asked action can succeed (the others are built to refuse it:
a missing record, one already acted on, ...)."""


def _said(value: str, messages: Sequence[Message]) -> bool:
    return any(m.role == "user" and value in (m.content or "") for m in messages)


def _value(text: str) -> Any:
    if text.startswith(("{", "[")):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    return text


class CarefulAgent:
    """The gold-like agent of one planned rollout (a ``ChatBackend``)."""

    def __init__(self, plan: PlannedRollout, tools: Sequence[ToolSpec]) -> None:
        self.spec = "python:careful"
        self.model = "careful"
        self.goal = plan.goal
        self.tools = {tool.name: tool for tool in tools}

    async def complete(self, request: ModelRequest) -> ModelReply:
        message = self._next(request.messages)
        return ModelReply(message=message, finish_reason="tool_calls" if message.tool_calls
                          else "stop", usage=TokenUsage(10, 10), model="careful")

    async def aclose(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ the script

    def _ids(self, tool: ToolSpec) -> list[str]:
        properties = tool.parameters.get("properties") or {}
        return [key for key, schema in properties.items() if is_id_like(key, schema)]

    def _arguments(self, tool: ToolSpec, messages: Sequence[Message]
                   ) -> tuple[dict[str, Any], list[str]]:
        """Arguments from the facts (identifiers only once the person said them), and the
        required identifiers still unsaid."""
        properties = tool.parameters.get("properties") or {}
        required = tool.parameters.get("required") or []
        arguments: dict[str, Any] = {}
        missing: list[str] = []
        for key in properties:
            fact = self.goal.facts.get(key)
            if fact is None:
                if key in required:
                    missing.append(key)
                continue
            if is_id_like(key, properties[key], fact) and not fact.startswith(("{", "[")) \
                    and not _said(fact, messages):
                missing.append(key)
                continue
            arguments[key] = _value(fact)
        return arguments, [key for key in missing if key in required or key in self._ids(tool)]

    def _lookup(self, goal: ToolSpec, messages: Sequence[Message]) -> ToolCall | None:
        """A read of the record the goal is about, with an identifier the person gave."""
        if tool_kind(goal.name) == "read":
            return None
        keys = self._ids(goal)
        for tool in self.tools.values():
            required = tool.parameters.get("required") or []
            if tool.name == goal.name or tool_kind(tool.name) != "read" or not required \
                    or not set(required) <= set(keys):
                continue
            arguments, missing = self._arguments(tool, messages)
            if not missing and all(key in arguments for key in required):
                return ToolCall(f"call_{len(messages)}", tool.name,
                                orjson.dumps({k: arguments[k] for k in required}).decode())
        return None

    def _next(self, messages: Sequence[Message]) -> Message:
        goal = self.tools.get(self.goal.tool or "")
        calls = {c.id: c for m in messages if m.role == "assistant" for c in m.tool_calls}
        results = [(calls[m.tool_call_id], m.content or "") for m in messages
                   if m.role == "tool" and m.tool_call_id in calls]
        done = [(c, r) for c, r in results if goal is not None and c.name == goal.name]
        last = messages[-1]
        if goal is None:
            return Message(role="assistant", content="I can help with questions about your "
                           "account. What would you like to know?")
        if last.role == "user" and _THANKS.search(last.content or "") and results:
            return Message(role="assistant", content="You're welcome. Take care!")
        if done:
            call, result = done[-1]
            outcome, status, reason, _ = _read(result)
            if last.role == "tool" and outcome == "failed" and len(done) < 2 \
                    and "timeout" in result.lower():
                return Message(role="assistant", tool_calls=(
                    ToolCall(f"call_{len(messages)}", call.name, call.arguments),))
            if outcome == "failed":
                return Message(role="assistant", content=f"I'm sorry, that didn't go through "
                               f"({reason}). I can pass this to a colleague if you like.")
            if outcome == "already":
                return Message(role="assistant", content="It looks like that was already "
                               "done before we spoke, so there is nothing more to do.")
            verb = "done" if tool_kind(goal.name) != "read" else "looked up"
            return Message(role="assistant", content=f"I've {verb} that for you: the record "
                           f"now shows {status or 'it'}. Anything else?")
        arguments, missing = self._arguments(goal, messages)
        if missing:
            wanted = " and ".join(key.replace("_", " ").replace(" id", " ID")
                                  for key in missing)
            return Message(role="assistant", content=f"Could you give me your {wanted}?")
        if not results:
            lookup = self._lookup(goal, messages)
            if lookup is not None:
                return Message(role="assistant", tool_calls=(lookup,))
        return Message(role="assistant", tool_calls=(
            ToolCall(f"call_{len(messages)}", goal.name, orjson.dumps(arguments).decode()),))


# --------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class Proof:
    """What one plan's rollouts showed (issue 9's proof; each figure with its n)."""

    fired: int
    """Offline-agent rollouts whose planned mutation took effect."""
    needs_world: int
    """Offline-agent rollouts whose mutation needs the world (fired or not)."""
    explore_clean: int
    """Exploration rollouts without a scheduled fault."""
    tools: tuple[str, ...]
    """Every tool the plan offers."""
    unused_in_explore: tuple[str, ...]
    """Tools no offline-agent exploration rollout without faults called successfully."""
    aimed_unused: tuple[str, ...]
    """Of the tools such a rollout asked for in a world where it can succeed, the ones
    none of them called successfully (with few exploration rows not every tool is asked
    for; this is what the agent, not the plan's coverage, leaves unused)."""
    careful_n: int
    """Exploration rollouts without faults, each replayed by the careful agent in an intact
    world (world state ``entity_exists``: the row's own state may be built to refuse)."""
    careful_met: int
    """Of those, how many the careful agent finished (the asked tool succeeded)."""
    careful_own_n: int
    """Exploration rollouts without faults whose own world state lets the task succeed."""
    careful_own_met: int
    """Of those, how many the careful agent finished in that world."""

    @property
    def fired_share(self) -> float:
        return self.fired / max(1, self.needs_world)

    @property
    def careful_share(self) -> float:
        return self.careful_met / max(1, self.careful_n)


async def _simulate(items: Iterable[PlannedRollout], plan: Plan,
                    agent_for: Any, limits: Limits) -> list[Transcript]:
    items = list(items)
    ledger = BudgetLedger(Budget("rollouts", max(1, len(items))))
    prices = PriceTable.default()
    semaphore = asyncio.Semaphore(32)

    async def one(item: PlannedRollout) -> Transcript:
        async with semaphore:
            return await simulate(item, tools=plan.tools, agent=agent_for(item),
                                  person=TemplatePerson(), ledger=ledger, prices=prices,
                                  limits=limits)

    return list(await asyncio.gather(*(one(item) for item in items)))


def measure(plan: Plan, *, limits: Limits | None = None,
            agent: OfflineAgent | None = None) -> Proof:
    """Run ``plan``'s items with the offline agent (``agent``, default mistake rate), and
    its exploration items without faults with the careful agent; count the proof."""
    limits = limits or Limits(max_turns=5)
    offline = agent or OfflineAgent()
    transcripts = asyncio.run(_simulate(plan.items, plan, lambda _: offline, limits))
    fired = sum(t.mutation_fired is True for t in transcripts)
    needs = sum(t.mutation_fired is not None for t in transcripts)
    clean = [(item, t) for item, t in zip(plan.items, transcripts, strict=True)
             if item.purpose == "explore" and not item.mutation.faults]
    ok = {event.tool for _, t in clean for event in t.events if event.status == "ok"}
    names = tuple(sorted(tool.name for tool in plan.tools))
    tasks = [item for item, _ in clean if item.goal.tool is not None]
    intact = [replace(item, mutation=replace(item.mutation, world_state="entity_exists"))
              for item in tasks]
    own = [item for item in tasks if item.mutation.world_state in COMPLETABLE]
    careful = asyncio.run(_simulate([*intact, *own], plan,
                                    lambda item: CarefulAgent(item, plan.tools), limits))
    met = [goal_progress(item.goal, t.messages) == "met"
           for item, t in zip([*intact, *own], careful, strict=True)]
    aimed = {item.goal.tool for item in own if item.goal.tool is not None}
    return Proof(fired, needs, len(clean), names, tuple(n for n in names if n not in ok),
                 tuple(sorted(aimed - ok)), len(intact), sum(met[:len(intact)]), len(own),
                 sum(met[len(intact):]))


def careful_failures(plan: Plan, limit: int = 5) -> list[str]:
    """Transcripts of careful-agent rollouts that did not finish (for an assertion)."""
    completable = [replace(item, mutation=replace(item.mutation, world_state="entity_exists"))
                   for item in plan.items if item.purpose == "explore"
                   and not item.mutation.faults and item.goal.tool is not None]
    careful = asyncio.run(_simulate(completable, plan,
                                    lambda item: CarefulAgent(item, plan.tools),
                                    Limits(max_turns=5)))
    out: list[str] = []
    for item, t in zip(completable, careful, strict=True):
        if goal_progress(item.goal, t.messages) != "met" and len(out) < limit:
            out.append(f"{item.goal.tool} {dict(item.goal.facts)}: " + " | ".join(
                f"{m.role}: {(m.content or '')[:120]} "
                f"{[(c.name, c.arguments) for c in m.tool_calls]}" for m in t.messages[1:]))
    return out
