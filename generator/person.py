"""The simulated person: sampled personas and the writers that speak for them.

A persona is *sampled* (:func:`sample_persona`), never described by hand, and is the same
person on every turn. Two writers speak for it:

- :class:`~generator.template_person.TemplatePerson` (spec ``template``): offline and fast.
  It renders the goal's ask
  through the persona (how they type, their tone, the stance and history the rollout aims
  at), answers questions with the facts it holds (exactly as held: ``#W8178512``), says
  thanks only when the world's answers in the transcript show its goal met (the asked
  tool succeeded), says the thing is not done when the agent claims it is and the world
  says otherwise, reacts as blocked (not as "already done") when the world refused the
  goal because the record is in another state ("delivered: cannot be cancelled"),
  and loses patience with unhelpful replies until it leaves. Stance and history
  phrases carry the keywords the processor's classifiers read (``asap``, ``I think``,
  ``again``, ``actually, I meant``...), so a simulated conversation lands on the same axis
  values a production one would.
- :class:`ModelPerson`: a chat model playing the person from a prose brief, with roles
  flipped (the agent's messages are its ``user`` turns). It ends a conversation by writing
  :data:`DONE_TOKEN` or :data:`LEAVE_TOKEN`, which are stripped from the text.

:func:`paraphrase` rewrites an ask in a persona's voice through a writer model.
:func:`spoken_ask` says what a person wants from a tool's name and their facts ("I'd like
to cancel my booking BK-48213."); :func:`goal_ask` uses it in place of an ask the planner
templated from a tool description; :func:`spoken_fact` says a nested (JSON object) fact in
words.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import orjson

from generator import _person_phrases as P
from generator._progress import PROGRESS, goal_progress
from generator._world_values import (
    is_id_like,
    subject_noun,
    tool_kind,
    tool_verb,
    words,
)
from generator.errors import BackendError
from generator.records import (
    ChatBackend,
    Goal,
    Message,
    ModelReply,
    ModelRequest,
    Persona,
    PlannedRollout,
    Role,
    TokenUsage,
)

TEXTURES = ("plain", "lowercase", "clipped", "run_on", "typo", "formal", "emoji")
TONES = ("polite", "curt", "sarcastic", "frustrated", "anxious", "friendly")
LENGTHS = ("short", "medium", "long")
NAMES = ("Ana", "Ben", "Chloe", "Dev", "Emil", "Fatima", "Goran", "Hana", "Ivo", "June",
         "Kofi", "Lena", "Mateo", "Nia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq")
STANCES = ("ordinary", "hurried", "unsure", "mistaken", "frustrated", "adversarial",
           "conflicting")
"""User-stance axis values the template person can show (others read as ordinary)."""

DONE_TOKEN = "###DONE###"  # noqa: S105 (not a secret)
"""What a model person writes at the end of its message when its goal is met."""
LEAVE_TOKEN = "###LEAVE###"  # noqa: S105 (not a secret)
"""What a model person writes at the end of its message when it gives up."""

# Weights: most people type plainly and politely; the rest is spread so every texture
# and tone shows up often enough to matter. The stance tilts the tone (a frustrated
# stance rarely comes with a polite tone), and impatient stances lose patience sooner.
_TEXTURE_WEIGHTS = {"plain": 30, "lowercase": 18, "clipped": 12, "run_on": 9, "typo": 13,
                    "formal": 10, "emoji": 8}
_TONE_WEIGHTS = {"polite": 26, "curt": 18, "sarcastic": 10, "frustrated": 14, "anxious": 12,
                 "friendly": 20}
_TONE_TILT = {"frustrated": {"frustrated": 3.0, "sarcastic": 2.0, "polite": 0.4},
              "hurried": {"curt": 2.5, "friendly": 0.6},
              "unsure": {"anxious": 2.0}, "mistaken": {"anxious": 1.5, "polite": 1.3},
              "adversarial": {"curt": 2.0, "sarcastic": 2.0, "anxious": 0.3}}
_PATIENCE_WEIGHTS = {1: 10, 2: 22, 3: 30, 4: 23, 5: 15}
_LENGTH_WEIGHTS = {"short": 45, "medium": 40, "long": 15}


def _pick(rng: random.Random, weights: Mapping[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def sample_persona(rng: random.Random, stance: str) -> Persona:
    """Draw a persona for a rollout that aims at ``stance`` (a user-stance axis value)."""
    name = rng.choice(NAMES)
    texture = _pick(rng, _TEXTURE_WEIGHTS)
    tilt = _TONE_TILT.get(stance, {})
    tone = _pick(rng, {t: w * tilt.get(t, 1.0) for t, w in _TONE_WEIGHTS.items()})
    patience = int(_pick(rng, {str(k): v for k, v in _PATIENCE_WEIGHTS.items()}))
    if stance in ("frustrated", "hurried") or tone in ("frustrated", "curt"):
        patience = max(1, patience - 1)
    lengths = dict(_LENGTH_WEIGHTS)
    if texture == "clipped":
        lengths.update(short=80, long=3)
    elif texture == "formal":
        lengths.update(short=15)
    return Persona(name=name, texture=texture, tone=tone, patience=patience,
                   length=_pick(rng, lengths), stance=stance)


# --------------------------------------------------------------------------- prose


# --------------------------------------------------------------------------- protocols


@dataclass(frozen=True)
class PersonTurn:
    """One message of the simulated person."""

    text: str
    """What the person writes (the end tokens of a model person stripped)."""
    done: bool
    """The goal is met: the person says thanks or bye (``ended_by=user_done``)."""
    leaves: bool
    """The person gave up (``ended_by=user_left``)."""
    usage: TokenUsage
    """Tokens the writer model used for this turn (zero for the template person)."""
    cost_usd: float
    """Their price."""


class PersonSession(Protocol):
    """The person of one rollout, turn by turn."""

    async def opening(self) -> PersonTurn:
        """The first message: the goal's ask, in persona."""
        ...

    async def reply(self, transcript: Sequence[Message]) -> PersonTurn:
        """The next message, given the conversation so far as the agent sees it (the
        person reads only user and assistant text)."""
        ...


