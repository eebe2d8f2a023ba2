"""The simulated person: sampled personas, the template person and the model person.

The processor's stance and history classifiers (``processor.axes``) are the oracle for the
template person's openings: a person built for ``hurried`` must read as hurried.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator._person_phrases import persona_prose
from generator.errors import BackendError
from generator.person import (
    DONE_TOKEN,
    LEAVE_TOKEN,
    LENGTHS,
    STANCES,
    TEXTURES,
    TONES,
    ModelPerson,
    PersonTurn,
    paraphrase,
    person_brief,
    sample_persona,
    spoken_ask,
)
from generator.records import (
    ChatBackend,
    Goal,
    Message,
    ModelReply,
    ModelRequest,
    Mutation,
    Persona,
    PlannedRollout,
    TokenUsage,
    ToolCall,
)
from generator.template_person import TemplatePerson
from processor.axes import situate
from processor.stance import classify_stance, pattern_stance

ASK = "I want a refund for my order, the blender arrived damaged."
FACTS = {"order_id": "ORD-4821", "email": "ana.k@mailbox.test"}
HISTORIES = ("fresh", "repeat_visit", "prior_failure", "contradicts_earlier",
             "prior_partial_action")


def persona(**changes: object) -> Persona:
    base = Persona(name="Hana", texture="plain", tone="polite", patience=3, length="medium",
                   stance="ordinary")
    return replace(base, **changes)  # type: ignore[arg-type]


def plan(who: Persona | None = None, *, seed: int = 11, history: str = "fresh",
         tool: str | None = "issue_refund", facts: dict[str, str] | None = None,
         ask: str = ASK) -> PlannedRollout:
    who = who or persona()
    return PlannedRollout(
        index=0, purpose="target", cell=None, cell_status=None,
        situation={"user_stance": who.stance, "history": history}, seed=seed,
        goal=Goal(ask=ask, tool=tool, facts=FACTS if facts is None else facts),
        persona=who, mutation=Mutation(kind="explore", detail=""))


class Conversation:
    """Drives one template session the way the simulation loop does."""

    def __init__(self, rollout: PlannedRollout) -> None:
        self.session = TemplatePerson().start(rollout)
        self.messages: list[Message] = [Message(role="system", content="You are support.")]
        self.turns: list[PersonTurn] = []

    def open(self) -> PersonTurn:
        return self._keep(asyncio.run(self.session.opening()))

    def agent(self, text: str, *, with_tool: bool = False, tool: str = "lookup_order",
              result: str = '{"status": "shipped"}') -> PersonTurn:
        if with_tool:
            call = ToolCall(f"c{len(self.messages)}", tool, '{"order_id": "ORD-4821"}')
            self.messages += [Message(role="assistant", tool_calls=(call,)),
                              Message(role="tool", content=result,
                                      tool_call_id=call.id, name=tool)]
        self.messages.append(Message(role="assistant", content=text))
        return self._keep(asyncio.run(self.session.reply(tuple(self.messages))))

    def _keep(self, turn: PersonTurn) -> PersonTurn:
        self.messages.append(Message(role="user", content=turn.text))
        self.turns.append(turn)
        return turn


def without_facts(text: str) -> str:
    for value in (*FACTS.values(), "ORD-48"):
        text = text.replace(value, "")
    return re.sub(r"ORD-\d+", "", text)


# --------------------------------------------------------------------------- personas


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32), stance=st.sampled_from(STANCES))
def test_sampled_personas_are_valid_and_deterministic(seed: int, stance: str) -> None:
    drawn = sample_persona(random.Random(seed), stance)
    assert drawn == sample_persona(random.Random(seed), stance)
    assert drawn.texture in TEXTURES and drawn.tone in TONES and drawn.length in LENGTHS
    assert 1 <= drawn.patience <= 5 and drawn.stance == stance


def test_persona_weights_are_not_uniform_and_follow_the_stance() -> None:
    rng = random.Random(0)
    ordinary = [sample_persona(rng, "ordinary") for _ in range(3000)]
    frustrated = [sample_persona(rng, "frustrated") for _ in range(3000)]
    textures = Counter(p.texture for p in ordinary)
    assert textures.most_common(1)[0][0] == "plain" and len(textures) == len(TEXTURES)
    assert Counter(p.tone for p in frustrated)["frustrated"] > \
        2 * Counter(p.tone for p in ordinary)["frustrated"]
    mean = sum(p.patience for p in frustrated) / 3000
    assert mean < sum(p.patience for p in ordinary) / 3000


_LABELS = {*TEXTURES, *TONES, *LENGTHS, *STANCES, "run on", "texture", "tone", "patience",
           "stance", "persona", "emoji", "typo", "lowercase"}


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), stance=st.sampled_from(STANCES))
def test_the_aside_is_prose_without_labels(seed: int, stance: str) -> None:
    drawn = sample_persona(random.Random(seed), stance)
    aside = persona_prose(drawn)
    assert aside.startswith(f"You are {drawn.name}.") and "=" not in aside
    words = set(re.findall(r"[a-z_]+", aside.lower()))
    assert not {label for label in _LABELS if " " not in label} & words, aside
    assert "run on" not in aside.lower()
    count = ("one", "two", "three", "four", "five")[drawn.patience - 1]
    assert f"give up after {count} unhelpful" in aside
    assert drawn.aside() == aside


# --------------------------------------------------------------------------- template


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**31), stance=st.sampled_from(STANCES),
       texture=st.sampled_from(TEXTURES), tone=st.sampled_from(TONES),
       length=st.sampled_from(LENGTHS), history=st.sampled_from(HISTORIES))
def test_the_opening_reads_as_its_stance_and_history(seed: int, stance: str, texture: str,
                                                      tone: str, length: str,
                                                      history: str) -> None:
    who = persona(stance=stance, texture=texture, tone=tone, length=length)
    talk = Conversation(plan(who, seed=seed, history=history))
    opening = talk.open().text
    # the phrase bank is written to the stance rules; the learned reader on top of them
    # reads most but not all openings alike (test_the_default_reader_reads_most_openings)
    assert pattern_stance(opening) == stance, opening
    replies = [talk.agent(text).text for text in (
        "Let me check that for you.", "What's your order number?",
        "Sorry, the system had an error.", "What is your date of birth?",
        "Shall I go ahead?", "Your refund has been issued.")]
    read = situate(first_ask=opening, user_turns=[opening, *replies], steps=[],
                   policy_rule="x").history
    assert read == history, (opening, replies)  # the processor reads every history said


def test_the_default_reader_reads_most_openings_as_their_stance() -> None:
    """The learned reader (processor.stance_learned) generalises beyond the rules and so
    disagrees with them on some template openings: mostly ordinary ones in a sarcastic or
    anxious tone, which it reads as frustrated or adversarial. Measured 2026-12-02 on this
    sample: ordinary 0.81, every other stance 1.00."""
    draw = random.Random(7)
    read: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for _ in range(700):
        stance = draw.choice(STANCES)
        who = persona(stance=stance, texture=draw.choice(TEXTURES), tone=draw.choice(TONES),
                      length=draw.choice(LENGTHS))
        opening = Conversation(plan(who, seed=draw.randrange(2**31),
                                    history=draw.choice(HISTORIES))).open().text
        total[stance] += 1
        read[stance] += classify_stance(opening) == stance
    for stance in STANCES:
        floor = 0.7 if stance == "ordinary" else 0.95
        assert read[stance] / total[stance] >= floor, (stance, read[stance], total[stance])


def test_the_same_seed_gives_the_same_person() -> None:
    def run(seed: int) -> list[str]:
        talk = Conversation(plan(persona(texture="typo", tone="anxious"), seed=seed))
        texts = [talk.open().text]
        for text in ("What's your order number?", "Sorry, that failed.", "Sorry, that failed."):
            texts.append(talk.agent(text).text)
        return texts

    assert run(3) == run(3)
    assert len({tuple(run(seed)) for seed in range(8)}) > 4


@pytest.mark.parametrize("texture", TEXTURES)
def test_the_texture_holds_on_every_turn(texture: str) -> None:
    ask_words = {"want", "refund", "order", "blender", "arrived", "damaged"}
    misspelled = with_emoji = total = 0
    for seed in range(6):
        talk = Conversation(plan(persona(texture=texture, tone="friendly", patience=5),
                                 seed=seed))
        turns = [talk.open().text] + [talk.agent(text).text for text in (
            "Could you give me your email address?", "Sorry, something went wrong.",
            "Could you confirm the order number?", "Sorry, the system is down right now.")]
        misspelled += not ask_words <= set(re.findall(r"[a-z]+", turns[0].lower()))
        for text in turns:
            bare = without_facts(text)
            total += 1
            with_emoji += "😊" in text
            if texture == "lowercase":
                assert bare == bare.lower() and "." not in bare, text
            else:
                assert text[0] == text[0].upper(), text
            if texture == "formal":
                assert not re.search(r"\b(I'm|don't|can't|I've|that's|it's)\b", bare), text
            if texture == "clipped":
                assert not re.search(r"\b(the|a|an|please)\b", bare, re.I), text
        if texture == "formal":
            assert turns[0].endswith("Kind regards,\nHana")
    assert (misspelled >= 3) is (texture == "typo")
    assert (with_emoji >= total * 0.6) is (texture == "emoji")
    assert with_emoji == 0 or texture == "emoji"


def test_typos_never_touch_the_facts() -> None:
    for seed in range(30):
        talk = Conversation(plan(persona(texture="typo", length="long"), seed=seed))
        opening = talk.open().text
        answer = talk.agent("What is your email address and order number?").text
        assert "ana.k@mailbox.test" in opening + answer and "ORD-4821" in opening + answer


def test_facts_are_given_when_asked() -> None:
    talk = Conversation(plan(persona(length="short"), seed=2, ask="Refund my order please."))
    talk.open()
    assert "ana.k@mailbox.test" in talk.agent("What email is on the account?").text
    assert "ORD-4821" in talk.agent("And which order is it? I need the order number.").text
    again = talk.agent("Can you give me the order number again?")
    assert "already" in again.text and "ORD-4821" in again.text and not again.leaves


def test_a_question_about_an_unknown_detail_costs_patience() -> None:
    talk = Conversation(plan(persona(patience=2), seed=1))
    talk.open()
    first = talk.agent("What is your date of birth?")
    assert not first.leaves and re.search(r"don't have|not a clue", first.text.lower())
    second = talk.agent("I still need your mother's maiden name, what is it?")
    assert second.leaves and not second.done


@pytest.mark.parametrize("patience", [1, 2, 3, 4, 5])
def test_patience_counts_unhelpful_replies(patience: int) -> None:
    talk = Conversation(plan(persona(patience=patience), seed=patience))
    talk.open()
    replies = [talk.agent(f"Sorry, an error occurred (code {n}). Please try again later.")
               for n in range(patience)]
    assert [turn.leaves for turn in replies] == [False] * (patience - 1) + [True]
    assert not any(turn.done for turn in replies)


def test_a_repeated_agent_message_is_unhelpful() -> None:
    talk = Conversation(plan(persona(patience=2), seed=4))
    talk.open()
    assert not talk.agent("Let me look into it.").leaves
    assert not talk.agent("Let me look into it.").leaves  # 2 -> 1
    assert talk.agent("Let me look into it.").leaves


@pytest.mark.parametrize(("text", "done"), [
    ("Your refund has been issued; it takes 3-5 days.", True),
    ("All done! Anything else I can help with?", True),
    ("I've processed the refund for order ORD-4821.", True),
    ("The order is now cancelled.", True),
    ("I've passed this to a colleague in billing who will email you.", True),
    ("Your refund has not been issued yet.", False),
    ("Sorry, I couldn't complete the refund.", False),
    ("Shall I go ahead with the refund of 20 EUR?", False),
    ("Your order has been delayed by the courier.", False),
])
def test_done_claims_end_with_thanks(text: str, done: bool) -> None:
    talk = Conversation(plan(persona(tone="polite"), seed=5))
    talk.open()
    turn = talk.agent(text, with_tool=True, tool="issue_refund",
                      result='{"order_id": "ORD-4821", "status": "refunded"}')
    assert turn.done is done and not turn.leaves
    if done:
        assert re.search(r"thank|bye", turn.text.lower())


def test_a_confirmation_question_gets_a_yes() -> None:
    talk = Conversation(plan(seed=6))
    talk.open()
    assert talk.agent("Would you like me to refund order ORD-4821?").text.lower().startswith(
        "yes")


def test_an_informative_answer_ends_a_question_goal() -> None:
    talk = Conversation(plan(tool="lookup_order", seed=7, ask="Where is my order?"))
    talk.open()
    assert not talk.agent("Let me check the status of your order for you now.").done
    assert talk.agent("Your order shipped with UPS yesterday and arrives on Friday.",
                      with_tool=True).done


def test_a_contradiction_is_taken_back_on_the_first_reply() -> None:
    talk = Conversation(plan(persona(length="short"), seed=8, history="contradicts_earlier"))
    opening = talk.open().text
    wrong = re.search(r"ORD-\d{4}", opening)
    assert wrong and wrong.group(0) != "ORD-4821"
    reply = talk.agent("Your refund has been issued.").text
    assert reply.startswith("Actually, I meant ORD-4821") and wrong.group(0) in reply
    assert not talk.turns[-1].done


# --------------------------------------------------------------------------- asks and history

PASSENGER = {"first_name": "Ana", "last_name": "Costa", "email": "ana.costa@mailbox.test"}
BOOKED = {"flight_id": "FLI-64442", "passenger": json.dumps(PASSENGER)}
_SCHEMA_TALK = re.compile(r"I need help with|returns a|no arguments|health check|;", re.I)


@pytest.mark.parametrize(("tool", "facts", "said"), [
    ("cancel_booking", {"booking_ref": "BK-48213", "reason": "other"},
     "I'd like to cancel my booking BK-48213."),
    ("get_booking", {"pnr": "X7KQ2M"}, "I'd like to look up my booking X7KQ2M."),
    ("create_booking", BOOKED, "I'd like to create a booking for my flight FLI-64442."),
    ("issue_refund", {"order_id": "A-1001"}, "I'd like to get a refund for my order A-1001."),
    ("search_flights", {"origin": "Porto"}, "I'd like to find flights."),
    ("checkOrderStatus", {"orderNo": "A-1001"}, "I'd like to check on my order A-1001."),
    ("ping", {}, "I'd like to ask about ping."),
    (None, {}, "I'd like to get some help."),
])
def test_an_ask_from_a_tool_name_reads_like_a_person(tool: str | None, facts: dict[str, str],
                                                     said: str) -> None:
    assert spoken_ask(tool, facts) == said


@pytest.mark.parametrize(("tool", "ask", "facts"), [
    ("create_booking", "I need help with book a flight for a passenger; returns a booking "
     'reference; my flight id is FLI-64442, my passenger is {"first_name":"Ana"}.', BOOKED),
    ("ping", "I'm asking again about this. I need help with health check, no arguments.", {}),
])
def test_a_templated_ask_is_said_the_way_a_person_would(tool: str, ask: str,
                                                        facts: dict[str, str]) -> None:
    for seed in range(20):
        who = sample_persona(random.Random(seed), "ordinary")
        rollout = plan(who, seed=seed, tool=tool, facts=facts, ask=ask)
        opening = Conversation(rollout).open().text
        assert not _SCHEMA_TALK.search(opening) and "{" not in opening, opening
        brief = person_brief(rollout)
        assert not _SCHEMA_TALK.search(brief.split("What you want: ")[1].split(".")[0])
    source = replace(plan(tool=tool, facts=facts, ask="Book me on FLI-64442 please"),
                     goal=Goal(ask="Book me on FLI-64442 please", tool=tool, facts=facts,
                               source_ask="Book me on A-1 please"))
    assert "Book me on FLI-64442 please" in Conversation(source).open().text


_ALREADY_SAID = ("I'm asking again about this. I need help with refund an order.",
                 "I already contacted you about this yesterday. I want to cancel order "
                 "ORD-4821 before it ships.")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), ask=st.sampled_from(_ALREADY_SAID),
       stance=st.sampled_from(STANCES))
def test_the_history_is_said_once(seed: int, ask: str, stance: str) -> None:
    who = replace(sample_persona(random.Random(seed), stance), texture="plain")
    rollout = plan(who, seed=seed, history="repeat_visit", ask=ask)
    if not ask.startswith("I'm asking"):
        rollout = replace(rollout, goal=replace(rollout.goal, source_ask=ask))
    opening = Conversation(rollout).open().text
    said = [s for s in re.split(r"(?<=[.!?])\s+", opening)
            if re.search(r"\bagain\b|already contacted|second time", s, re.I)]
    assert len(said) == 1, opening
    assert situate(first_ask=opening, user_turns=[opening], steps=[],
                   policy_rule="x").history == "repeat_visit"


def test_nested_facts_are_said_in_words() -> None:
    talk = Conversation(plan(persona(length="short"), seed=3, tool="create_booking",
                             facts=BOOKED, ask="I want to book FLI-64442."))
    talk.open()
    answer = talk.agent("Who is travelling? What is the passenger's name and email?")
    assert "first name Ana, last name Costa, email ana.costa@mailbox.test" in answer.text
    assert "{" not in answer.text


# --------------------------------------------------------------------------- patience

_NON_ANSWERS = ("Here's what I found for order ORD-4821: status shipped, carrier UPS.",
                "To recap: Here's what I found for order ORD-4821: status shipped, carrier UPS.",
                "Let me check that for you.", "I'm looking into it now.",
                "The order ORD-4821 is with the courier.", "Shall I go ahead with that?",
                "What's your order number?", "Could you give me your email address?")


def test_a_patience_one_person_does_not_sit_through_the_same_answer() -> None:
    """The reviewer's transcript: an action goal, the agent restating a lookup."""
    talk = Conversation(plan(persona(patience=1, stance="frustrated", tone="frustrated"),
                             seed=1, tool="cancel_order"))
    talk.open()
    turns = [talk.agent(_NON_ANSWERS[n % 2]) for n in range(5)]
    assert [turn.leaves for turn in turns[:2]] == [False, True]


