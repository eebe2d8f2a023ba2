"""A goal the world refuses: already done, or past the point where it can be done.

The processor reads "order is already cancelled" and "order is delivered, not pending:
cannot be cancelled" alike, as the world state ``already_acted_on``: the record's state
forbids the action. The simulated person must not: when cancelling, the first means the
goal holds ("Oh, so it was already done?"), the second that it cannot be had, and a
person then asks for an alternative, pushes back or accepts, by persona. The answers
come from the simulated world (:class:`generator.world.World`), from tau2-bench's real
telecom environment, and from real APIs' refusal shapes.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from generator._person_phrases import ALREADY_DONE, BLOCKED_ACCEPT, BLOCKED_ASK, BLOCKED_ESCALATE
from generator.person import PersonTurn, goal_progress
from generator.records import (
    Goal,
    Message,
    Mutation,
    Persona,
    PlannedRollout,
    ToolCall,
    ToolSpec,
)
from generator.template_person import TemplatePerson
from generator.world import World
from processor.results import end_state, read_result
from tests.generator import test_world as worlds

Call = tuple[str, dict[str, Any], str]


def transcript(calls: Sequence[Call]) -> list[Message]:
    messages = [Message(role="user", content="Please help me with my order.")]
    for index, (tool, arguments, result) in enumerate(calls):
        call = ToolCall(f"c{index}", tool, json.dumps(arguments))
        messages += [Message(role="assistant", tool_calls=(call,)),
                     Message(role="tool", content=result, tool_call_id=call.id, name=tool)]
    return messages


def progress(tool: str | None, calls: Sequence[Call]) -> str:
    return goal_progress(Goal(ask="Help me.", tool=tool, facts={}), transcript(calls))


# --------------------------------------------------------------------------- the world


def test_the_simulated_world_refusing_a_delivered_order_is_blocked_not_done() -> None:
    """The issue's case: the world answers "The order #W… is delivered, not pending: it
    cannot be cancelled." That is no cancellation done before today."""
    world = worlds.shop(focus="exchange_delivered_order_items")
    looked = worlds.ask(world, "get_order_details", {"order_id": "#W2938475"})
    refused = worlds.ask(world, "cancel_pending_order",
                         {"order_id": "#W2938475", "reason": "no longer needed"}, "c2")
    assert refused.status == "refused" and "delivered, not pending" in refused.result
    reading = read_result(refused.result, tool="cancel_pending_order")  # the map's reading
    assert (reading.condition, reading.fault, reading.world_state) == (
        "error", "conflict", "already_acted_on")  # a state refusal, not a permission
    calls: list[Call] = [("get_order_details", {"order_id": "#W2938475"}, looked.result),
                         ("cancel_pending_order", {"order_id": "#W2938475"}, refused.result)]
    assert progress("cancel_pending_order", calls) == "blocked"
    assert progress("cancel_pending_order", calls[1:]) == "blocked"


@pytest.mark.parametrize("seed", range(4))
def test_the_simulated_world_refusing_a_repeat_is_already_done(seed: int) -> None:
    world = worlds.shop(seed=seed)
    arguments = {"order_id": "#W2938475", "reason": "ordered by mistake"}
    done = worlds.ask(world, "cancel_pending_order", arguments)
    again = worlds.ask(world, "cancel_pending_order", arguments, "c2")
    assert again.status == "refused"
    assert progress("cancel_pending_order", [("cancel_pending_order", arguments, done.result),
                                             ("cancel_pending_order", arguments, again.result)]
                    ) == "already"
    acted = worlds.make("already_acted_on", seed=seed)
    refund = worlds.ask(acted, "issue_refund", worlds.REFUND_ARGS)
    assert refund.status == "refused"
    assert progress("issue_refund", [("issue_refund", worlds.REFUND_ARGS, refund.result)]
                    ) == "already"


def test_a_world_built_from_production_already_answers_is_already_done() -> None:
    """An action whose exemplars show production's own "already" answer (the world
    answers in that shape: ``status: already_cancelled`` and a message that does not
    say "already")."""
    tools = [*worlds.TOOLS, ToolSpec(
        "cancel_order", "Cancel an order.", {
            "type": "object", "properties": {"order_id": worlds._ORDER},
            "required": ["order_id"]},
        exemplars=('{"order_id": "A-1001", "status": "cancelled"}',
                   '{"order_id": "A-1002", "status": "already_cancelled", "message": "Order '
                   'A-1002 was handled on 2025-06-03."}'))]
    world = World(tools, seed=3, world_state="already_acted_on", facts=worlds.FACTS,
                         focus="cancel_order")
    answer = worlds.ask(world, "cancel_order", {"order_id": "ORD-4821"})
    assert json.loads(answer.result)["status"] == "already_cancelled", answer.result
    assert progress("cancel_order", [("cancel_order", {"order_id": "ORD-4821"},
                                      answer.result)]) == "already"