class PersonWriter(Protocol):
    """Who speaks for the simulated person (``template`` or a model)."""

    spec: str
    """The spec that rebuilds it."""

    def start(self, plan: PlannedRollout) -> PersonSession:
        """The person of one planned rollout (persona, goal, situation and seed)."""
        ...


def _agent_text(transcript: Sequence[Message]) -> str:
    """What the agent wrote since the person's last message."""
    texts: list[str] = []
    for message in reversed(transcript):
        if message.role == "user":
            break
        if message.role == "assistant" and message.content:
            texts.append(message.content)
    return "\n".join(reversed(texts))


_SEEN = {"met": "[On your side you can see that it has been done.]",
         "already": "[On your side you can see it had already been done before today.]",
         "blocked": "[On your side you can see it cannot be done as things stand: your "
                    "record, or a rule, does not allow it.]",
         "partial": "[On your side you can see only part of it is done.]",
         "failed": "[On your side nothing has changed.]",
         "none": "[On your side nothing has changed.]"}
"""What a model person is told it can see of the world (the template person reads
:func:`goal_progress` directly)."""


_SPOKEN = {"ref": "reference", "no": "number", "num": "number", "nr": "number",
           "pnr": "booking reference", "sku": "SKU", "dob": "date of birth"}
_ADDRESS_PARTS = frozenset({"line1", "line2", "line3", "street", "city", "town", "postcode",
                            "zip", "postal_code", "zip_code", "country", "state", "region"})


def _label(key: str) -> str:
    """A fact key as words: ``order_id``/``orderId`` → ``order id``, ``booking_ref`` →
    ``booking reference``."""
    return " ".join(_SPOKEN.get(word, word) for word in words(key)) or key


def spoken_fact(value: str) -> str:
    """A fact as a person says it: a JSON object fact (a nested argument such as a
    passenger) in words, ``first name Ana, last name Costa, email ana.c@mailbox.test``;
    an address as its parts joined with commas; anything else as it is."""
    if not value.startswith(("{", "[")):
        return value
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return value
    items = parsed if isinstance(parsed, list) else [parsed]
    said = []
    for item in items:
        if not isinstance(item, dict):
            said.append(str(item))
        elif set(item) <= _ADDRESS_PARTS:
            said.append(", ".join(str(v) for v in item.values() if v is not None))
        else:
            said.append(", ".join(
                f"{_label(k)} {_nested(v)}" for k, v in item.items() if v is not None))
    return "; ".join(said)


def _nested(value: object) -> str:
    return spoken_fact(orjson.dumps(value).decode()) if isinstance(value, dict | list) \
        else str(value)


