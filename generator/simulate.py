"""One rollout: the simulated person, the agent under test and the simulated world talk.

The loop, for a :class:`~generator.records.PlannedRollout`::

    person opens with the goal's ask (in persona)
    repeat for at most ``max_turns`` person turns:
        the agent answers; each tool call it makes goes to the world and the world's
        answer comes back as a tool message; at most ``max_tool_rounds`` agent calls per
        person turn (more is a call loop)
        the person reads the reply: done (goal met), leaves (patience gone) or writes again

It ends with ``ended_by`` one of ``user_done``, ``user_left``, ``max_turns``, ``call_loop``,
``agent_error`` (a backend failed for good, after its retries) or ``budget`` (the next
model call could not be paid for without overspending). Every model call is paid for
before it is made: the :class:`~generator.budget.BudgetLedger` reserves a conservative
estimate (input tokens estimated from the text, plus ``max_tokens``) and settles the
actual figure afterwards, so a run never spends past its budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from generator.budget import BudgetLedger, Reservation, estimate_tokens
from generator.errors import BackendError
from generator.person import PersonTurn, PersonWriter
from generator.prices import PriceTable
from generator.records import (
    ChatBackend,
    Message,
    ModelRequest,
    PlannedRollout,
    TokenUsage,
    ToolSpec,
    ToolWorld,
    Transcript,
    WorldEvent,
)
from generator.world import World

_SETTLE_POLL_S = 0.02

DEFAULT_SYSTEM_PROMPT = (
    "You are a customer support agent. Use the tools to look things up and to act; "
    "never claim an action you did not take, never invent an identifier, and tell the "
    "customer plainly when something failed."
)
"""The agent's system prompt when the run is given none (the run record says so)."""


@dataclass(frozen=True)
class Limits:
    """How long a simulated conversation may go on."""

    max_turns: int = 5
    """Most person turns (the opening included)."""
    max_tool_rounds: int = 8
    """Most agent calls within one person turn; beyond it the rollout ends as a call loop."""
    max_tokens: int = 1024
    """Most output tokens per model call."""
    temperature: float | None = None
    """Sampling temperature of the agent (None: the backend's default)."""
    logprobs: bool = False
    """Ask the agent's backend for log probabilities."""


class Meter:
    """Spend of one rollout, paid through the run's ledger."""

    def __init__(self, ledger: BudgetLedger, prices: PriceTable) -> None:
        self.ledger = ledger
        self.prices = prices
        self.usage = TokenUsage()
        self.cost = 0.0
        self.calls = 0

    async def reserve(self, backend_model: str, free: bool, messages: Sequence[Message],
                      tools: Sequence[ToolSpec], max_tokens: int,
                      extra_tokens: int = 0) -> Reservation | None:
        """Reserve the worst case of one call; None when the budget cannot cover it.

        When the call does not fit only because other calls in flight hold the rest of
        the budget, wait for them to settle (they usually use less than they held);
        give up once nothing is held and it still does not fit. The input is estimated
        from the text only when the budget counts tokens or money (a rollouts budget
        needs no estimate, and offline backends cost nothing)."""
        kind = self.ledger.budget.kind
        if kind == "rollouts" or (kind == "usd" and free):
            return self.ledger.reserve(0.0)
        worst = TokenUsage(text_tokens(messages, tools) + extra_tokens, max_tokens)
        amount = (self.prices.cost(backend_model, worst) if kind == "usd"
                  else float(worst.total))
        while True:
            reservation = self.ledger.reserve(amount)
            if reservation is not None or self.ledger.reserved == 0:
                return reservation
            await asyncio.sleep(_SETTLE_POLL_S)

    def settle(self, reservation: Reservation, usage: TokenUsage, cost: float) -> None:
        """Record what the call actually used."""
        kind = self.ledger.budget.kind
        actual = cost if kind == "usd" else float(usage.total) if kind == "tokens" else 0.0
        self.ledger.settle(reservation, actual, tokens=usage.total, usd=cost)
        self.usage = self.usage + usage
        self.cost += cost
        self.calls += 1


def is_free(backend_spec: str) -> bool:
    """Offline, template and in-process backends cost nothing."""
    return backend_spec.split(":", 1)[0] in {"offline", "template", "python"}