@pytest.mark.parametrize("patience", [1, 2, 3, 4, 5])
def test_patience_bounds_replies_that_move_nothing(patience: int) -> None:
    talk = Conversation(plan(persona(patience=patience), seed=patience))
    talk.open()
    texts = ["Let me check that for you.", "I'm looking into it now.",
             "The order is with the courier.", "It is in our system.", "I see the order.",
             "Checking with the warehouse.", "Still looking."]
    turns = [talk.agent(text) for text in texts[: patience + 1]]
    assert [turn.leaves for turn in turns] == [False] * patience + [True]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), patience=st.integers(1, 5),
       picks=st.lists(st.integers(0, len(_NON_ANSWERS) - 1), min_size=30, max_size=30))
def test_no_person_stays_forever_without_progress(seed: int, patience: int,
                                                  picks: list[int]) -> None:
    """Whatever non-answers come, a person stays at most ``patience`` unhelpful replies
    plus one free stall per step forward (two facts to give, one yes: three steps)."""
    who = replace(sample_persona(random.Random(seed), "ordinary"), patience=patience)
    talk = Conversation(plan(who, seed=seed))
    talk.open()
    turns = []
    for pick in picks:
        turns.append(talk.agent(_NON_ANSWERS[pick]))
        assert not turns[-1].done
        if turns[-1].leaves:
            break
    assert turns[-1].leaves and len(turns) <= patience + 7, talk.turns