def test_tau2_telecom_refusals_read_by_the_state_the_lookup_showed() -> None:
    """tau2's real answers: a second suspend is "Error: Line must be active to suspend"
    (no state named: the lookup showed Suspended, so the goal holds); roaming enabled
    twice says so; resuming an active line is refused with the same kind of text."""
    pytest.importorskip("tau2")  # the tau2 extra
    from tests.support import tau2

    env = tau2.environment("telecom")
    suspend = {"customer_id": "C1001", "line_id": "L1001", "reason": "travel"}
    first = tau2.call(env, "suspend_line", suspend).content
    second = tau2.call(env, "suspend_line", suspend).content
    shown = tau2.call(env, "get_details_by_id", {"id": "L1001"}).content
    assert second == "Error: Line must be active to suspend" and '"Suspended"' in shown
    assert progress("suspend_line", [("get_details_by_id", {"id": "L1001"}, shown),
                                     ("suspend_line", suspend, second)]) == "already"
    assert progress("suspend_line", [("suspend_line", suspend, first)]) == "met"
    resume = {"customer_id": "C1001", "line_id": "L1002"}
    active = tau2.call(env, "get_details_by_id", {"id": "L1002"}).content
    refused = tau2.call(env, "resume_line", resume).content
    assert refused == "Error: Line must be suspended to resume" and '"Active"' in active
    assert progress("resume_line", [("get_details_by_id", {"id": "L1002"}, active),
                                    ("resume_line", resume, refused)]) == "already"
    roaming = {"customer_id": "C1001", "line_id": "L1002"}
    tau2.call(env, "enable_roaming", roaming)
    again = tau2.call(env, "enable_roaming", roaming).content
    assert again == "Roaming was already enabled"
    assert progress("enable_roaming", [("enable_roaming", roaming, again)]) == "already"


# --------------------------------------------------------------------------- API shapes

ORDER = {"order_id": "#W7730114"}
_CANNOT = "Error: non-pending order cannot be cancelled"


@pytest.mark.parametrize(("tool", "calls", "expected"), [
    # tau2 retail-style: the refusal names no state; the lookup before it tells
    ("cancel_pending_order", [("cancel_pending_order", ORDER, _CANNOT)], "blocked"),
    ("cancel_pending_order", [
        ("get_order_details", ORDER, '{"order_id": "#W7730114", "status": "delivered"}'),
        ("cancel_pending_order", ORDER, _CANNOT)], "blocked"),
    ("cancel_pending_order", [
        ("get_order_details", ORDER, '{"order_id": "#W7730114", "status": "cancelled"}'),
        ("get_user_details", {"user_id": "u1"}, '{"user_id": "u1", "orders": ["#W7730114"]}'),
        ("cancel_pending_order", ORDER, _CANNOT)], "already"),
    ("cancel_order", [("cancel_order", ORDER,
                       "Order #W7730114 is already cancelled.")], "already"),
    ("cancel_order", [("cancel_order", ORDER, "This order has already shipped and can no "
                                              "longer be cancelled.")], "blocked"),
    # Shopify, Stripe, Zendesk, PayPal, airline
    ("cancel_order", [("cancel_order", ORDER, '{"errors": "Cannot cancel an order that has '
                                              'been fulfilled"}')], "blocked"),
    ("cancel_payment_intent", [("cancel_payment_intent", {"id": "pi_1"}, json.dumps({
        "error": {"type": "invalid_request_error", "code": "payment_intent_unexpected_state",
                  "message": "You cannot cancel this PaymentIntent because it has a status "
                             "of succeeded. Only a PaymentIntent with one of the following "
                             "statuses may be canceled: requires_payment_method, "
                             "requires_capture, requires_confirmation, requires_action, "
                             "processing."}}))], "blocked"),
    ("create_refund", [("create_refund", {"charge": "ch_1"}, json.dumps({
        "error": {"type": "invalid_request_error", "code": "charge_already_refunded",
                  "message": "Charge ch_1 has already been refunded."}}))], "already"),
    ("update_ticket", [("update_ticket", {"ticket_id": "35436"}, json.dumps({
        "error": "RecordInvalid", "description": "Record validation errors", "details": {
            "status": [{"description": "Status: closed prevents ticket update"}]}}))],
     "blocked"),
    ("void_authorization", [("void_authorization", {"id": "0VF52814937998046"}, json.dumps({
        "name": "UNPROCESSABLE_ENTITY", "message": "The requested action could not be "
        "performed, semantically incorrect, or failed business validation.", "details": [
            {"issue": "PREVIOUSLY_VOIDED", "description": "Authorization has been previously "
             "voided and hence cannot be voided again."}]}))], "already"),
    ("cancel_reservation", [("cancel_reservation", {"reservation_id": "ZFA04Y"},
                             "Error: Cannot cancel reservation within 24 hours of "
                             "departure")], "blocked"),
    ("send_payment_request", [("send_payment_request", {"bill_id": "B1"},
                               "Error: A bill is already awaiting payment for this "
                               "customer")], "already"),
    # not refusals by state: they stay what they were
    ("cancel_order", [("cancel_order", ORDER, '{"order_id": "#W7730114", "status": '
                                              '"cancelled"}')], "met"),
    ("cancel_order", [("cancel_order", ORDER, "Error: Order #W7730114 not found")], "failed"),
    ("cancel_order", [("cancel_order", ORDER, '{"error": {"code": 504, "message": "Gateway '
                                              'Timeout"}}')], "failed"),
    ("issue_refund", [("issue_refund", ORDER, "Error: Non-pending order cannot be "
                                              "refunded")], "blocked"),
    (None, [("cancel_order", ORDER, "Order #W7730114 is already cancelled.")], "already"),
    (None, [("cancel_order", ORDER, "This order has already shipped and can no longer be "
                                    "cancelled.")], "untracked"),
])
def test_goal_progress_tells_done_from_past_the_point(tool: str | None, calls: list[Call],
                                                      expected: str) -> None:
    assert progress(tool, calls) == expected