def spoken_ask(tool: str | None, facts: Mapping[str, str], rng: random.Random | None = None
               ) -> str:
    """What a person asking for ``tool`` says, from the tool's name and the facts they
    hold: ``cancel_booking`` with a ``booking_ref`` fact → "I'd like to cancel my booking
    BK-12345."; ``search_flights`` → "I'd like to find flights." (the frame is drawn from
    ``rng``, the first one without it). Never the schema's words ("returns a booking
    reference", "no arguments"); other facts are the person's to give as the talk goes."""
    frame = rng.choice(P.ASK_FRAMES) if rng is not None else P.ASK_FRAMES[0]
    if not tool:
        return frame.format("get some help")
    verb = tool_verb(tool)
    parts = [word for word in words(tool) if word != verb and word not in (
        "status", "details", "detail", "info", "information", "by", "for", "of", "the", "a",
        "request", "data", "record", "records")]
    if verb is None:
        return frame.format(f"ask about {' '.join(parts) or 'something'}")
    noun = " ".join(parts)
    head = parts[-1] if parts else ""
    plural = head.endswith("s") and not head.endswith(("ss", "us"))
    one = head[:-1] if plural else head
    spoken = P.VERB_WORDS.get(verb, verb)
    if "status" in words(tool) and tool_kind(tool) == "read":
        spoken = "check on"
    ids = [(subject_noun("", key), value, key) for key, value in facts.items()
           if is_id_like(key, None, value) and not value.startswith(("{", "["))]
    ident = next((value for thing, value, _ in ids if thing.removesuffix("s") == one
                  or thing in ("pnr", "confirmation", "locator", "record")), None)
    if not noun:
        return frame.format(spoken if spoken != "look up" else "look something up")
    if tool_kind(tool) == "create" or verb in ("issue", "request"):
        article = "" if plural else "an " if noun[0] in "aeiou" else "a "
    elif verb == "list" or (not plural and (ident or one in P.PERSONAL_NOUNS)):
        article = "my "
    else:
        article = "" if plural else "the "
    phrase = f"{spoken} {article}{noun}"
    if ident:
        phrase += f" {ident}"
    elif ids:  # what it is about: "get a refund for my order A-1001"
        thing, value, key = ids[0]
        mine = "my " if thing in P.PERSONAL_NOUNS else "the "
        said = " ".join(_SPOKEN.get(w, w) for w in words(key) if w not in ("id", "uuid", "guid"))
        phrase += f" for {mine}{said} {value}"
    return frame.format(phrase)


_PLANNER_ASK = re.compile(r"^(?:I'm asking again about this\.\s*)?I need help with ")


def goal_ask(goal: Goal, rng: random.Random | None = None) -> str:
    """The goal's ask as the person puts it: a source conversation's ask as it is; an ask
    the planner templated from the tool's description ("I need help with book a flight
    for a passenger; returns a booking reference") said the way a person would
    (:func:`spoken_ask`)."""
    if goal.source_ask is None and _PLANNER_ASK.match(goal.ask):
        return spoken_ask(goal.tool, goal.facts, rng)
    return goal.ask


# --------------------------------------------------------------------------- template


# --------------------------------------------------------------------------- model

_END = re.compile(r"#{2,}\s*(DONE|LEAVE)\s*#{2,}", re.I)
_OPENER = "[The support chat is open. Write your first message to the assistant.]"


def person_brief(plan: PlannedRollout) -> str:
    """The system message a model person gets: persona, goal, facts, situation, rules."""
    goal, persona = plan.goal, plan.persona
    facts = "; ".join(f"your {_label(key)} is {spoken_fact(value)}"
                      for key, value in goal.facts.items())
    history = plan.situation.get("history", "fresh")
    lines = [P.persona_prose(persona), "", "You are chatting with a customer support "
             f"assistant. What you want: {goal_ask(goal)}"]
    if facts:
        lines.append(f"What you know and can tell when asked: {facts}. Give a detail when "
                     "it is asked for or clearly needed. Never make up any other number, id "
                     "or detail: if asked for something you do not know, say you do not "
                     "have it.")
    if history == "contradicts_earlier" and goal.facts:
        key, value = next(iter(goal.facts.items()))
        lines.append(f"In your first message give your {_label(key)} with one character "
                     f"wrong; in your next message correct yourself, starting with "
                     f"\"Actually, I meant {value}\".")
    elif history in P.HISTORY_BRIEF:
        lines.append(P.HISTORY_BRIEF[history])
    lines.append(f"Write only your own next message, as {persona.name}, in your voice. Never "
                 "write the assistant's part, never mention these instructions. When the "
                 "assistant has done what you want, thank them briefly and end your message "
                 f"with {DONE_TOKEN}. If you give up, write a short parting line and end it "
                 f"with {LEAVE_TOKEN}. A note in square brackets tells you what you can see "
                 "on your side (an e-mail, your account page): believe it over the "
                 "assistant's words; if it says nothing has changed, the thing is not done, "
                 "so say so instead of thanking them; if it says it cannot be done, react "
                 "as you would: ask what else can be done, ask for someone who can help, "
                 f"or accept it and end your message with {DONE_TOKEN}. Never repeat the "
                 "note.")
    return "\n".join(lines)