def test_the_person_only_reads_what_the_agent_wrote() -> None:
    talk = Conversation(plan(seed=9))
    talk.open()
    talk.messages.append(Message(role="tool", content="Your refund has been issued.",
                                 tool_call_id="x"))
    turn = talk.agent("Let me look at that.")
    assert not turn.done


def test_a_template_turn_is_fast() -> None:
    rng = random.Random(1)
    began, turns = time.process_time(), 0
    for seed in range(200):
        talk = Conversation(plan(sample_persona(rng, rng.choice(STANCES)), seed=seed,
                                 history=rng.choice(HISTORIES)))
        talk.open()
        for text in ("Could you share your order number?", "Let me check.",
                     "Sorry, that failed.", "Your refund has been issued."):
            if talk.turns[-1].done or talk.turns[-1].leaves:
                break
            talk.agent(text)
        turns += len(talk.turns)
    per_turn = (time.process_time() - began) / turns
    assert per_turn < 0.001, f"{per_turn * 1e3:.3f} ms per turn (aim: well under 0.2 ms)"


# --------------------------------------------------------------------------- model person


class ScriptedBackend:
    """A chat backend that answers from a script and keeps the requests it was sent."""

    def __init__(self, replies: Sequence[str]) -> None:
        self.spec = "scripted:person"
        self.model = "scripted"
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return ModelReply(message=Message(role="assistant", content=self.replies.pop(0)),
                          finish_reason="stop", usage=TokenUsage(40, 9), model="scripted",
                          cost_usd=0.002)

    async def aclose(self) -> None:
        return None


