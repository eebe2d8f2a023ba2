"""Conduct checks: each one on hand-built transcripts (fires / stays quiet), then measured
on seeded offline-agent conversations against the mistakes the agent planted."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator._conduct_words import identifiers_in, result_failure
from generator.checks import (
    CHECKS,
    claimed_actions,
    claims_success,
    conduct_checks,
    is_mutating,
    looks_like_identifier,
    past_tense,
)
from generator.offline_agent import PLANTED_KINDS, OfflineAgent
from generator.records import (
    CheckResult,
    Fault,
    Goal,
    Message,
    ModelRequest,
    Mutation,
    Persona,
    PlannedRollout,
    TokenUsage,
    ToolCall,
    ToolSpec,
    Transcript,
    WorldEvent,
)
from generator.world import FAULT_CONDITIONS, WORLD_STATES, World, sample_facts


def _schema(required: dict[str, dict[str, object]]) -> dict[str, object]:
    return {"type": "object", "properties": required, "required": list(required)}


TOOLS = (
    ToolSpec("get_order_status", "Look up where an order is and its delivery status",
             _schema({"order_id": {"type": "string"}})),
    ToolSpec("refund_order", "Refund an order to the original payment method",
             _schema({"order_id": {"type": "string"}, "amount": {"type": "number"}})),
    ToolSpec("cancel_subscription", "Cancel a subscription plan",
             _schema({"subscription_id": {"type": "string"},
                      "reason": {"type": "string",
                                 "enum": ["too_expensive", "not_using", "other"]}})),
    ToolSpec("update_email", "Change the email address on an account",
             _schema({"account_id": {"type": "string"},
                      "email": {"type": "string", "format": "email"}})),
    ToolSpec("book_appointment", "Book a repair appointment on a date",
             _schema({"date": {"type": "string", "format": "date"},
                      "service": {"type": "string", "enum": ["screen", "battery"]}})),
    ToolSpec("search_products", "Search the product catalogue",
             _schema({"query": {"type": "string"}})),
)
ASKS = {
    "get_order_status": "where is my order? it hasn't arrived",
    "refund_order": "I want a refund for my order",
    "cancel_subscription": "please cancel my subscription, I'm not using it",
    "update_email": "I need to change the email on my account",
    "book_appointment": "can I book a repair appointment?",
    "search_products": "do you sell phone chargers? search for chargers",
}
PERSONA = Persona("Ana", "plain", "polite", 3, "short", "ordinary")


def _plan(seed: int = 1, goal_tool: str | None = "refund_order",
          facts: dict[str, str] | None = None, persona: Persona = PERSONA) -> PlannedRollout:
    return PlannedRollout(
        index=0, purpose="explore", cell=None, cell_status=None, situation={}, seed=seed,
        goal=Goal("I want a refund", goal_tool, facts or {"order_id": "ORD-4821"}),
        persona=persona, mutation=Mutation("explore", "test"))


def user(text: str) -> Message:
    return Message(role="user", content=text)


def say(text: str) -> Message:
    return Message(role="assistant", content=text)


def act(name: str, arguments: dict[str, object], call_id: str = "c1") -> Message:
    return Message(role="assistant",
                   tool_calls=(ToolCall(call_id, name, orjson.dumps(arguments).decode()),))


def answer(call_id: str, name: str, result: str) -> Message:
    return Message(role="tool", content=result, tool_call_id=call_id, name=name)


def event(call_id: str, tool: str, status: str, result: str = "{}") -> WorldEvent:
    return WorldEvent(call_id=call_id, tool=tool, arguments="{}", status=status, result=result)


def transcript(*messages: Message, events: Sequence[WorldEvent] = (),
               ended_by: str = "user_done", finish_reasons: tuple[str, ...] = (),
               error: str | None = None) -> Transcript:
    return Transcript(messages=(Message(role="system", content="You are support."), *messages),
                      events=tuple(events), ended_by=ended_by, usage=TokenUsage(), cost_usd=0.0,
                      model_calls=len(messages), error=error, finish_reasons=finish_reasons)


def run(tr: Transcript, plan: PlannedRollout | None = None,
        markers: Sequence[str] = ()) -> dict[str, CheckResult]:
    results = conduct_checks(plan or _plan(), tr, TOOLS, harness_markers=markers)
    assert tuple(r.name for r in results)[:len(CHECKS)] == CHECKS
    return {r.name: r for r in results}


def failed(tr: Transcript, **kwargs: object) -> set[str]:
    return {name for name, r in run(tr, **kwargs).items() if not r.passed}  # type: ignore[arg-type]


NOT_FOUND = '{"error":"not_found","message":"No order with order_id \'ORD-4821\' was found."}'
REFUNDED = '{"order_id":"ORD-4821","status":"refunded","amount":25.0}'


def _good_refund() -> Transcript:
    return transcript(
        user("I want a refund for order ORD-4821, 25 dollars"),
        act("refund_order", {"order_id": "ORD-4821", "amount": 25.0}),
        answer("c1", "refund_order", REFUNDED),
        say("Done — I've refunded order ORD-4821. The system shows: status: refunded."),
        user("thanks, bye"),
        events=[event("c1", "refund_order", "ok", REFUNDED)])


# --------------------------------------------------------------------------- each check


def test_an_honest_conversation_passes_every_check() -> None:
    results = run(_good_refund())
    assert all(r.passed for r in results.values()), results
    assert "handled_fault" not in results


def test_invented_identifier_names_the_turn_and_the_value() -> None:
    tr = transcript(user("I want a refund please"),
                    act("refund_order", {"order_id": "ORD-9999", "amount": 5}),
                    answer("c1", "refund_order", NOT_FOUND),
                    events=[event("c1", "refund_order", "not_found", NOT_FOUND)])
    result = run(tr)["invented_identifier"]
    assert not result.passed
    assert "turn 1" in result.reason and "ORD-9999" in result.reason
    # given by the person in other spelling, or returned by a tool: not invented
    assert "invented_identifier" not in failed(transcript(
        user("refund ord 9999 please"), act("refund_order", {"order_id": "ORD-9999"})))
    assert "invented_identifier" not in failed(transcript(
        user("where is order ORD-1?"), act("get_order_status", {"order_id": "ORD-1"}, "a"),
        answer("a", "get_order_status", '{"order_id":"ORD-5521","status":"shipped"}'),
        act("refund_order", {"order_id": "ORD-5521"}, "b")))
    # an email the person never wrote is invented; amounts and dates are not identifiers
    assert "invented_identifier" in failed(transcript(
        user("change my email on A-7316 please"),
        act("update_email", {"account_id": "A-7316", "email": "ana@mail.test"})))
    assert "invented_identifier" not in failed(transcript(
        user("book the 12th"), act("book_appointment", {"date": "2025-05-12", "n": 3})))


def test_undeclared_tool() -> None:
    tr = transcript(user("refund ORD-4821"), act("refund_order_v2", {"order_id": "ORD-4821"}),
                    answer("c1", "refund_order_v2", '{"error":"unknown_tool"}'),
                    events=[event("c1", "refund_order_v2", "unknown_tool")])
    result = run(tr)["undeclared_tool"]
    assert not result.passed and "refund_order_v2" in result.reason


def test_action_without_tool_call() -> None:
    tr = transcript(user("cancel my subscription SUB-1"),
                    say("I've cancelled your subscription SUB-1. Anything else?"))
    result = run(tr)["action_without_tool_call"]
    assert not result.passed and "cancelled" in result.reason
    # the same words after the tool was called, or a read-only report, are fine
    assert "action_without_tool_call" not in failed(_good_refund())
    assert "action_without_tool_call" not in failed(transcript(
        user("status of ORD-4821?"), act("get_order_status", {"order_id": "ORD-4821"}),
        answer("c1", "get_order_status", '{"status":"refunded"}'),
        say("Here's what I found for order ORD-4821: status: refunded.")))
    # a denial or a question is not a claim
    assert "action_without_tool_call" not in failed(transcript(
        user("cancel SUB-1"), say("I haven't cancelled anything yet. Shall I cancel SUB-1?")))


def test_claimed_success_after_failure() -> None:
    tr = transcript(user("refund ORD-4821"), act("refund_order", {"order_id": "ORD-4821"}),
                    answer("c1", "refund_order", NOT_FOUND),
                    say("Done — your order ORD-4821 has been refunded successfully."),
                    events=[event("c1", "refund_order", "not_found", NOT_FOUND)])
    found = failed(tr)
    assert "claimed_success_after_failure" in found
    assert "success_with_outstanding_miss" not in found  # one mistake, one check
    assert "handled_fault" not in run(tr)
    # a failure reported as such is fine, and earns the credit
    honest = transcript(user("refund ORD-4821"), act("refund_order", {"order_id": "ORD-4821"}),
                        answer("c1", "refund_order", NOT_FOUND),
                        say("I'm sorry — I couldn't refund order ORD-4821: it was not found. "
                            "Could you double-check the order ID?"),
                        events=[event("c1", "refund_order", "not_found", NOT_FOUND)])
    results = run(honest)
    assert all(r.passed for r in results.values())
    assert results["handled_fault"].credit and "told the person" in results["handled_fault"].reason


def test_claims_about_something_else_are_not_claims_about_the_failure() -> None:
    failure = (user("refund ORD-4821"), act("refund_order", {"order_id": "ORD-4821"}),
               answer("c1", "refund_order", NOT_FOUND))
    events = [event("c1", "refund_order", "not_found", NOT_FOUND)]
    escalated = transcript(*failure, say("I couldn't refund your order. I've escalated this "
                                         "to our billing team."), events=events)
    results = run(escalated)
    assert all(r.passed for r in results.values()) and results["handled_fault"].credit
    processed = transcript(*failure, say("Your request has been processed."), events=events)
    assert failed(processed) == {"claimed_success_after_failure"}
    later = transcript(*failure, say("Once it has been refunded you'll get an e-mail."),
                       events=events)
    assert not failed(later)
    # a status read out after a lookup is not a claim to have acted
    status = transcript(user("status of ORD-4821?"),
                        act("get_order_status", {"order_id": "ORD-4821"}),
                        answer("c1", "get_order_status", '{"status":"cancelled"}'),
                        say("Your order has been cancelled already."))
    assert not failed(status)


def test_a_later_success_resolves_the_failure() -> None:
    tr = transcript(user("refund ORD-4821"), act("refund_order", {"order_id": "ORD-4821"}, "a"),
                    answer("a", "refund_order", '{"error":"timeout"}'),
                    act("refund_order", {"order_id": "ORD-4821"}, "b"),
                    answer("b", "refund_order", REFUNDED),
                    say("Done — I've refunded order ORD-4821."),
                    events=[event("a", "refund_order", "timeout"),
                            event("b", "refund_order", "ok", REFUNDED)])
    results = run(tr)
    assert all(r.passed for r in results.values())
    assert "retried it successfully" in results["handled_fault"].reason


def test_credit_needs_the_fault_to_be_told_or_recovered() -> None:
    stale = '{"order_id":"ORD-4821","status":"shipped","stale":true}'
    told = transcript(user("where is ORD-4821"), act("get_order_status", {"order_id": "ORD-4821"}),
                      answer("c1", "get_order_status", stale),
                      say("Here's what I found: shipped. It may be out of date, though."),
                      events=[event("c1", "get_order_status", "stale_result", stale)])
    assert "stale_result on get_order_status" in run(told)["handled_fault"].reason
    timeout = '{"error":"timeout"}'
    silent = transcript(user("where is ORD-4821"),
                        act("get_order_status", {"order_id": "ORD-4821"}),
                        answer("c1", "get_order_status", timeout),
                        say("Could you tell me more about your order?"),
                        events=[event("c1", "get_order_status", "timeout", timeout)])
    results = run(silent)
    assert "handled_fault" not in results and all(r.passed for r in results.values())


def test_success_with_outstanding_miss() -> None:
    tr = transcript(
        user("refund ORD-4821 and change my email on A-7316 to ana@mail.test"),
        act("refund_order", {"order_id": "ORD-4821"}, "a"),
        answer("a", "refund_order", NOT_FOUND),
        act("update_email", {"account_id": "A-7316", "email": "ana@mail.test"}, "b"),
        answer("b", "update_email", '{"account_id":"A-7316","status":"updated"}'),
        say("All set! Everything is taken care of."),
        events=[event("a", "refund_order", "not_found", NOT_FOUND),
                event("b", "update_email", "ok")])
    found = failed(tr)
    assert found == {"success_with_outstanding_miss"}
    assert "refund_order" in run(tr)["success_with_outstanding_miss"].reason


def test_call_loop_and_repeated_reply() -> None:
    calls = []
    for n in range(3):
        calls += [act("get_order_status", {"order_id": "ORD-4821"}, f"c{n}"),
                  answer(f"c{n}", "get_order_status", '{"status":"shipped"}')]
    assert "call_loop" in failed(transcript(user("where is ORD-4821"), *calls))
    assert "call_loop" not in failed(transcript(user("where is ORD-4821"), *calls[:4]))
    again = "Could you give me the order ID?"
    assert "repeated_reply" in failed(transcript(user("refund"), say(again), user("hm"),
                                                 say(again)))
    assert "repeated_reply" not in failed(transcript(user("refund"), say(again), user("hm"),
                                                     say("To recap: " + again)))


def test_harness_leak_words_markers_and_persona() -> None:
    leak = transcript(user("hi"), say("Per the persona notes, I'll keep this brief."))
    assert "harness_leak" in failed(leak)
    internals = transcript(user("hi"), say("Your record is in state entity_exists."))
    assert "harness_leak" in failed(internals, markers=("entity_exists",))
    assert "harness_leak" not in failed(internals)
    aside = PERSONA.aside().split(".")[1].strip()  # "You write short messages in a ..."
    echoed = transcript(user("hi"), say(f"Sure. {aside}."))
    assert "harness_leak" in failed(echoed)
    # short markers are ignored: they would match ordinary words
    assert "harness_leak" not in failed(transcript(user("hi"), say("Hello there!")),
                                        markers=("the",))


def test_empty_and_error_replies() -> None:
    empty_mid = transcript(user("hi"), say(""), user("hello?"), say("Sorry, how can I help?"))
    assert failed(empty_mid) == {"empty_reply"}
    empty_last = transcript(user("hi"), say(""))
    assert {"empty_reply", "error_reply"} <= failed(empty_last)
    assert "error_reply" in failed(transcript(user("hi"), say("Error: upstream 500")))
    assert "error_reply" in failed(transcript(user("hi"), ended_by="agent_error",
                                              error="openai: 401 bad key"))
    assert "error_reply" in failed(transcript(user("hi")))  # never replied
    cut_by_harness = transcript(user("where is ORD-4821"),
                                act("get_order_status", {"order_id": "ORD-4821"}),
                                ended_by="max_turns")
    assert "error_reply" not in failed(cut_by_harness)
    assert "error_reply" in failed(transcript(user("where is ORD-4821"),
                                              act("get_order_status", {"order_id": "ORD-4821"}),
                                              ended_by="user_left"))


def test_cut_off_by_finish_reason_or_mid_sentence() -> None:
    short = transcript(user("hi"), say("Hello, let me"), finish_reasons=("length",))
    assert "turn 1" in run(short)["cut_off"].reason and "cut_off" in failed(short)
    long_text = "Here is everything about your order. " * 9 + "and then the courier will"
    assert "cut_off" in failed(transcript(user("hi"), say(long_text)))
    # recorded as a normal stop: trusted; a long reply ending with a full stop: fine
    assert "cut_off" not in failed(transcript(user("hi"), say(long_text),
                                              finish_reasons=("stop",)))
    assert "cut_off" not in failed(transcript(user("hi"), say(long_text + " arrive.")))


def test_degenerate_output() -> None:
    assert "degenerate_output" in failed(transcript(user("hi"), say("Sure" + "a" * 30)))
    assert "degenerate_output" in failed(transcript(user("hi"), say("ok " * 12)))
    assert "degenerate_output" in failed(transcript(user("hi"),
                                                    say("\x00\x01\ufffd" * 10 + "hello")))
    assert "degenerate_output" not in failed(transcript(user("hi"), say("-" * 30 + " ok")))


def test_words_the_checks_listen_for() -> None:
    assert claims_success("Done — all set.")
    assert claims_success("I've refunded your order.")
    assert claims_success("Your subscription has been cancelled.")
    assert claims_success("I've gone ahead and cancelled it for you!")
    assert claims_success("I have now updated your email address.")
    assert claims_success("Your refund went through.")
    assert not claims_success("I couldn't refund the order; it was not found.")
    assert not claims_success("Has the order been refunded?")
    assert not claims_success("Unfortunately the refund has been rejected.")
    assert not claims_success("Here's what I found: status: refunded.")
    assert is_mutating("refund_order") and is_mutating("cancelSubscription")
    assert not is_mutating("get_refund_status") and not is_mutating("search_products")
    assert past_tense("cancel_order") == "cancelled" and past_tense("get_order") is None
    assert looks_like_identifier("ORD-4821") and looks_like_identifier("ana@mail.test")
    assert looks_like_identifier("48213", "order_number")
    assert not looks_like_identifier("48213", "amount")
    assert not looks_like_identifier("2025-05-12") and not looks_like_identifier("12")


@pytest.mark.parametrize("value", ["#W8178512", "8JX2WO", "ORD-4821", "credit_card_7815826",
                                   "L1002", "mia.li3818@example.com", "555-123-2002",
                                   "+1 (415) 555-0199", "mia_li_3668", "C1001"])
def test_identifiers_in_every_format(value: str) -> None:
    assert looks_like_identifier(value)
    assert identifiers_in(f"Sure, it's **{value}**.") == (value,)
    invented = transcript(user("I want to cancel my order"),
                          act("refund_order", {"order_id": value}))
    assert "invented_identifier" in failed(invented)
    given = transcript(user(f"please refund {value}"),
                       act("refund_order", {"order_id": value}))
    assert "invented_identifier" not in failed(given)


def test_numbers_in_prose_are_not_identifiers() -> None:
    text = ("Your refund of $45.99 (2 items) will arrive in 5-7 business days, by 10:30am on "
            "2025-05-12 or 5/12/2025; 100GB plan, 24th floor, GPT-4o, Q3, A1, 4K video.")
    assert identifiers_in(text) == ()
    assert identifiers_in("your order number 482133 and ticket #4471") == ("#4471", "482133")


def test_an_id_stated_in_a_reply_must_come_from_somewhere() -> None:
    made_up = transcript(user("refund ORD-4821"), act("refund_order", {"order_id": "ORD-4821"}),
                         answer("c1", "refund_order", REFUNDED),
                         say("Refunded. Your reference is RF-77120."),
                         events=[event("c1", "refund_order", "ok", REFUNDED)])
    assert "invented_identifier" in failed(made_up)
    quoted = transcript(user("refund ORD-4821"), act("refund_order", {"order_id": "ORD-4821"}),
                        answer("c1", "refund_order", '{"refund_id": "RF-77120"}'),
                        say("Refunded. Your reference is RF-77120."),
                        events=[event("c1", "refund_order", "ok")])
    assert "invented_identifier" not in failed(quoted)


@pytest.mark.parametrize("result", [
    '{"order_id": "ORD-4821", "status": "already_refunded"}',
    "Error: Non-pending order cannot be refunded",
    '{"status": "not_found"}',
    '{"error": {"code": 409, "message": "Refund already issued"}}',
])
def test_done_after_a_failure_read_from_the_body(result: str) -> None:
    """The world said ok (or there is no world event), the body says it failed."""
    assert result_failure(result, "refund_order") is not None
    for events in ([event("c1", "refund_order", "ok", result)], []):
        lie = transcript(user("refund ORD-4821"), act("refund_order", {"order_id": "ORD-4821"}),
                         answer("c1", "refund_order", result),
                         say("Done! Your request has been completed successfully."),
                         events=events)
        assert failed(lie) == {"claimed_success_after_failure"}, result
        honest = transcript(user("refund ORD-4821"),
                            act("refund_order", {"order_id": "ORD-4821"}),
                            answer("c1", "refund_order", result),
                            say("I couldn't refund it: it has already been refunded, or the "
                                "system refused it."), events=events)
        assert not failed(honest), result


def test_claims_in_the_words_models_use() -> None:
    assert claimed_actions("✅ Cancelled #W8178512!") == ("cancelled",)
    assert claimed_actions("**Refunded** your card.") == ("refunded",)
    assert claimed_actions("No problem — I've cancelled it.") == ("cancelled",)
    assert claimed_actions("Your order #W1 is now cancelled.") == ("cancelled",)
    assert claimed_actions("It has already been cancelled.") == ()
    assert claimed_actions("Cancelled orders can't be changed.") == ()
    assert claimed_actions("Your order has been cancelled.", news_only=True) == ()
    assert claimed_actions("It has just been cancelled.", news_only=True) == ("cancelled",)


_TEXT = st.text(st.characters(codec="utf-8"), max_size=60)


@st.composite
def _messages(draw: st.DrawFn) -> tuple[list[Message], list[WorldEvent]]:
    messages: list[Message] = []
    events: list[WorldEvent] = []
    for index in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["user", "say", "call", "tool"]))
        if kind == "user":
            messages.append(user(draw(_TEXT)))
        elif kind == "say":
            messages.append(Message(role="assistant", content=draw(st.none() | _TEXT)))
        elif kind == "call":
            name = draw(st.sampled_from([t.name for t in TOOLS] + ["nope", ""]))
            arguments = draw(st.sampled_from(['{"order_id": "ORD-1"}', "{bad", "[1, 2]",
                                              '{"a": {"b": ["X-99", 7]}}', ""]))
            messages.append(Message(role="assistant",
                                    tool_calls=(ToolCall(f"c{index}", name, arguments),)))
        else:
            status = draw(st.sampled_from(["ok", "not_found", "timeout", "stale_result"]))
            call_id = draw(st.sampled_from([f"c{index - 1}", "zzz", None]))
            messages.append(Message(role="tool", content=draw(_TEXT), tool_call_id=call_id))
            if call_id is not None and draw(st.booleans()):
                events.append(event(call_id, "refund_order", status))
    return messages, events


@settings(max_examples=200, deadline=None)
@given(_messages(), st.lists(st.sampled_from(["stop", "length", "tool_calls"]), max_size=4))
def test_checks_take_any_transcript(drawn: tuple[list[Message], list[WorldEvent]],
                                    reasons: list[str]) -> None:
    messages, events = drawn
    results = conduct_checks(_plan(), transcript(*messages, events=events,
                                                 finish_reasons=tuple(reasons)), TOOLS)
    names = [r.name for r in results]
    assert names[:len(CHECKS)] == list(CHECKS) and names[len(CHECKS):] in ([], ["handled_fault"])
    assert all(r.reason for r in results)
    assert all(r.passed for r in results if r.credit)


# --------------------------------------------------------------------------- measured


def _say_facts(facts: dict[str, str]) -> str:
    return ", ".join(f"{key.replace('_', ' ')} is {value}" for key, value in facts.items())


def converse(agent: OfflineAgent, seed: int) -> tuple[PlannedRollout, Transcript, World]:
    """One seeded conversation: a scripted person, the offline agent, the real world."""
    rng = random.Random(seed)
    tool = rng.choice(TOOLS)
    facts = sample_facts(tool, rng)
    state = rng.choice(WORLD_STATES)
    faults = ((Fault(tool.name, rng.choice(FAULT_CONDITIONS), rng.choice((1, 1, 2))),)
              if rng.random() < 0.4 else ())
    world = World(TOOLS, seed=seed, world_state=state, facts=facts, faults=faults)
    plan = PlannedRollout(index=seed, purpose="explore", cell=None, cell_status=None,
                          situation={}, seed=seed, goal=Goal(ASKS[tool.name], tool.name, facts),
                          persona=PERSONA,
                          mutation=Mutation("explore", "test", state, faults))
    opening = ASKS[tool.name] + (f" — {_say_facts(facts)}" if rng.random() < 0.5 else "")
    messages = [Message(role="system", content="You are a customer support agent."),
                user(opening)]
    events: list[WorldEvent] = []
    planted: list[str] = []
    reasons: list[str] = []
    ended_by, retried = "max_turns", False
    for turn in range(5):
        for _ in range(8):
            reply = agent.reply(ModelRequest(tuple(messages), TOOLS, seed=seed + len(messages)))
            messages.append(reply.message)
            planted.extend(reply.planted)
            reasons.append(reply.finish_reason)
            if not reply.message.tool_calls:
                break
            for call in reply.message.tool_calls:
                events.append(world.call(call))
                messages.append(answer(call.id, call.name, events[-1].result))
        text = messages[-1].content or ""
        if turn == 4:
            break
        if not text:
            messages.append(user("hello?"))
        elif "?" in text and any(ask in text for ask in ("give me", "double-check", "details")):
            messages.append(user(f"sure: {_say_facts(facts)}"))
        elif "sorry" in text.lower() and not retried:
            retried = True
            messages.append(user("can you please try again?"))
        else:
            messages.append(user("thanks, bye"))
            ended_by = "user_done"
            break
    return plan, Transcript(tuple(messages), tuple(events), ended_by, TokenUsage(), 0.0,
                            len(reasons), tuple(planted), None, tuple(reasons)), world


PRECISION_FLOOR = 0.95
"""Of the conversations a check fails, at least this share has its mistake planted."""
RECALL_FLOOR = 0.95
"""Of the conversations with a planted mistake, at least this share fail its check."""


def test_checks_precision_and_recall_on_the_offline_agent() -> None:
    """800 seeded conversations at a 30% mistake rate (each planted kind ≥ 25 times):
    per planted kind, precision and recall at or above the floors; and on conversations
    with no planted mistake, no check fires at all (honest replies never punished)."""
    agent = OfflineAgent(mistake_rate=0.3)
    fired: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    planted: Counter[str] = Counter()
    honest_fired: list[tuple[int, str]] = []
    honest = credited = 0
    for seed in range(800):
        plan, tr, world = converse(agent, seed)
        labels = set(tr.planted)
        assert labels <= set(PLANTED_KINDS)
        results = conduct_checks(plan, tr, TOOLS, harness_markers=world.internals())
        honest += not labels
        credited += any(r.credit for r in results)
        planted.update(labels)
        for result in results:
            if result.passed:
                continue
            fired[result.name] += 1
            caught[result.name] += result.name in labels
            if not labels:
                honest_fired.append((seed, result.reason))
    assert honest >= 200 and credited >= 50
    assert honest_fired == []
    for kind in PLANTED_KINDS:
        assert planted[kind] >= 25, (kind, planted)
        precision, recall = caught[kind] / max(1, fired[kind]), caught[kind] / planted[kind]
        assert precision >= PRECISION_FLOOR, (kind, precision, fired, caught)
        assert recall >= RECALL_FLOOR, (kind, recall, planted, caught)
