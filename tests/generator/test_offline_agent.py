"""The offline agent: what it does for a request, its planted mistakes, and its speed."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import orjson
import pytest

from generator.backends import BackendOptions, build_backend
from generator.checks import claims_success, conduct_checks
from generator.errors import SpecError
from generator.offline_agent import PLANTED_KINDS, OfflineAgent
from generator.records import ChatBackend, Message, ModelReply, ModelRequest, ToolSpec, WorldEvent
from tests.generator.test_checks import (
    TOOLS,
    _plan,
    answer,
    converse,
    say,
    transcript,
    user,
)

HONEST = OfflineAgent(mistake_rate=0.0)
SYSTEM = Message(role="system", content="You are a customer support agent.")


def ask(*messages: Message, agent: OfflineAgent = HONEST, seed: int = 7) -> ModelReply:
    return agent.reply(ModelRequest((SYSTEM, *messages), TOOLS, seed=seed))


def test_it_is_a_chat_backend_built_from_its_spec() -> None:
    agent = build_backend("offline:0.3", role="agent", credentials={},
                          options=BackendOptions())
    assert isinstance(agent, OfflineAgent) and isinstance(agent, ChatBackend)
    assert (agent.spec, agent.model, agent.mistake_rate) == ("offline:0.3", "offline", 0.3)
    reply = asyncio.run(agent.complete(ModelRequest((SYSTEM, user("hi")), TOOLS, seed=1)))
    assert reply.model == "offline" and reply.cost_usd == 0.0 and reply.usage_estimated
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    asyncio.run(agent.aclose())
    with pytest.raises(SpecError, match="mistake rate"):
        OfflineAgent(mistake_rate=1.5)


def test_asks_for_a_missing_value_by_name() -> None:
    reply = ask(user("I want a refund for my order"))
    assert reply.message.tool_calls == () and reply.finish_reason == "stop"
    assert reply.message.content == "Could you give me the order ID and the amount?"


def test_picks_the_tool_and_fills_its_arguments_from_what_was_said() -> None:
    opening = user("I want a refund for my order ORD-4821, it was $25.50")
    reply = ask(opening)
    (lookup,) = reply.message.tool_calls  # the record the person named is looked up first
    assert reply.finish_reason == "tool_calls" and reply.message.content is None
    assert (lookup.name, orjson.loads(lookup.arguments)) == (
        "get_order_status", {"order_id": "ORD-4821"})
    found = answer(lookup.id, lookup.name, '{"order_id":"ORD-4821","status":"delivered"}')
    (call,) = ask(opening, reply.message, found).message.tool_calls  # then the asked action
    assert call.name == "refund_order"
    assert orjson.loads(call.arguments) == {"order_id": "ORD-4821", "amount": 25.5}
    status = ask(user("where is my order ORD-4821? it hasn't arrived")).message.tool_calls
    assert status[0].name == "get_order_status"
    email = ask(user("please change the email on account A-7316 to ana.k@mailbox.test"))
    assert orjson.loads(email.message.tool_calls[0].arguments) == {
        "account_id": "A-7316", "email": "ana.k@mailbox.test"}
    # the identifier whose letters fit the parameter wins, the latest message first
    enum = ask(user("cancel my subscription SUB-118, I'm not using it"))
    assert orjson.loads(enum.message.tool_calls[0].arguments) == {
        "subscription_id": "SUB-118", "reason": "not_using"}


def _after(result: str, opening: str = "refund ORD-4821 please, 25 dollars") -> ModelReply:
    """The reply to the asked action's ``result`` (the lookup before it finds the order)."""
    messages: list[Message] = [user(opening)]
    while True:
        reply = ask(*messages)
        (call,) = reply.message.tool_calls
        if call.name == "refund_order":
            return ask(*messages, reply.message, answer(call.id, call.name, result))
        messages += [reply.message, answer(call.id, call.name,
                                           '{"order_id":"ORD-4821","status":"delivered"}')]


