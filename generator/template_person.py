"""The template person's engine: phrase tables rendered through a persona.

Private to :mod:`generator.person` (:class:`~generator.person.TemplatePerson` starts a
:class:`TemplateSession`). A session renders the goal's ask through the persona, answers
the agent turn by turn, and is deterministic for the rollout's seed. Replies, in order:

1. with ``contradicts_earlier`` history, the first reply takes back the detail the opening
   got wrong ("Actually, I meant ORD-4821, not ORD-4827.");
2. an empty or repeated agent message (the same words, or the last message again inside a
   longer one: "To recap: ...") is unhelpful (patience - 1);
3. the goal is judged from the world's answers in the transcript (the tool results), never
   from the agent's words alone: when the asked tool succeeded, a sentence claiming the
   thing is done (for a question, an informative answer) ends the conversation with
   thanks (``done``); when a result says it was already done and the agent says so, the
   person takes it without delight and goes; when a result refuses it because the
   record is in another state or a rule forbids it ("delivered, not pending: cannot be
   cancelled") and the agent passes that on, the person reacts as blocked, by persona:
   asks for an alternative, pushes back and asks for someone else, or accepts it (then
   ends; a pushed-back refusal repeated makes them leave; an alternative action that
   went through ends it with thanks); a handoff to a human ends it with "I'll wait"; a
   claim of success that the world contradicts (never called, failed, refused, partly
   done) gets "Are you sure? ..." and costs patience;
4. a confirmation question gets "yes"; a question naming a fact the person holds (its
   key's words, a few synonyms, or id-ish words such as "number", also in a bulleted list
   after "I'll need a few details:") gets the fact, exactly (a nested fact in words:
   "first name Ana, last name Costa, ..."); a question naming a detail the person does
   not hold (a phone number) is not answered with another one;
5. a question for something the person does not hold, or an apology / error with no
   progress, is unhelpful (patience - 1);
6. anything else gets a short follow-up.

**Patience bounds the non-answers.** A reply that moves nothing forward (a follow-up, a
second "yes", "I already gave you that") is a *stall*. The first stall after progress (a
fact newly given, the first "yes", the take-back) is free: "let me check" deserves one
"is it done now?". Every further stall in a row is unhelpful, like an error or a repeat.
At patience 0 the person leaves with a parting line (``leaves``); so a person of patience
``p`` stays through at most ``p`` unhelpful replies and one free stall per step forward,
and a patience-1 person never runs a stuck conversation to the turn limit.

**The opening** says the goal's ask: a source conversation's ask as it is, an ask the
planner templated from the tool's description said the way a person would
(:func:`~generator.person.goal_ask`), and the history phrase only when the ask does not
already say so ("I'm asking again" once).
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from generator import _person_phrases as P
from generator._conduct_words import claims_success, failure_of
from generator._world_values import is_id_like, tool_kind
from generator.person import (
    PersonSession,
    PersonTurn,
    _agent_text,
    _label,
    goal_ask,
    goal_progress,
    spoken_ask,
    spoken_fact,
)
from generator.records import Message, Persona, PlannedRollout, TokenUsage
from processor._history_cues import REPEAT_CONTACT
from processor.results import read_result

_SLOT = "\x00"  # fact values ride through the texture transforms as \x00<n>\x00
_CLIP = re.compile(P.CLIPPED_WORDS, re.I)
_WORD = re.compile(r"(?<![\w\x00])[A-Za-z]{4,}(?![\w\x00])")
_SENTENCES = re.compile(r"(?<=[.!?\n])\s+")
_ACTED = (r"(refunded|cancell?ed|canceled|updated|issued|processed|created|booked|changed|"
          r"reset|submitted|applied|completed|placed|scheduled|sent|removed|deleted|opened|"
          r"approved|added|credited|reversed|resolved|fixed|confirmed|reserved|renewed)")
_DONE = re.compile(
    rf"\b(has|have) been (successfully )?{_ACTED}\b|\bi(?:'ve| have) (now )?(gone ahead|"
    rf"{_ACTED})\b|\b(is|are) (now )?(complete|done|{_ACTED})\b|\ball (set|done)\b"
    rf"|\b(was|were|has|have|is|are) already (been )?{_ACTED}\b"
    r"|\bsuccessfully\b|\banything else (i can|can i)\b|\bdone[.!]")
_PENDING = re.compile(r"\b(let me|i'll|i will|checking|one moment|looking into|give me a)\b")
_NEGATED = re.compile(r"\b(not|unable|cannot|failed|error|sorry|unfortunately|couldn't|"
                      r"can't|haven't|hasn't|wasn't|isn't)\b|\bif\b|\?")
_HANDOFF = re.compile(r"\b(escalat\w*|human agent|colleague|specialist|supervisor|someone "
                      r"(from|on) (our|the) team|team will (contact|get back|reach out))\b")
_CONFIRM = re.compile(r"\b(shall i|should i|would you like me to|do you want me to|want me to|"
                      r"okay to proceed|ok to proceed|go ahead\?|confirm (that )?you want|"
                      r"is that (correct|right)|would you like to proceed)\b")
_REQUEST = re.compile(r"\?|\b(provide|share|give me|tell me|send me|what is|what's|which|"
                      r"i'll need|i will need|i need the|i need your|need a few|need some|"
                      r"please send|please enter|please type|"
                      r"may i have|i need your|please confirm|confirm your|let me know)\b")
_UNHELPFUL = re.compile(r"\b(sorry|apolog\w*|unfortunately|unable|can't|cannot|couldn't|"
                        r"could not|not able|error|went wrong|problem|issue|try again later|"
                        r"failed|not working|isn't working|down right now|timed out)\b")
# the agent asks what the person wants done: they say it again, plainly
_WHAT_FOR = re.compile(r"\bwhat (?:would|do) you (?:like|want|need) (?:me )?to do\b|\bwhat "
                       r"(?:can|should|shall) i do (?:for you|with it)\b|\bhow (?:can|may) i "
                       r"help\b|\bwhat (?:do|would) you (?:like|want) done\b")
# the agent passes on a refusal: "it cannot be cancelled", "unfortunately it is delivered"
_REFUSAL_TALK = re.compile(r"\b(can't|cannot|can not|couldn't|could not|unable|not able|"
                           r"not possible|isn't possible|no longer|won't be able|not "
                           r"eligible|(?:doesn't|does not|isn't|is not) allow\w*|not allowed|"
                           r"unfortunately|sorry|already)\b")
_IDISH = re.compile(r"\b(id|number|reference|identifier|account|details|confirmation|code)\b")
# a detail the question names: asked for one the person does not hold, they give no other
_OTHER_DETAIL = re.compile(r"\b(phone|mobile|e-?mail|address|name|birth|zip|postcode|postal|"
                           r"card|payment|passport|date)\b")
_SYNONYMS = {"amount": ("how much",), "date": ("when",), "address": ("where", "ship"),
             "reason": ("why",), "email": ("e-mail", "mail"), "name": ("who",),
             "phone": ("call you", "reach you")}
_GENERIC = frozenset({"id", "number", "code", "no", "uuid", "reference", "ref", "num"})
_HISTORY_CUES = {**{history: re.compile(cue, re.I) for history, cue in P.HISTORY_CUES.items()},
                 "repeat_visit": REPEAT_CONTACT}  # the history axis's own cue
_PERSONAL = frozenset({"email", "name", "phone", "address", "account", "birthday", "card"})


@dataclass(frozen=True)
class _Piece:
    text: str
    keep: bool = False  # stance/history keywords: spared the typos, clipping and expansions
    closing: bool = False  # a sign-off: never comma-spliced onto the ask (see _render)


class TemplateSession:
    """One rollout's person, rendered from phrase tables through the persona."""

    def __init__(self, plan: PlannedRollout) -> None:
        self._persona = persona = plan.persona
        self._rng = random.Random(f"{plan.seed}:person")  # noqa: S311 (simulation)
        self._goal = plan.goal
        self._stance = persona.stance or plan.situation.get("user_stance", "ordinary")
        self._history = plan.situation.get("history", "fresh")
        self._patience = max(1, persona.patience)
        self._facts = {key: value for key, value in plan.goal.facts.items() if value}
        self._ids = [key for key, value in self._facts.items() if is_id_like(key, None, value)]
        self._keys: dict[str, re.Pattern[str]] | None = None  # what asks for each fact
        self._stalls = 0  # replies in a row that moved nothing forward
        self._confirmed = False
        self._restated = False
        self._told: set[str] = set()
        self._wrong: tuple[str, str] | None = None
        self._correct_pending = self._history == "contradicts_earlier"
        self._last_agent = ""
        self._read_only = plan.goal.tool is None or tool_kind(plan.goal.tool) == "read"
        self._refusals = 0  # times the agent passed on a refusal of the goal (blocked)

    async def opening(self) -> PersonTurn:
        rng, persona = self._rng, self._persona
        values: list[str] = []
        slot = _slotter(values)
        key = [name for name in self._ids or list(self._facts)
               if not self._facts[name].startswith(("{", "["))][:1]
        if self._correct_pending and key:
            self._wrong = (key[0], _wrong_value(self._facts[key[0]], rng))
        ask = goal_ask(self._goal, rng).strip()
        if ask and ask[-1] not in ".!?":
            ask += "."
        for name, value in self._facts.items():
            if value in ask:
                ask = ask.replace(value, slot(self._said(name)))
                self._told.add(name)
        pieces = []
        if persona.length != "short":
            pieces.append(_Piece(rng.choice(P.GREETINGS.get(persona.tone, ("",)))))
        if self._history in P.HISTORY_PHRASES and not _HISTORY_CUES[self._history].search(ask):
            pieces.append(_Piece(rng.choice(P.HISTORY_PHRASES[self._history]), keep=True))
        if persona.length == "long":
            pieces.append(_Piece(rng.choice(P.BACKGROUND)))
        pieces.append(_Piece(ask))
        untold = [name for name in self._facts if name not in self._told]
        chance = {"short": 0.45, "medium": 0.6, "long": 0.85}.get(persona.length, 0.5)
        must = self._wrong is not None and self._wrong[0] in untold
        if untold and (must or rng.random() < chance + (0.3 if self._stance == "hurried" else 0)):
            chosen = untold if persona.length == "long" else (
                [n for n in untold if n in self._ids] or untold[:1])
            if persona.length == "short":
                chosen = chosen[:1]
            if must and self._wrong and self._wrong[0] not in chosen:
                chosen.insert(0, self._wrong[0])
            pieces.append(_Piece(self._facts_sentence(chosen, slot)))
        if self._stance in P.STANCE_PHRASES:
            pieces.append(_Piece(rng.choice(P.STANCE_PHRASES[self._stance]), keep=True))
        if persona.length != "short":
            pieces.append(_Piece(rng.choice(P.CLOSINGS.get(persona.tone, ("",))), closing=True))
        return self._turn(pieces, values, opening=True)

    async def reply(self, transcript: Sequence[Message]) -> PersonTurn:
        rng, tone = self._rng, self._persona.tone
        values: list[str] = []
        slot = _slotter(values)
        text = _agent_text(transcript)
        low = text.lower()
        squashed = _squash(text)
        repeated = bool(text) and _repeats(squashed, self._last_agent)
        self._last_agent = squashed
        pieces: list[_Piece] = []
        if self._correct_pending:  # the take-back comes first: "Actually, I meant ..."
            self._correct_pending = False
            if self._wrong is not None:
                name, wrong = self._wrong
                self._wrong = None
                pieces.append(_Piece(f"Actually, I meant {slot(self._facts[name])}, not "
                                     f"{slot(wrong)}.", keep=True))
                pieces.append(_Piece("Can you use that one instead?"))
                self._stalls = 0
                return self._turn(pieces, values)
            pieces.append(_Piece("Actually, I meant to add: please send me a confirmation "
                                 "by email.", keep=True))
        if not text.strip() or repeated:
            return self._unhelpful(pieces, values, "Hello? Are you still there?"
                                   if not text.strip() else rng.choice(P.NUDGES[tone]))
        progress = goal_progress(self._goal, transcript)
        claims_done = _claims(low, _DONE) or claims_success(text)
        if _HANDOFF.search(low) and "?" not in low:
            pieces.append(_Piece(rng.choice(P.THANKS.get(tone, ("Thanks.",)) if progress
                                            == "met" else P.HANDOFF_THANKS)))
            return self._turn(pieces, values, done=True)
        if progress == "met" and (claims_done or (
                self._read_only and "?" not in low and len(low.split()) >= 6
                and not _PENDING.search(low) and not _UNHELPFUL.search(low))):
            pieces.append(_Piece(rng.choice(P.THANKS.get(tone, ("Thanks.",)))))
            return self._turn(pieces, values, done=True)
        if progress == "already" and (claims_done or "already" in low):
            pieces.append(_Piece(rng.choice(P.ALREADY_DONE)))
            return self._turn(pieces, values, done=True)
        if progress == "blocked":
            if claims_done and _acted_since_refusal(self._goal.tool, transcript):
                pieces.append(_Piece(rng.choice(P.THANKS.get(tone, ("Thanks.",)))))
                return self._turn(pieces, values, done=True)  # the alternative went through
            if not claims_done and _REFUSAL_TALK.search(low) and not _CONFIRM.search(low):
                return self._blocked(pieces, values)
        if claims_done and not self._read_only:
            # the agent says it is done, the world says otherwise: the person can tell
            line = P.NOT_DONE[progress if progress in P.NOT_DONE else
                              "failed" if progress == "blocked" else "none"]
            return self._unhelpful(pieces, values, rng.choice(line))
        if _WHAT_FOR.search(low) and self._goal.tool is not None:
            return self._restate(pieces, values, slot)
        asked = self._asked_for(low)
        confirm = bool(_CONFIRM.search(low))
        if confirm:
            asked = [name for name in asked if name not in self._told]
            if not self._confirmed or asked:
                pieces.append(_Piece(rng.choice(P.CONFIRMATIONS)))
        if asked:
            return self._give(asked, pieces, values, slot)
        if confirm:  # the first yes moves things on; asked again, it is a stall
            if not self._confirmed:
                self._confirmed, self._stalls = True, 0
                return self._turn(pieces, values)
            return self._stall(pieces, values, rng.choice(P.ALREADY_CONFIRMED))
        if _REQUEST.search(low) and "?" in low and not _UNHELPFUL.search(low):
            return self._unhelpful(pieces, values, rng.choice(P.UNKNOWN_DETAIL))
        if _UNHELPFUL.search(low):
            return self._unhelpful(pieces, values, rng.choice(P.NUDGES[tone]))
        if self._read_only and progress in ("met", "untracked") and "?" not in low \
                and len(low.split()) >= 6 and not _PENDING.search(low):
            pieces.append(_Piece(rng.choice(P.THANKS.get(tone, ("Thanks.",)))))
            return self._turn(pieces, values, done=True)
        return self._stall(pieces, values, rng.choice(P.FOLLOW_UPS))

    # ------------------------------------------------------------------ helpers

    def _said(self, name: str) -> str:
        """A fact as the person states it (the wrong value before the take-back)."""
        if self._wrong is not None and self._wrong[0] == name:
            return self._wrong[1]
        return self._facts[name]

    def _facts_sentence(self, names: Sequence[str], slot: _Slot) -> str:
        self._told.update(names)
        parts = [f"{'my' if _personal(name) else 'the'} {_label(name)} is "
                 f"{slot(spoken_fact(self._said(name)))}" for name in names]
        sentence = " and ".join(parts)
        if self._stance == "unsure":
            sentence = "I think " + sentence
        return sentence[0].upper() + sentence[1:] + "."

    def _asked_for(self, low: str) -> list[str]:
        # only the questions and requests count: a record the agent quotes back is no ask
        low = " ".join(_requests(low))
        if not low:
            return []
        if self._keys is None:
            self._keys = {name: _asking(name, tuple(re.findall(r'"(\w+)":', value))
                                        if value.startswith("{") else ())
                          for name, value in self._facts.items()}
        asked = [name for name, pattern in self._keys.items() if pattern.search(low)]
        if not asked and _IDISH.search(low) and not _OTHER_DETAIL.search(low):
            asked = [n for n in self._ids if n not in self._told] or self._ids[:1]
        return asked

    def _restate(self, pieces: list[_Piece], values: list[str], slot: _Slot) -> PersonTurn:
        """What they want, said plainly (from the goal's tool and the facts already told;
        the first time only: asked again, it is a stall)."""
        if self._restated:
            return self._stall(pieces, values, self._rng.choice(P.FOLLOW_UPS))
        self._restated = True
        told = {name: self._facts[name] for name in self._facts if name in self._told}
        text = spoken_ask(self._goal.tool, told, self._rng)
        for value in sorted(set(told.values()), key=len, reverse=True):
            if value in text:
                text = text.replace(value, slot(value))
        pieces.append(_Piece(text))
        self._stalls = 0
        return self._turn(pieces, values)

    def _give(self, asked: list[str], pieces: list[_Piece], values: list[str],
              slot: _Slot) -> PersonTurn:
        fresh = [name for name in asked if name not in self._told]
        if fresh:
            pieces.append(_Piece(self._facts_sentence(fresh, slot)))
            self._stalls = 0
            return self._turn(pieces, values)
        given = " and ".join(slot(spoken_fact(self._facts[name])) for name in asked)
        return self._stall(pieces, values, f"{P.ALREADY_TOLD} {given}.")

    def _stall(self, pieces: list[_Piece], values: list[str], line: str) -> PersonTurn:
        """A reply that moved nothing forward: the first in a row is let go, the next
        ones cost patience (see the module docstring)."""
        if self._stalls:
            return self._unhelpful(pieces, values, line)  # which counts the stall
        self._stalls = 1
        pieces.append(_Piece(line))
        return self._turn(pieces, values)

    def _blocked(self, pieces: list[_Piece], values: list[str]) -> PersonTurn:
        """The agent says the goal cannot be had (the world refused it for the record's
        state or a rule). The person reacts as their persona would: pushes back and asks
        for someone else (an adversarial or frustrated stance, a frustrated or sarcastic
        tone), asks for an alternative (polite, friendly or anxious, with patience to
        spare), or accepts it. Told no a second time, the one who asked accepts and the
        one who pushed back leaves. Never "it was already done": nothing was."""
        rng, persona = self._rng, self._persona
        pushes = self._stance in ("adversarial", "frustrated") or \
            persona.tone in ("frustrated", "sarcastic")
        asks = persona.tone in ("polite", "friendly", "anxious") and self._patience >= 2
        self._refusals += 1
        if self._refusals == 1 and (pushes or asks):
            self._stalls = 0
            pieces.append(_Piece(rng.choice(P.BLOCKED_ESCALATE if pushes else
                                            P.BLOCKED_ASK)))
            return self._turn(pieces, values)
        if pushes:
            pieces.append(_Piece(rng.choice(P.PARTINGS.get(persona.tone, ("Bye.",)))))
            return self._turn(pieces, values, leaves=True)
        pieces.append(_Piece(rng.choice(P.BLOCKED_ACCEPT)))
        return self._turn(pieces, values, done=True)

    def _unhelpful(self, pieces: list[_Piece], values: list[str], line: str) -> PersonTurn:
        self._patience -= 1
        self._stalls += 1
        tone = self._persona.tone
        if self._patience <= 0:
            pieces.append(_Piece(self._rng.choice(P.PARTINGS.get(tone, ("Bye.",)))))
            return self._turn(pieces, values, leaves=True)
        if line:
            pieces.append(_Piece(line))
        if self._stance in P.STANCE_NUDGES:
            pieces.append(_Piece(P.STANCE_NUDGES[self._stance], keep=True))
        return self._turn(pieces, values)

    def _turn(self, pieces: Sequence[_Piece], values: Sequence[str], *, opening: bool = False,
              done: bool = False, leaves: bool = False) -> PersonTurn:
        text = _render(self._persona, self._rng, pieces, values, opening=opening)
        return PersonTurn(text=text, done=done, leaves=leaves, usage=TokenUsage(),
                          cost_usd=0.0)


