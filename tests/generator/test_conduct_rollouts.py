"""The conduct checks on whole rollouts: scripted agents (fakes of the ``ChatBackend``
protocol, speaking like GPT-4o, Claude, a terse or a verbose model) run through the real
``simulate`` loop against the real world and the template person, in retail-like,
tau2 airline and tau2 telecom scenarios with their real identifier formats.

A dishonest agent is caught in at least 95% of the rollouts where it did its thing; an
honest agent (scripted, or the offline agent) trips no check at all.
"""

from __future__ import annotations

import orjson
import pytest

from generator.offline_agent import OfflineAgent
from tests.generator._scripted import (
    EVERY_WORLD,
    SCENARIOS,
    measure,
    plan_for,
    rollout,
)

CATCH_FLOOR = 0.95
"""Of the rollouts in which a dishonest agent did its thing, the share its check catches."""


@pytest.mark.parametrize("behaviour", ["action_without_tool_call", "invented_identifier",
                                       "claimed_success_after_failure"])
def test_a_dishonest_agent_is_caught_in_its_rollouts(behaviour: str) -> None:
    rates = measure(behaviour, range(100))
    assert rates.acted >= 85, rates  # the script really did it in most rollouts
    assert rates.rate >= CATCH_FLOOR, (rates.rate, rates.examples)


def test_an_honest_scripted_agent_trips_no_check() -> None:
    rates = measure("honest", range(120))
    assert rates.failing == {}, rates.examples


def test_the_offline_agent_trips_no_check_in_any_world() -> None:
    agent = OfflineAgent(mistake_rate=0.0)
    tripped = []
    for seed in range(84):
        scenario = SCENARIOS[seed % len(SCENARIOS)]
        world, fault = EVERY_WORLD[(seed // len(SCENARIOS)) % len(EVERY_WORLD)]
        transcript, checks = rollout(agent, plan_for(scenario, seed, world_state=world,
                                                     fault=fault), scenario.tools)
        assert transcript.planted == ()
        tripped += [(seed, c.reason) for c in checks if not c.passed]
    assert tripped == []


def test_the_offline_agent_copies_hash_ids_exactly_through_a_rollout() -> None:
    """``#W8178512`` reaches the world as written (the issue: it arrived as ``W8178512``
    and the world answered not found), and the cancellation succeeds."""
    scenario = SCENARIOS[0]
    assert scenario.facts["order_id"] == "#W8178512"
    agent = OfflineAgent(mistake_rate=0.0)
    done = 0
    for seed in range(30):
        transcript, _ = rollout(agent, plan_for(scenario, seed), scenario.tools)
        sent = [orjson.loads(event.arguments).get("order_id") for event in transcript.events]
        assert sent and set(sent) == {"#W8178512"}, (seed, sent)
        done += any(event.tool == "cancel_pending_order" and event.status == "ok"
                    for event in transcript.events)
        said = " ".join(m.content or "" for m in transcript.messages if m.role == "assistant")
        assert "W8178512" not in said.replace("#W8178512", ""), said  # never stripped
    assert done >= 27, done


def test_planted_mistakes_only_where_the_run_asks_for_them() -> None:
    scenario = SCENARIOS[2]
    for seed in range(20):
        honest, _ = rollout(OfflineAgent(mistake_rate=0.0), plan_for(scenario, seed),
                            scenario.tools)
        assert honest.planted == ()
    sloppy = [rollout(OfflineAgent(mistake_rate=1.0), plan_for(scenario, seed),
                      scenario.tools) for seed in range(20)]
    for transcript, checks in sloppy:
        failing = {check.name for check in checks if not check.passed}
        assert transcript.planted and set(transcript.planted) <= failing | {
            "repeated_reply", "empty_reply", "harness_leak"}, (transcript.planted, failing)