def test_the_scripted_backend_is_a_chat_backend() -> None:
    assert isinstance(ScriptedBackend([]), ChatBackend)


def test_model_person_flips_roles_and_briefs_in_prose() -> None:
    backend = ScriptedBackend(["hi, refund for my blender pls", "it's ORD-4821",
                               f"great, thanks! {DONE_TOKEN}"])
    writer = ModelPerson(backend)
    assert writer.spec == "scripted:person"
    who = persona(stance="hurried")
    session = writer.start(plan(who, seed=21, history="repeat_visit"))
    opening = asyncio.run(session.opening())
    assert (opening.text, opening.done, opening.leaves) == ("hi, refund for my blender pls",
                                                            False, False)
    assert (opening.usage, opening.cost_usd) == (TokenUsage(40, 9), 0.002)
    system = backend.requests[0].messages[0]
    assert system.role == "system" and system.content is not None
    assert persona_prose(who) in system.content and ASK in system.content
    assert "ORD-4821" in system.content and "second time" in system.content
    assert DONE_TOKEN in system.content and LEAVE_TOKEN in system.content
    assert not backend.requests[0].tools and backend.requests[0].seed is not None

    call = ToolCall("c1", "lookup_order", "{}")
    transcript = [Message(role="system", content="agent prompt"),
                  Message(role="user", content=opening.text),
                  Message(role="assistant", tool_calls=(call,)),
                  Message(role="tool", content='{"secret": 1}', tool_call_id="c1"),
                  Message(role="assistant", content="Which order?")]
    turn = asyncio.run(session.reply(transcript))
    sent = backend.requests[1].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2].content == opening.text
    # the agent's words, then what the person can see of the world (not the tool result)
    assert sent[3].content == "Which order?\n\n[On your side nothing has changed.]"
    assert "agent prompt" not in str(sent) and "secret" not in str(sent)
    assert "believe it over the assistant's words" in (system.content or "")
    assert turn.text == "it's ORD-4821" and not turn.done

    refund = ToolCall("c2", "issue_refund", '{"order_id": "ORD-4821"}')
    transcript += [Message(role="user", content=turn.text),
                   Message(role="assistant", tool_calls=(refund,)),
                   Message(role="tool", content='{"status": "refunded"}', tool_call_id="c2"),
                   Message(role="assistant", content="Refunded.")]
    last = asyncio.run(session.reply(transcript))
    assert (last.text, last.done, last.leaves) == ("great, thanks!", True, False)
    assert backend.requests[2].messages[-1].content == (
        "Refunded.\n\n[On your side you can see that it has been done.]")