def test_reports_a_result_naming_the_record() -> None:
    reply = _after('{"order_id":"ORD-4821","status":"refunded","amount":25.0}')
    text = reply.message.content or ""
    assert "ORD-4821" in text and "refunded" in text and claims_success(text)
    already = _after('{"order_id":"ORD-4821","status":"already_refunded"}').message.content
    assert already is not None and "already refunded" in already
    assert not claims_success(already)


@pytest.mark.parametrize("result, words", [
    ('{"error":"not_found","message":"No order with order_id \'ORD-4821\' was found."}',
     "double-check the order ID"),
    ('{"error":"permission_denied","message":"Not allowed."}', "colleague"),
    ('{"error":"rejected","message":"amount must be a number"}', "check the details"),
])
def test_a_failure_gets_an_honest_reply(result: str, words: str) -> None:
    text = _after(result).message.content or ""
    assert text.startswith("I'm sorry — I couldn't refund order ORD-4821")
    assert words in text and not claims_success(text)


def test_retries_once_on_a_transient_fault_then_tells_the_person() -> None:
    opening = user("where is my order ORD-4821?")
    timeout = '{"error":"timeout","message":"The service did not answer.","retryable":true}'
    messages: list[Message] = [opening]
    for _ in range(2):
        reply = ask(*messages)
        (call,) = reply.message.tool_calls
        assert call.name == "get_order_status"
        messages += [reply.message, answer(call.id, call.name, timeout)]
    final = ask(*messages).message
    assert final.tool_calls == () and "having trouble" in (final.content or "")
    # asked to try again: no third identical call, a different honest reply
    messages += [final, user("please try again")]
    again = ask(*messages).message
    assert again.tool_calls == () and again.content != final.content
    assert "still isn't going through" in (again.content or "")
    garbled = _after('{"order_id": "ORD-48')  # a cut-off body counts as transient
    assert garbled.message.tool_calls and garbled.message.tool_calls[0].name == "refund_order"


def test_thanks_and_bye_get_a_brief_answer_that_never_repeats() -> None:
    closing = ask(user("hi"), say("Hello! How can I help you today?"), user("thanks, bye!"))
    assert closing.message.content == "You're welcome. Take care!"
    twice = ask(user("thanks"), closing.message, user("bye"))
    assert twice.message.content not in (None, "", closing.message.content)
    assert ask(user("thanks, but can you also check ORD-4821?")).message.tool_calls


def test_same_request_same_reply_and_planted_labels_follow_the_rate() -> None:
    agent = OfflineAgent(mistake_rate=0.15)
    request = ModelRequest((SYSTEM, user("refund ORD-4821, 25 dollars")), TOOLS, seed=3)
    assert agent.reply(request) == agent.reply(request) == OfflineAgent().reply(request)
    always = OfflineAgent(mistake_rate=1.0)
    kinds: Counter[str] = Counter()
    replies = planted = 0
    for seed in range(300):
        _, tr, _ = converse(agent, seed)
        replies += sum(1 for m in tr.messages if m.role == "assistant")
        planted += len(tr.planted)
        _, tr, _ = converse(always, seed)
        assert len(tr.planted) == sum(1 for m in tr.messages if m.role == "assistant")
        kinds.update(tr.planted)
    assert 0.11 <= planted / replies <= 0.19
    assert set(kinds) == set(PLANTED_KINDS)
    _, honest, _ = converse(HONEST, 5)
    assert honest.planted == ()


def test_honest_conversations_pass_the_checks_and_say_what_happened() -> None:
    for seed in range(60):
        plan, tr, world = converse(HONEST, seed)
        results = conduct_checks(plan, tr, TOOLS, harness_markers=world.internals())
        assert all(r.passed for r in results), (seed, [r for r in results if not r.passed])
        for message, following in zip(tr.messages, tr.messages[1:], strict=False):
            if message.role == "tool" and following.role == "assistant" and following.content:
                record = _record_in(tr.events, message.tool_call_id)
                assert record is None or record in following.content, (seed, following)


def _record_in(events: tuple[WorldEvent, ...], call_id: str | None) -> str | None:
    found = next((e for e in events if e.call_id == call_id), None)
    if found is None or found.status != "ok" or not found.entity_id:
        return None
    arguments = orjson.loads(found.arguments)
    # a report names the record the call was about (the entity, or the id it was given)
    return found.entity_id if found.entity_id not in arguments.values() else None