# --------------------------------------------------------------------------- the person

REFUSED = ('{"error": "not_allowed", "status": "delivered", "message": "The order '
           '#W7730114 is delivered, not pending: it cannot be cancelled."}')
SAYS_NO = ("I'm sorry, order #W7730114 has already been delivered, so it can't be "
           "cancelled.")
_ALREADY = re.compile(r"already (done|gone through|sorted)", re.I)


def person(tone: str = "polite", stance: str = "ordinary", patience: int = 3,
           seed: int = 5) -> tuple[TemplatePerson, PlannedRollout]:
    who = Persona(name="Hana", texture="plain", tone=tone, patience=patience,
                  length="short", stance=stance)
    plan = PlannedRollout(
        index=0, purpose="target", cell=None, cell_status=None,
        situation={"user_stance": stance, "history": "fresh"}, seed=seed,
        goal=Goal(ask="I want to cancel my order #W7730114.", tool="cancel_pending_order",
                  facts=dict(ORDER)),
        persona=who, mutation=Mutation(kind="explore", detail=""))
    return TemplatePerson(), plan


class Talk:
    def __init__(self, **persona_args: Any) -> None:
        writer, plan = person(**persona_args)
        self.session = writer.start(plan)
        self.messages = [Message(role="system", content="You are support.")]
        self.messages.append(Message(role="user",
                                     content=asyncio.run(self.session.opening()).text))

    def agent(self, text: str, calls: Sequence[Call] = ()) -> PersonTurn:
        for index, (tool, arguments, result) in enumerate(calls):
            call = ToolCall(f"c{len(self.messages)}-{index}", tool, json.dumps(arguments))
            self.messages += [Message(role="assistant", tool_calls=(call,)),
                              Message(role="tool", content=result, tool_call_id=call.id,
                                      name=tool)]
        self.messages.append(Message(role="assistant", content=text))
        turn = asyncio.run(self.session.reply(tuple(self.messages)))
        self.messages.append(Message(role="user", content=turn.text))
        return turn


def _refusal(talk: Talk) -> PersonTurn:
    return talk.agent(SAYS_NO, [("cancel_pending_order", ORDER, REFUSED)])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("tone", "stance"), [
    ("polite", "ordinary"), ("friendly", "unsure"), ("anxious", "mistaken"),
    ("curt", "hurried"), ("frustrated", "ordinary"), ("sarcastic", "ordinary"),
    ("polite", "adversarial"), ("curt", "frustrated")])
def test_a_refused_goal_is_never_taken_as_already_done(tone: str, stance: str,
                                                       seed: int) -> None:
    talk = Talk(tone=tone, stance=stance, seed=seed)
    turn = _refusal(talk)
    assert not _ALREADY.search(turn.text), turn.text
    assert not any(line in turn.text for line in ALREADY_DONE), turn.text