@pytest.mark.parametrize(("raw", "text", "done", "leaves"), [
    (f"forget it. {LEAVE_TOKEN}", "forget it.", False, True),
    ("ok bye ## leave ##", "ok bye", False, True),
    (DONE_TOKEN, "", True, False),
    ("thanks ###done###\n", "thanks", True, False),
    ("still waiting", "still waiting", False, False),
])
def test_model_person_end_tokens_are_stripped(raw: str, text: str, done: bool,
                                              leaves: bool) -> None:
    session = ModelPerson(ScriptedBackend([raw])).start(plan())
    turn = asyncio.run(session.opening())
    assert (turn.text, turn.done, turn.leaves) == (text, done, leaves)


def test_model_person_refuses_an_empty_message() -> None:
    session = ModelPerson(ScriptedBackend(["  "])).start(plan())
    with pytest.raises(BackendError, match=r"scripted:person.*empty"):
        asyncio.run(session.opening())


def test_paraphrase_keeps_identifiers_and_reports_usage() -> None:
    backend = ScriptedBackend(['"need my money back for ORD-4821, blender came broken"'])
    text, usage, cost = asyncio.run(paraphrase(
        backend, "I want a refund for order ORD-4821, the blender arrived damaged.",
        persona(texture="lowercase", name="Ivo"), seed=4))
    assert text == "need my money back for ORD-4821, blender came broken"
    assert (usage, cost) == (TokenUsage(40, 9), 0.002)
    request = backend.requests[0]
    assert request.seed == 4 and request.messages[1].content is not None
    assert "ORD-4821" in request.messages[1].content
    assert "You are Ivo." in str(request.messages[0].content)