def flip_roles(transcript: Sequence[Message]) -> list[Message]:
    """The conversation from the person's side: the agent's text as ``user``, the
    person's as ``assistant``; tool traffic and system messages dropped, runs merged."""
    flipped: list[Message] = []
    for message in transcript:
        if message.role not in ("user", "assistant") or not message.content:
            continue
        role: Role = "assistant" if message.role == "user" else "user"
        if flipped and flipped[-1].role == role:
            flipped[-1] = Message(role=role, content=f"{flipped[-1].content}\n\n"
                                  f"{message.content}")
        else:
            flipped.append(Message(role=role, content=message.content))
    return flipped


class ModelPerson:
    """A chat model speaking for the person (spec: the backend's spec)."""

    def __init__(self, backend: ChatBackend, *, temperature: float | None = 0.8,
                 max_tokens: int = 300) -> None:
        """``backend`` writes the person's messages."""
        self.backend = backend
        self.spec = backend.spec
        self.temperature = temperature
        self.max_tokens = max_tokens

    def start(self, plan: PlannedRollout) -> PersonSession:
        """The model person of one rollout."""
        return _ModelSession(self, plan)


class _ModelSession:
    def __init__(self, writer: ModelPerson, plan: PlannedRollout) -> None:
        self._writer = writer
        self._seed = plan.seed
        self._goal = plan.goal
        self._system = Message(role="system", content=person_brief(plan))

    async def opening(self) -> PersonTurn:
        return await self._ask([Message(role="user", content=_OPENER)])

    async def reply(self, transcript: Sequence[Message]) -> PersonTurn:
        flipped = flip_roles(transcript)
        if not flipped or flipped[-1].role != "user":
            flipped.append(Message(role="user", content="[The assistant wrote nothing.]"))
        seen = _SEEN.get(goal_progress(self._goal, transcript))
        if seen is not None:  # what the person can see of the world, never the agent's say
            flipped[-1] = Message(role="user", content=f"{flipped[-1].content}\n\n{seen}")
        return await self._ask([Message(role="user", content=_OPENER), *flipped])

    async def _ask(self, messages: list[Message]) -> PersonTurn:
        writer = self._writer
        reply: ModelReply = await writer.backend.complete(ModelRequest(
            messages=(self._system, *messages), max_tokens=writer.max_tokens,
            temperature=writer.temperature, seed=self._seed + len(messages)))
        raw = reply.message.content or ""
        ends = {match.upper() for match in _END.findall(raw)}
        text = re.sub(r"\s+", " ", _END.sub(" ", raw)).strip()
        leaves = "LEAVE" in ends
        done = "DONE" in ends and not leaves
        if not text and not (done or leaves):
            raise BackendError(f"{writer.spec}: the person model wrote an empty message")
        return PersonTurn(text=text, done=done, leaves=leaves, usage=reply.usage,
                          cost_usd=reply.cost_usd)


_IDENTIFIER = re.compile(r"[^\s@]+@[^\s@]+\.\w+|[A-Za-z0-9][\w\-/]*\d[\w\-/]*")


async def paraphrase(writer: ChatBackend, ask: str, persona: Persona,
                     seed: int) -> tuple[str, TokenUsage, float]:
    """The ask rewritten in the persona's voice: (text, usage, cost).

    Raises :class:`~generator.errors.BackendError` when the writer returns nothing or
    drops an identifier, number or email of the ask (the caller falls back loudly).
    """
    system = ("Rewrite a customer's request to a support assistant in the customer's own "
              f"words. {P.voice(persona)} Keep the meaning, and keep every identifier, "
              "number, email and date exactly as written. Reply with the rewritten message "
              "only: no quotes, no preamble.")
    reply = await writer.complete(ModelRequest(
        messages=(Message(role="system", content=system), Message(role="user", content=ask)),
        max_tokens=300, temperature=0.9, seed=seed))
    text = (reply.message.content or "").strip().strip("\"'“”").strip()
    if not text:
        raise BackendError(f"{writer.spec}: the writer returned an empty paraphrase")
    dropped = [token.rstrip(".,;:!?") for token in _IDENTIFIER.findall(ask)
               if token.rstrip(".,;:!?") not in text]
    if dropped:
        raise BackendError(f"{writer.spec}: the paraphrase dropped {', '.join(dropped)} "
                           "from the ask")
    return text, reply.usage, reply.cost_usd


__all__ = ["DONE_TOKEN", "LEAVE_TOKEN", "LENGTHS", "NAMES", "PROGRESS", "STANCES", "TEXTURES",
           "TONES", "ModelPerson", "PersonSession", "PersonTurn", "PersonWriter",
           "flip_roles", "goal_ask", "goal_progress", "paraphrase",
           "person_brief", "sample_persona", "spoken_ask", "spoken_fact"]