def text_tokens(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> int:
    text = sum(estimate_tokens(m.content or "") + 4 for m in messages)
    calls = sum(estimate_tokens(c.arguments) + 8 for m in messages for c in m.tool_calls)
    schemas = sum(estimate_tokens(str(t.parameters)) + estimate_tokens(t.description)
                  for t in tools)
    return text + calls + schemas


def simulated_world(plan: PlannedRollout, tools: Sequence[ToolSpec]) -> ToolWorld:
    """tracemill's simulated world for one planned rollout (its seed, facts, world state
    and scheduled faults)."""
    return World.for_plan(plan, tools)


async def simulate(
    plan: PlannedRollout,
    *,
    tools: Sequence[ToolSpec],
    agent: ChatBackend,
    person: PersonWriter,
    ledger: BudgetLedger,
    prices: PriceTable,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    limits: Limits = Limits(),
    world: ToolWorld | None = None,
    blocking_world: bool = False,
) -> Transcript:
    """Simulate one planned rollout to its end; never raises for an agent failure.

    ``world`` answers the tool calls (None: :func:`simulated_world`); a
    ``blocking_world`` (a team's own system) is called in a worker thread. The
    transcript records whether the world says the plan's mutation fired."""
    if world is None:
        world = simulated_world(plan, tools)
    meter = Meter(ledger, prices)
    session = person.start(plan)
    messages: list[Message] = [Message(role="system", content=system_prompt)]
    events: list[WorldEvent] = []
    planted: list[str] = []
    finish_reasons: list[str] = []
    logprobs: list[tuple[float, ...] | None] = []
    retries = 0
    tools = tuple(tools)
    agent_free = is_free(agent.spec)
    person_free = is_free(person.spec)

    def done(ended_by: str, error: str | None = None) -> Transcript:
        return Transcript(messages=tuple(messages), events=tuple(events), ended_by=ended_by,
                          usage=meter.usage, cost_usd=meter.cost, model_calls=meter.calls,
                          planted=tuple(planted), error=error,
                          finish_reasons=tuple(finish_reasons),
                          logprobs=tuple(logprobs) if limits.logprobs else (),
                          retries=retries, mutation_fired=world.mutation_fired)

    async def person_says(first: bool) -> PersonTurn | None:
        reservation = await meter.reserve(person.spec, person_free, messages, (),
                                    limits.max_tokens)
        if reservation is None:
            return None
        try:
            turn = await (session.opening() if first else session.reply(tuple(messages)))
        except BaseException:
            ledger.settle(reservation, 0.0)  # a failed call holds nothing
            raise
        meter.settle(reservation, turn.usage, turn.cost_usd)
        return turn

    try:
        opening = await person_says(first=True)
    except BackendError as exc:
        return done("agent_error", f"person: {exc}")
    if opening is None:
        return done("budget")
    messages.append(Message(role="user", content=opening.text))

    for turn_number in range(1, limits.max_turns + 1):
        for round_ in range(limits.max_tool_rounds):
            reservation = await meter.reserve(agent.model, agent_free, messages, tools,
                                        limits.max_tokens)
            if reservation is None:
                return done("budget")
            request = ModelRequest(
                messages=tuple(messages), tools=tools, max_tokens=limits.max_tokens,
                temperature=limits.temperature, seed=plan.seed + len(messages),
                logprobs=limits.logprobs)
            try:
                reply = await agent.complete(request)
            except BackendError as exc:
                ledger.settle(reservation, 0.0)
                return done("agent_error", str(exc))
            meter.settle(reservation, reply.usage, reply.cost_usd)
            messages.append(reply.message)
            planted.extend(reply.planted)
            finish_reasons.append(reply.finish_reason)
            logprobs.append(reply.logprobs)
            retries += reply.retries
            if not reply.message.tool_calls:
                break
            for call in reply.message.tool_calls:
                event = (await asyncio.to_thread(world.call, call) if blocking_world
                         else world.call(call))
                events.append(event)
                messages.append(Message(role="tool", content=event.result,
                                        tool_call_id=call.id, name=call.name))
            if round_ == limits.max_tool_rounds - 1:
                return done("call_loop")
        try:
            turn = await person_says(first=False)
        except BackendError as exc:
            return done("agent_error", f"person: {exc}")
        if turn is None:
            return done("budget")
        if not (turn.done or turn.leaves) and turn_number == limits.max_turns:
            break  # a last message nobody would answer is not kept
        if turn.text:
            messages.append(Message(role="user", content=turn.text))
        if turn.done:
            return done("user_done")
        if turn.leaves:
            return done("user_left")
    return done("max_turns")


__all__ = ["DEFAULT_SYSTEM_PROMPT", "Limits", "Meter", "is_free", "simulate",
           "simulated_world", "text_tokens"]