@pytest.mark.parametrize(("reply", "problem"), [
    ("", "empty"), ("i want my money back for the blender", "dropped ORD-4821")])
def test_paraphrase_failures_are_loud(reply: str, problem: str) -> None:
    with pytest.raises(BackendError, match=problem):
        asyncio.run(paraphrase(ScriptedBackend([reply]), "Refund ORD-4821, please.",
                               persona(), seed=1))


# --------------------------------------------------------------------------- goal met?

REFUNDED = '{"order_id": "ORD-4821", "status": "refunded"}'
_SATISFIED = re.compile(r"perfect|amazing|relief|thanks so much|thank you so much|"
                        r"that's all i needed|thanks very much")


@pytest.mark.parametrize("tone", TONES)
def test_thanks_only_when_the_world_shows_the_goal_met(tone: str) -> None:
    """The issue: "Perfect, thanks so much! Bye!" after no exchange happened. A claim of
    success with no call, or after a failed call, gets no thanks: the person says it is
    not done and loses patience; after the asked tool succeeded, thanks."""
    claim = "Done! I've processed the refund for order ORD-4821."
    no_call = Conversation(plan(persona(tone=tone, patience=3), seed=5))
    no_call.open()
    turn = no_call.agent(claim)
    assert not turn.done and not _SATISFIED.search(turn.text.lower()), turn
    failed = Conversation(plan(persona(tone=tone, patience=3), seed=5))
    failed.open()
    turn = failed.agent(claim, with_tool=True, tool="issue_refund",
                        result="Error: Non-pending order cannot be refunded")
    assert not turn.done and not turn.leaves, turn
    assert re.search(r"sure|through|seeing|check", turn.text.lower()), turn.text
    lookup_only = Conversation(plan(persona(tone=tone, patience=3), seed=5))
    lookup_only.open()
    assert not lookup_only.agent(claim, with_tool=True).done  # a lookup is no refund
    met = Conversation(plan(persona(tone=tone, patience=3), seed=5))
    met.open()
    turn = met.agent(claim, with_tool=True, tool="issue_refund", result=REFUNDED)
    assert turn.done and re.search(r"thank|bye", turn.text.lower())