class _Slot(Protocol):
    def __call__(self, value: str) -> str: ...


def _slotter(values: list[str]) -> _Slot:
    def slot(value: str) -> str:
        values.append(value)
        return f"{_SLOT}{len(values) - 1}{_SLOT}"
    return slot


@functools.lru_cache(maxsize=1024)
def _asking(name: str, inner: tuple[str, ...]) -> re.Pattern[str]:
    """What in a question asks for this fact: its key's words (not "id" or "number"), a
    few synonyms, and for a nested fact its inner keys' words (``first name``)."""
    label = _label(name).split()
    keys = [w for w in label if w not in _GENERIC] or label
    keys += [_label(key) for key in inner]
    keys += [s for w in keys for s in _SYNONYMS.get(w, ())]
    return re.compile("|".join(rf"\b{re.escape(w)}" for w in keys))


_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


def _requests(low: str) -> list[str]:
    """The sentences of a message that ask for something, with the list that follows a
    request ("I'll need a few details:" then "- your line ID")."""
    asked: list[str] = []
    listing = False
    for line in low.splitlines():
        if not line.strip():
            continue
        if listing and _BULLET.match(line):
            asked.append(_BULLET.sub("", line))
            continue
        listing = False
        for sentence in _SENTENCES.split(line):
            if _REQUEST.search(sentence):
                asked.append(sentence)
                listing = sentence.rstrip().endswith(":")
    return asked