def test_the_reaction_follows_the_persona() -> None:
    """Polite and patient: asks for an alternative, then accepts a second no. Pushing
    back (an adversarial or frustrated stance, a frustrated or sarcastic tone): asks for
    someone else, and leaves on a second no. Curt: accepts at once."""
    asks = Talk(tone="polite", patience=3)
    first = _refusal(asks)
    assert any(line in first.text for line in BLOCKED_ASK), first.text
    assert not (first.done or first.leaves)
    second = asks.agent("I'm afraid there's no other way, it cannot be cancelled now.")
    assert second.done and any(line in second.text for line in BLOCKED_ACCEPT), second

    for persona_args in ({"tone": "sarcastic"}, {"tone": "polite", "stance": "adversarial"},
                         {"tone": "curt", "stance": "frustrated"}):
        pushes = Talk(**persona_args)
        first = _refusal(pushes)
        assert any(line in first.text for line in BLOCKED_ESCALATE), (persona_args, first)
        assert not (first.done or first.leaves)
        second = pushes.agent("Sorry, nobody can cancel a delivered order.")
        assert second.leaves and not second.done, (persona_args, second)

    accepts = Talk(tone="curt")
    turn = _refusal(accepts)
    assert turn.done and any(line in turn.text for line in BLOCKED_ACCEPT), turn


def test_an_escalation_answered_with_a_handoff_ends_waiting() -> None:
    talk = Talk(tone="frustrated")
    _refusal(talk)
    turn = talk.agent("I understand. I'll escalate this to a supervisor who will contact you.")
    assert turn.done and re.search(r"wait", turn.text, re.I), turn


def test_an_alternative_that_went_through_ends_with_thanks() -> None:
    talk = Talk(tone="friendly", patience=4)
    _refusal(talk)
    offer = talk.agent("I can start a return for it instead. Would you like me to do that?")
    assert not offer.done and re.search(r"\byes\b", offer.text, re.I), offer
    done = talk.agent("Done — I've returned order #W7730114. The system shows: status "
                      "return requested.",
                      [("return_delivered_order_items", ORDER,
                        '{"order_id": "#W7730114", "status": "return requested"}')])
    assert done.done and re.search(r"thank", done.text, re.I), done


def test_a_claim_of_success_after_the_refusal_is_contradicted() -> None:
    talk = Talk(tone="polite", patience=3)
    turn = talk.agent("All done, your order has been cancelled!",
                      [("cancel_pending_order", ORDER, REFUSED)])
    assert not turn.done and re.search(r"sure|seeing|check", turn.text, re.I), turn


def test_the_model_person_is_told_it_cannot_be_done() -> None:
    from generator.person import _SEEN  # what the model person is shown of the world

    blocked = goal_progress(Goal(ask="x", tool="cancel_pending_order", facts={}),
                            transcript([("cancel_pending_order", ORDER, REFUSED)]))
    assert "cannot be done" in _SEEN[blocked] and "already" not in _SEEN[blocked]
    plan = replace(person()[1])
    from generator.person import person_brief

    assert "cannot be done" in person_brief(plan)


@pytest.mark.parametrize(("text", "done", "expected"), [
    ("Order W1 was already cancelled on 2026-01-02; nothing changed.", "cancelled", "reached"),
    ("status: already_cancelled", "cancelled", "reached"),
    ("Roaming was already enabled", "enabled", "reached"),
    ("status: Active", "resumed", "reached"),  # resuming leaves a line active
    ("A bill is already awaiting payment", "sent", "reached"),  # it already holds
    ("The order W1 is delivered, not pending: it cannot be cancelled.", "cancelled", "passed"),
    ("This order has already shipped and can no longer be cancelled", "cancelled", "passed"),
    ("You cannot cancel this PaymentIntent because it has a status of succeeded.",
     "canceled", "passed"),
    ("Cannot cancel a partially fulfilled order", "cancelled", "passed"),
    ("Error: non-pending order cannot be cancelled", "cancelled", None),  # names no state
    ("Error: Line must be active to suspend", "suspended", None),
    ("Order #1 is already cancelled.", None, "reached"),  # no action known: "already" holds
    ("Already shipped: it cannot be cancelled.", None, "passed"),  # the refused verb decides
    # an "already" state that is not the goal's own is in the way, not the goal reached
    ("Flight HAT001 has already departed and cannot be changed.", "changed", "passed"),
    ("Error: seat 12A is already taken.", "selected", "passed"),
    ("Error: room already occupied.", "booked", "passed"),
    ("Error: time slot already booked by another customer.", "booked", "passed"),
    ("Email already in use.", "created", "passed"),
    ("Account already exists.", "created", "reached"),
])
def test_end_state(text: str, done: str | None, expected: str | None) -> None:
    assert end_state(text, done) == expected