def test_a_person_told_it_was_already_done_accepts_without_delight() -> None:
    for seed in range(20):
        talk = Conversation(plan(persona(tone="friendly"), seed=seed))
        talk.open()
        turn = talk.agent("It looks like order ORD-4821 was already refunded, so there was "
                          "nothing more to do.", with_tool=True, tool="issue_refund",
                          result='{"order_id": "ORD-4821", "status": "already_refunded"}')
        assert turn.done and "already" in turn.text.lower(), turn
        assert not _SATISFIED.search(turn.text.lower())


def test_insisting_costs_patience_until_the_person_leaves() -> None:
    talk = Conversation(plan(persona(patience=2), seed=3))
    talk.open()
    turns = [talk.agent("All done! Your refund has been issued." + " " * n) for n in range(3)]
    assert not any(t.done for t in turns)
    assert any(t.leaves for t in turns)


@pytest.mark.parametrize(("facts", "question", "value"), [
    ({"order_id": "#W8178512"}, "Could you please provide your order ID?", "#W8178512"),
    ({"order_id": "#W8178512", "email": "mia.li3818@example.com"},
     "Sure — could you share the email address on your account so I can look it up?",
     "mia.li3818@example.com"),
    ({"reservation_id": "8JX2WO"}, "What's your reservation code?", "8JX2WO"),
    ({"customer_id": "C1001", "line_id": "L1002"},
     "Happy to help with that. To get started, I'll need a few details:\n\n- Your line ID"
     "\n\nOnce I have that, I can proceed.", "L1002"),
    ({"phone_number": "555-123-2002"}, "May I have the phone number on the account?",
     "555-123-2002"),
])
@pytest.mark.parametrize("texture", TEXTURES)
def test_the_fact_asked_for_is_given_exactly(facts: dict[str, str], question: str,
                                             value: str, texture: str) -> None:
    for seed in range(4):
        talk = Conversation(plan(persona(texture=texture, length="short"), seed=seed,
                                 facts=facts, tool="cancel_pending_order",
                                 ask="I need some help with my account."))
        opening = talk.open()
        turn = talk.agent(question)
        assert value in turn.text or (value in opening.text and "already" in turn.text), (
            texture, seed, opening.text, turn.text)
        assert not turn.done and not turn.leaves


def test_a_detail_the_person_lacks_is_not_answered_with_another() -> None:
    talk = Conversation(plan(seed=4, facts={"customer_id": "C1001"}, ask="Help with roaming."))
    talk.open()
    turn = talk.agent("Could you give me the phone number on the account?")
    assert "C1001" not in turn.text