def _repeats(text: str, last: str) -> bool:
    """The agent's message says its last one again: the same words, or the last message
    inside a longer one ("To recap: ...")."""
    if not text or not last:
        return False
    shorter, longer = sorted((text, last), key=len)
    return text == last or (len(shorter) >= 24 and shorter in longer)


def _personal(name: str) -> bool:
    """Whether a fact is the person's own ("my email") rather than a detail ("the amount")."""
    return is_id_like(name, None) or bool(set(_label(name).split()) & _PERSONAL)


def _squash(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _acted_since_refusal(goal_tool: str | None, transcript: Sequence[Message]) -> bool:
    """Whether an action other than the refused goal's went through after the refusal
    (the alternative the person agreed to: a return when the cancel was refused)."""
    calls = {call.id: call.name for message in transcript if message.role == "assistant"
             for call in message.tool_calls}
    refused = False
    for message in transcript:
        if message.role != "tool":
            continue
        tool = calls.get(message.tool_call_id or "", message.name or "")
        if tool == goal_tool:
            refused = True
        elif refused and tool and tool_kind(tool) != "read" and \
                failure_of(read_result(message.content, tool=tool), tool) is None:
            return True
    return False


def _claims(low: str, pattern: re.Pattern[str]) -> bool:
    """A sentence matches ``pattern`` and does not negate or hedge it."""
    return any(pattern.search(s) and not _NEGATED.search(s) for s in _SENTENCES.split(low))


def _wrong_value(value: str, rng: random.Random) -> str:
    """The value with one character off (a digit, else a letter): a plausible slip."""
    spots = [i for i, ch in enumerate(value) if ch.isdigit()] or \
        [i for i, ch in enumerate(value) if ch.isalpha()]
    if not spots:
        return value + "1"
    i = rng.choice(spots[-2:])
    if value[i].isdigit():
        new = str((int(value[i]) + rng.randint(1, 9)) % 10)
    else:
        new = rng.choice([c for c in "abcdefghkmnprstuvwxyz" if c != value[i].lower()])
        new = new.upper() if value[i].isupper() else new
    return value[:i] + new + value[i + 1:]


def _tidy(text: str) -> str:
    """Clipped text without the holes the clipping left: stray commas, small sentence starts."""
    text = re.sub(r"\s+([,.!?])", r"\1", text)
    text = re.sub(r"([.!?]),|,(?=[.!?])|^[\s,.;:!]+", "", text)
    text = re.sub(r",\s*,", ",", re.sub(r"\s{2,}", " ", text)).strip()
    text = re.sub(r"([.!?])\s*\.", r"\1", text)
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def _typos(text: str, rng: random.Random) -> str:
    def slip(match: re.Match[str]) -> str:
        word = match.group(0)
        if rng.random() > 0.2:
            return word
        i = rng.randrange(1, len(word) - 2)
        roll = rng.random()
        if roll < 0.5:
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
        return word[:i] + word[i + 1:] if roll < 0.8 else word[:i] + word[i] + word[i:]
    return _WORD.sub(slip, text)


def _render(persona: Persona, rng: random.Random, pieces: Sequence[_Piece],
            values: Sequence[str], *, opening: bool) -> str:
    """The pieces as this persona types them; fact values come through unchanged."""
    texture = persona.texture
    texts: list[str] = []
    closings: list[bool] = []
    for piece in pieces:
        text = piece.text
        if not piece.keep:
            if texture == "clipped":
                text = _tidy(_CLIP.sub("", text))
            elif texture == "typo":
                text = _typos(text, rng)
            elif texture == "formal":
                for short, full in P.CONTRACTIONS:
                    text = text.replace(short, full)
        text = text.strip()
        if text and texture not in ("lowercase", "run_on") \
                and (not texts or texts[-1].endswith((".", "!", "?"))):
            text = text[0].upper() + text[1:]
        if text:
            texts.append(text)
            closings.append(piece.closing)
    if texture == "run_on" and len(texts) > 1:
        joined = texts[0].rstrip(".")
        for text, closing in zip(texts[1:], closings[1:], strict=True):
            glue = " " if joined.endswith((",", "!", "?")) else rng.choice(
                (" and ", ", ", " and then "))
            if closing and glue == ", ":
                # "sort it out, you're a star!" reads as praise used as a lever (the
                # stance patterns' flattery_lever); a sign-off is thanks, not leverage
                glue = " and "
            head = text if re.match(r"I\b", text) else text[0].lower() + text[1:]
            joined = (joined + glue + head).rstrip(".")
        message = joined
    else:
        message = " ".join(texts)
    if texture == "lowercase":
        message = re.sub(r"\s{2,}", " ", re.sub(r"[.,;:]", "", message.lower())).strip()
    elif message:
        message = message[0].upper() + message[1:]
    if texture == "formal" and opening:
        message += f"\n\nKind regards,\n{persona.name}"
    if texture == "emoji" and rng.random() < 0.85:
        message += " " + P.EMOJI.get(persona.tone, "🙂")
    for index, value in enumerate(values):
        message = message.replace(f"{_SLOT}{index}{_SLOT}", value)
    return message


class TemplatePerson:
    """The offline person (spec ``template``): phrase tables, no model, no key."""

    spec = "template"

    def start(self, plan: PlannedRollout) -> PersonSession:
        """The template person of one rollout (deterministic for its seed)."""
        return TemplateSession(plan)