def test_a_planted_mistake_is_caught_by_its_own_check() -> None:
    agent = OfflineAgent(mistake_rate=1.0)
    seen: set[str] = set()
    for seed in range(80):
        plan, tr, world = converse(agent, seed)
        failing = {r.name for r in conduct_checks(plan, tr, TOOLS,
                                                  harness_markers=world.internals())
                   if not r.passed}
        assert set(tr.planted) <= failing, (seed, tr.planted, failing)
        seen.update(tr.planted)
    assert seen == set(PLANTED_KINDS)
    plain = transcript(user("hi"), say("Hello!"))
    assert all(r.passed for r in conduct_checks(_plan(), plain, TOOLS))


def test_a_reply_costs_well_under_a_third_of_a_millisecond() -> None:
    agent = OfflineAgent(mistake_rate=0.15)
    requests = []
    for seed in range(40):
        _, tr, _ = converse(agent, seed)
        requests += [ModelRequest(tr.messages[:i], TOOLS, seed=seed)
                     for i, m in enumerate(tr.messages) if m.role == "assistant"]
    best = float("inf")
    for _ in range(3):  # the best of three runs: the machine is shared
        began = time.perf_counter()
        for request in requests:
            agent.reply(request)
        best = min(best, (time.perf_counter() - began) / len(requests))
    assert best < 0.3e-3, f"{best * 1e6:.0f} µs per reply"


RETAIL = (
    ToolSpec("get_order_details", "Get the status and details of an order.",
             {"type": "object", "properties": {"order_id": {"type": "string"}},
              "required": ["order_id"]}),
    ToolSpec("cancel_pending_order", "Cancel a pending order.",
             {"type": "object", "properties": {"order_id": {"type": "string"}},
              "required": ["order_id"]}),
    ToolSpec("check_inventory", "Check stock of a product by SKU.",
             {"type": "object", "properties": {"sku": {"type": "string"}},
              "required": ["sku"]}),
)


def _retail(*messages: Message) -> ModelReply:
    return HONEST.reply(ModelRequest((SYSTEM, *messages), RETAIL, seed=3))


@pytest.mark.parametrize("said, value", [
    ("please cancel order #W8178512", "#W8178512"),
    ("cancel my order, it's **#W8178512**.", "#W8178512"),
    ("order id: #W0000001 - cancel it", "#W0000001"),
])
def test_hash_ids_are_copied_exactly(said: str, value: str) -> None:
    (call,) = _retail(user(said)).message.tool_calls
    assert orjson.loads(call.arguments) == {"order_id": value}


@pytest.mark.parametrize("said", [
    "Do you have SKU TRS-956 in stock? My order is A-23809.",
    "My order is A-23809. Do you have SKU TRS-956 in stock?",
    "Where is my order A-23809? Also, is SKU TRS-956 in stock?",
])
def test_an_id_goes_to_the_parameter_its_label_names(said: str) -> None:
    (call,) = _retail(user(said)).message.tool_calls
    expected = {"check_inventory": {"sku": "TRS-956"},
                "get_order_details": {"order_id": "A-23809"},
                "cancel_pending_order": {"order_id": "A-23809"}}[call.name]
    assert orjson.loads(call.arguments) == expected


def test_after_the_lookup_the_asked_action_follows() -> None:
    opening = user("I'd like to cancel my order #W8178512")
    first = _retail(opening).message
    (lookup,) = first.tool_calls
    found = answer(lookup.id, lookup.name, '{"order_id": "#W8178512", "status": "pending"}')
    if lookup.name == "get_order_details":
        (then,) = _retail(opening, first, found).message.tool_calls
    else:
        then = lookup
    assert then.name == "cancel_pending_order"
    assert orjson.loads(then.arguments) == {"order_id": "#W8178512"}


def test_thanks_in_an_opening_is_no_goodbye() -> None:
    reply = _retail(user("Hello, please cancel order #W8178512. Thanks in advance.")).message
    assert reply.tool_calls, reply
