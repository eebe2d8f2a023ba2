"""The offline agent: a deterministic support agent, so the whole pipeline runs with no key.

It reads only the :class:`~generator.records.ModelRequest` (messages, tools, seed) and
behaves like a careful, plain agent (tau2-bench's gold action sequences are the model):

* it works out the action the person asks for from the words they wrote and the action
  tools' names (everyday words count: "bag" → baggage, "turn roaming on" → enable, one
  slipped letter forgiven); the first ask decides unless a later message names another
  action by a word of it only; when two actions tie ("roaming": enable or disable?) it
  asks which, and when the person's words ask for nothing it can read ("Is it done now?")
  after it found their record, it asks what they would like done;
* before acting it looks up each record the person named, in the order they named
  them: each identifier read with the lookup that takes it (the parameter its label,
  the letters of the id, the key a result gave it under, or the action's own parameter
  fits; a lookup by any id when nothing fits better); then, when the action still lacks
  an identifier, a lookup that finds that kind of record with what it has (the customer
  by phone number), and it goes on in the same turn: lookup, lookup, action;
* it fills arguments only from values the person gave or a successful result returned,
  copied exactly (``#W8178512``, ``8JX2WO``, ``credit_card_7815826``), never a record of
  another kind (a user id for ``payment_id``), never a phone number but for a phone, never
  an identifier a result called unknown; when a result listed several records of the kind
  it needs (a customer's lines) and the person named none, it asks which;
* a required value it cannot find, it asks for by name ("Could you give me the order
  ID?"); it never guesses one;
* after a tool result it reports what came back, naming the record (a stale body is a
  result, with a note that it may be out of date); after a failure it apologises, says
  what failed and offers a next step, or retries once when the failure looks transient
  (a timeout, a server error, a garbled body), or goes straight on with the right tool or
  the next record after an unknown tool or an unknown id;
* it never calls the same tool with the same arguments a third time, never repeats its
  previous reply word for word, and answers thanks / bye briefly.

**Planted mistakes.** With probability ``mistake_rate`` per reply (drawn from
``random.Random(seed + len(messages))``, so a seed replays exactly), it makes one mistake
that fits the moment and labels it in :attr:`ModelReply.planted` with the name of the
conduct check that must catch it (see :mod:`generator.checks`; an invented identifier
is shaped like the real one, ``#W8178512`` → ``#W3920417``): ``invented_identifier``,
``claimed_success_after_failure``, ``action_without_tool_call``, ``undeclared_tool``,
``repeated_reply``, ``harness_leak``, ``empty_reply``.

A reply costs well under a tenth of a millisecond: patterns are compiled once, texts'
words and identifiers are cached, and each tool set's parsed catalog is cached by identity
(see :mod:`generator._offline_reading` for how a request is read).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generator._conduct_words import (
    PAST_TENSES,
    claims_success,
    looks_like_identifier,
    mentions_harness,
    name_tokens,
    normalise,
)
from generator._offline_reading import (
    Catalog,
    Conversation,
    Param,
    Step,
    Tool,
    asked_actions,
    canonical_json,
    catalog_of,
    choose_tool,
    fill_arguments,
    fits,
    generic_id,
    ids_returned,
    parse_json,
    person_ids,
    person_ids_in,
    rank_tools,
    stem,
    tool_words_of,
    words_said,
)
from generator.errors import SpecError
from generator.records import Message, ModelReply, ModelRequest, TokenUsage, ToolCall, ToolSpec

PLANTED_KINDS = ("invented_identifier", "claimed_success_after_failure",
                 "action_without_tool_call", "undeclared_tool", "repeated_reply",
                 "harness_leak", "empty_reply")
"""Mistakes the agent plants, named after the conduct check that catches each."""

_CLOSING = re.compile(r"\b(?:thanks|thank\s+you|thx|ty|bye|goodbye|that's\s+all|that\s+is\s+all"
                      r"|cheers|appreciate\s+it|have\s+a\s+good)\b", re.I)
_MORE = re.compile(r"\?|\b(?:but|also|can\s+you|could\s+you|please|try|again|still|another"
                   r"|what\s+about|why|wrong|didn't|not)\b", re.I)
_YES = re.compile(r"\b(?:yes|yeah|yep|sure|ok|okay|go\s+ahead|please\s+do)\b", re.I)
_TRANSIENT = re.compile(r"timeout|timed\s+out|internal_error|unavailable|temporar|retryable"
                        r"|\b5\d\d\b", re.I)
_NOT_FOUND_TEXT = re.compile(r"not[\s_]found|unknown_tool", re.I)
_ACTS = frozenset(stem(verb) for verb in PAST_TENSES.values())
"""Words that name an action (cancel, refund, update ...), as the agent compares words."""
_LEAKS = ("My notes on this simulated person say to keep things short.",
          "Per the persona notes, I'll keep this brief.",
          "The world state I was given shows this record.")


@dataclass
class _Action:
    """What the honest agent would do."""

    kind: str  # call, retry, ask, ok, fail, close, clarify
    text: str = ""
    tool: Tool | None = None
    arguments: dict[str, Any] | None = None
    step: Step | None = None


class OfflineAgent:
    """A seeded agent with no model behind it; implements ``ChatBackend``."""

    def __init__(self, spec: str = "offline", *, mistake_rate: float = 0.15) -> None:
        """``mistake_rate``: the chance per reply of one planted, labelled mistake."""
        if not 0.0 <= mistake_rate <= 1.0:
            raise SpecError(f"the offline agent's mistake rate must be from 0 to 1, got "
                            f"{mistake_rate} (offline:0.15)")
        self.spec = spec
        self.model = "offline"
        self.mistake_rate = mistake_rate
        self._catalogs: dict[int, tuple[tuple[ToolSpec, ...], Catalog]] = {}

    async def complete(self, request: ModelRequest) -> ModelReply:
        """The next assistant message (never raises for a well-formed request)."""
        return self.reply(request)

    async def aclose(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ the reply

    def reply(self, request: ModelRequest) -> ModelReply:
        """The synchronous core of :meth:`complete`."""
        catalog = self._catalog(request.tools)
        talk = Conversation(request.messages)
        action = _decide(talk, catalog)
        seed = (request.seed or 0) + len(request.messages)
        planted: tuple[str, ...] = ()
        message = _render(action, talk, seed)
        if self.mistake_rate > 0:
            rng = random.Random(seed)  # noqa: S311 (a replayable mistake, not a secret)
            if rng.random() < self.mistake_rate:
                kind, message = _plant(rng, action, talk, catalog, seed, request.messages)
                planted = (kind,)
        text_chars = sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls)
                         for m in request.messages)
        out_chars = len(message.content or "") + sum(len(c.arguments) + len(c.name)
                                                     for c in message.tool_calls)
        return ModelReply(
            message=message,
            finish_reason="tool_calls" if message.tool_calls else "stop",
            usage=TokenUsage(text_chars // 4 + catalog.tokens, max(1, out_chars // 4)),
            model="offline", usage_estimated=True, planted=planted)

    def _catalog(self, tools: tuple[ToolSpec, ...]) -> Catalog:
        cached = self._catalogs.get(id(tools))
        if cached is not None and cached[0] is tools:
            return cached[1]
        built = catalog_of(tools)
        if len(self._catalogs) > 64:
            self._catalogs.clear()
        self._catalogs[id(tools)] = (tools, built)
        return built


# --------------------------------------------------------------------------- deciding


def _transient(step: Step) -> bool:
    """A failure worth one retry: a timeout, a server error, a garbled body."""
    return bool(_TRANSIENT.search(step.result or "")) or parse_json(step.result or "") is None


_MIXED = re.compile(r"[A-Za-z].*\d|\d.*[A-Za-z]")
_MAX_LOOKUPS = 3
"""Records a careful agent looks up before it acts (one lookup per record named)."""


def _lookup(talk: Conversation, catalog: Catalog, action: Tool | None) -> _Action | None:
    """The next record the person named that is not yet looked up: each identifier they
    gave, read with the lookup that takes it (the parameter its label or letters fit, the
    one the asked action takes it as, else a lookup by any id), in the order they said
    them; then, when the action still lacks an identifier, a lookup whose name says it
    finds that kind of record ("customer" for ``customer_id``) with what the person gave."""
    reads = [tool for tool in catalog.tools if not tool.mutating]
    looked = [step for step in talk.steps if step.name in {t.name for t in reads}]
    if len(looked) >= _MAX_LOOKUPS or not reads:
        return None
    # looked up already (a call the world answered, a timeout aside: that is retried)
    tried = {value for step in talk.steps if step.name in catalog.names
             and step.result is not None and not (
                 step.failed and _transient(step) and talk.counts[(step.name, step.arguments)] < 2)
             for value in _values(step.arguments)}
    wanted = fill_arguments(action, talk)[0] if action is not None else {}
    said = words_said(talk)
    for token in person_ids(talk):
        if token in tried:
            continue
        candidates: list[tuple[float, int, Tool, Param]] = []
        for position, tool in enumerate(reads):
            for param in tool.params:
                if param.kind != "id":
                    continue
                score: float = fits(token, param, talk) + 2 * (wanted.get(param.name) == token)
                if score <= 0:
                    if not generic_id(param) or fits(token, param, talk) < 0 \
                            or not _MIXED.search(token):
                        continue
                    score = 0.5  # a lookup by any id: when nothing fits better
                score += 0.1 * len(tool.name_words & said)
                candidates.append((-score, position, tool, param))
        for *_, tool, param in sorted(candidates, key=lambda c: c[:2]):
            arguments, missing = fill_arguments(tool, talk, {param.name: token})
            if not missing:
                return _Action("call", tool=tool, arguments=arguments)
    if action is None:
        return None
    missing = fill_arguments(action, talk)[1]
    if not missing or any(fits(token, param, talk) > 0 for token in talk.listed
                          for param in missing):
        return None  # nothing to look up, or a record listed several: ask which
    things = {stem(word) for param in missing for word in param.name.split("_")} - {
        "id", "number"}
    # a lookup named for what is missing first, then any that reads a record we know of
    # (the user a reservation names holds the payment methods)
    for tool in sorted(reads, key=lambda t: not (t.name_words & things)):
        arguments, lacking = fill_arguments(tool, talk)
        keys = [p for p in tool.params if p.kind == "id" and p.name in arguments]
        if not lacking and keys and (tool.name, canonical_json(arguments)) \
                not in talk.counts and all(
                    fits(str(arguments[p.name]), p, talk) > 0 or generic_id(p) for p in keys):
            return _Action("call", tool=tool, arguments=arguments)
    return None


def _asked_which(talk: Conversation) -> bool:
    """Whether the agent already asked what the person wants done (once is enough)."""
    return talk.asked_what


def _nudge(talk: Conversation, catalog: Catalog) -> bool:
    """The person's latest words name no tool and no record ("Is it done now?")."""
    latest = talk.users[-1] if talk.users else ""
    if person_ids_in(latest):
        return False
    said = tool_words_of(latest)
    return not any(tool.name_words & said for tool in catalog.tools)


def _values(arguments: str) -> list[str]:
    parsed = parse_json(arguments)
    if not isinstance(parsed, dict):
        return []
    return [str(value) for value in parsed.values() if isinstance(value, str | int)
            and not isinstance(value, bool)]


def _careful(talk: Conversation, catalog: Catalog) -> _Action | None:
    """What a careful agent does next for the action the person asked for: look up each
    record they named, then act with the exact identifiers (asking for what is missing);
    None when no action is asked for or it is already done (the reading of the person's
    words decides then)."""
    action, tied = asked_actions(talk, catalog, _ACTS)
    if action is not None and any(step.name == action.name and step.result is not None
                                  and not step.failed for step in talk.steps):
        return None  # done: report it / answer what comes next
    lookup = _lookup(talk, catalog, action)
    if lookup is not None:
        return lookup
    if action is None:
        if tied and talk.last_role == "user" and not _asked_which(talk):
            options = " or ".join(f"{t.verb} {t.noun}".strip() for t in tied[:3])
            return _Action("clarify", f"What would you like me to do: {options}?")
        if talk.last_role == "user" and _nudge(talk, catalog) and not _asked_which(talk) \
                and any(s.result is not None and not s.failed for s in talk.steps):
            record = next((r for s in reversed(talk.steps) if not s.failed
                           for r in [_record_of(s)] if r), "")
            return _Action("clarify", f"I have {record or 'your record'} here. What would you "
                           "like me to do with it?")
        return None
    arguments, missing = fill_arguments(action, talk)
    if missing:
        wanted = " and the ".join(param.plain for param in missing)
        return _Action("ask", f"Could you give me the {wanted}?", tool=action)
    key = (action.name, canonical_json(arguments))
    before = [step for step in talk.steps if (step.name, step.arguments) == key]
    if before and before[-1].failed and (not _transient(before[-1]) or talk.counts[key] >= 2):
        return _Action("fail", tool=action, step=before[-1])
    return _Action("call", tool=action, arguments=arguments)


def _decide(talk: Conversation, catalog: Catalog) -> _Action:
    if talk.last_role == "tool" and talk.fresh:
        failed = next((step for step in talk.fresh if step.failed), None)
        step = failed or talk.fresh[0]
        tool = next((t for t in catalog.tools if t.name == step.name), None)
        if failed is None:
            if tool is not None and not tool.mutating:
                # the record is found: on with what the person asked, in the same turn
                then = _careful(talk, catalog)
                if then is not None and then.kind == "call":
                    return then
            return _Action("ok", tool=tool, step=step)
        if tool is None or _NOT_FOUND_TEXT.search(failed.result or ""):
            # an undeclared tool or an unknown id: the right tool or the next record now
            then = _careful(talk, catalog)
            if then is not None and then.kind == "call" and (
                    then.tool is None or (then.tool.name, canonical_json(then.arguments or {}))
                    not in talk.counts):
                return then
        if _transient(failed) and talk.counts[(failed.name, failed.arguments)] < 2 \
                and tool is not None:
            return _Action("retry", tool=tool, arguments=parse_json(failed.arguments) or {},
                           step=step)
        return _Action("fail", tool=tool, step=step)
    if not talk.users:
        return _Action("clarify", "Hello! How can I help you today?")
    latest = talk.users[-1]
    # "thanks in advance" closing an opening ask is no goodbye
    if _CLOSING.search(latest) and not _MORE.search(latest) and (
            len(talk.users) > 1 or talk.previous_text) and len(latest.split()) <= 12:
        return _Action("close")
    finish = _finish_partial(talk, catalog, latest)
    if finish is not None:
        return finish
    careful = _careful(talk, catalog)
    if careful is not None:
        return careful
    tool = choose_tool(talk, catalog)
    if tool is None:
        return _Action("clarify", "Could you tell me a bit more about what you need help with?")
    arguments, missing = fill_arguments(tool, talk)
    if missing:
        wanted = " and the ".join(param.plain for param in missing)
        return _Action("ask", f"Could you give me the {wanted}?", tool=tool)
    key = (tool.name, canonical_json(arguments))
    before = [step for step in talk.steps if (step.name, step.arguments) == key]
    if before and before[-1].result is not None:
        last = before[-1]
        if not last.failed:
            # "shall I finish it?" — "yes": a partly done action is worth a second call
            partial = '"status":"partial"' in (last.result or "").replace(" ", "")
            if not (partial and talk.counts[key] < 2 and _YES.search(talk.users[-1])):
                # the record is found; the action the person asked for comes next, or,
                # when the answer did not help them, the next tool that fits their words
                then = _next_action(talk, catalog, tool) or (
                    _another_tool(talk, catalog) if _MORE.search(talk.users[-1]) else None)
                if then is None and _ok_text(tool, last) in talk.previous_text:
                    # said already, and the person wants more: ask what, don't recite it
                    record = _record_of(last)
                    return _Action("clarify", f"I have {tool.noun} {record or ''} here. What "
                                   "would you like me to do with it?".replace("  ", " "))
                return then or _Action("ok", tool=tool, step=last)
            return _Action("call", tool=tool, arguments=arguments)
        if not _transient(last) or talk.counts[key] >= 2:
            return _Action("fail", tool=tool, step=last)
    return _Action("call", tool=tool, arguments=arguments)


def _another_tool(talk: Conversation, catalog: Catalog) -> _Action | None:
    """The best-fitting lookup not yet called successfully, when its arguments are known
    (never an action the person did not name: that is :func:`_next_action`'s)."""
    done = {step.name for step in talk.steps if step.result is not None and not step.failed}
    for tool in rank_tools(talk, catalog)[1:]:
        if tool.name in done or tool.mutating:
            continue
        arguments, missing = fill_arguments(tool, talk)
        if not missing and talk.counts[(tool.name, canonical_json(arguments))] < 2:
            return _Action("call", tool=tool, arguments=arguments)
    return None


def _partial(step: Step) -> bool:
    return '"status":"partial"' in (step.result or "").replace(" ", "")


def _finish_partial(talk: Conversation, catalog: Catalog, latest: str) -> _Action | None:
    """"Shall I try to finish it?" — "yes": the action again when it was the action that
    stopped half way (once), else the action the person asked for after the lookup."""
    if not _YES.search(latest) or not talk.steps or not _partial(talk.steps[-1]):
        return None
    step = talk.steps[-1]
    tool = next((t for t in catalog.tools if t.name == step.name), None)
    if tool is None:
        return None
    if tool.mutating:
        if talk.counts[(step.name, step.arguments)] >= 2:
            return None
        return _Action("call", tool=tool, arguments=parse_json(step.arguments) or {})
    return _next_action(talk, catalog, tool)


def _next_action(talk: Conversation, catalog: Catalog, looked_up: Tool) -> _Action | None:
    """After a lookup succeeded, the tool that changes something whose verb the person
    used ("cancel" → ``cancel_pending_order``), if it was not yet called successfully."""
    if looked_up.mutating:
        return None
    said = words_said(talk)
    done = {step.name for step in talk.steps if step.result is not None and not step.failed}
    for tool in catalog.tools:
        # the person named what the tool does: "refund" → issue_refund, "cancel" → ...
        if not tool.mutating or tool.name in done or not (tool.name_words & said & _ACTS):
            continue
        arguments, missing = fill_arguments(tool, talk)
        if missing:
            wanted = " and the ".join(param.plain for param in missing)
            return _Action("ask", f"I found it. To go ahead, could you give me the {wanted}?",
                           tool=tool)
        key = (tool.name, canonical_json(arguments))
        if talk.counts[key] >= 2:
            return None
        return _Action("call", tool=tool, arguments=arguments)
    return None


# --------------------------------------------------------------------------- speaking


def _fresh(text: str, previous: str) -> str:
    """The text, reworded when it would repeat the previous reply word for word."""
    for variant in (text, f"To recap: {text}", f"Just to confirm: {text}",
                    f"{text} Let me know if there is anything else."):
        if variant != previous:
            return variant
    return text  # unreachable: the variants differ from each other


def _record_of(step: Step) -> str | None:
    found = ids_returned(step.result or "")
    if found:
        return found[0]
    arguments = parse_json(step.arguments)
    if isinstance(arguments, dict):
        for key, value in arguments.items():
            if isinstance(value, str | int) and not isinstance(value, bool) \
                    and looks_like_identifier(str(value), key):
                return str(value)
    return None


def _summary(value: dict[str, Any]) -> str:
    parts: list[str] = []
    for key, item in value.items():
        if key in ("message", "created_at", "stale", "duplicate", "matching_records") or \
                isinstance(item, bool | dict | list) or item is None:
            continue
        text = str(item)
        if len(text) > 40 or len(text.split()) > 4 or claims_success(text) \
                or mentions_harness(text):
            continue
        parts.append(f"{key.replace('_', ' ')}: {text}")
        if len(parts) == 4:
            break
    return ", ".join(parts) or "no further details"


def _ok_text(tool: Tool | None, step: Step) -> str:
    value = parse_json(step.result or "")
    noun = tool.noun if tool else "request"
    record = _record_of(step)
    label = f"{noun} {record}" if record else f"the {noun}"
    if isinstance(value, dict) and isinstance(value.get("results"), list):
        items = [item for item in value["results"] if isinstance(item, dict)]
        ids = [str(item.get("id")) for item in items if item.get("id")][:3]
        text = (f"I found {len(items)} matching {noun} records"
                + (f": {', '.join(ids)}." if ids else "."))
        if value.get("duplicate"):
            text += " More than one record matches, so tell me which one you mean."
        return text
    if not isinstance(value, dict):
        return f"Here's what came back for {label}: {str(value)[:80]}."
    status = str(value.get("status") or "")
    summary = _summary(value)
    if status.startswith("already_"):
        text = (f"It looks like {label} was already {status[8:].replace('_', ' ')}, so there "
                f"was nothing more to do ({summary}).")
    elif status == "partial":
        text = (f"Only part of it is finished for {label} so far ({summary}); one item is "
                "still pending. Shall I try to finish it?")
    elif tool is not None and tool.mutating:
        text = f"Done — I've {tool.past or 'processed'} {label}. The system shows: {summary}."
    else:
        text = f"Here's what I found for {label}: {summary}."
    if value.get("stale"):
        text += (f" Note that this record was last updated on {value.get('updated_at', '?')}, "
                 "so it may be out of date.")
    if value.get("duplicate"):
        matching = ", ".join(str(v) for v in value.get("matching_records", ()) or ())
        text += (f" More than one record matches ({matching or 'several'}), so tell me if "
                 "you meant another one.")
    return text


_NEXT_STEP = {
    "not_found": "Could you double-check the {what}?",
    "rejected": "Could you check the details you gave me?",
    "refused": "Could you check the details you gave me?",
    "permission_denied": "I'm not allowed to do that myself; I can pass this to a colleague.",
    "unknown_tool": "I can try another way if you like.",
}
_TROUBLE = ("The service seems to be having trouble right now; I can try again in a little "
            "while or pass this to a colleague.")


def _fail_text(tool: Tool | None, step: Step, again: bool) -> str:
    value = parse_json(step.result or "")
    noun = tool.noun if tool else "request"
    record = _record_of(step)
    label = f"{noun} {record}" if record else f"the {noun}"
    if isinstance(value, dict):
        code = str(value.get("error") or "error")
        reason = str(value.get("message") or code).split(". ")[0]
    else:
        code, reason = "garbled", "the system sent back an answer I could not read"
    reason = " ".join(reason.split()).rstrip(".")[:160]
    if again:  # the same failure a second time: stop asking, offer a way out
        return (f"That still isn't going through for {label} ({reason}). I can pass this "
                "to a colleague who can look into it, if you like.")
    what = next((p.plain for p in (tool.required if tool else ()) if p.kind == "id"), "details")
    follow = _NEXT_STEP.get(code, _TROUBLE).format(what=what)
    verb = tool.verb if tool else "do"
    return f"I'm sorry — I couldn't {verb} {label}: {reason}. {follow}"


def _say(action: _Action, talk: Conversation) -> str:
    if action.kind == "ok" and action.step is not None:
        return _ok_text(action.tool, action.step)
    if action.kind == "fail" and action.step is not None:
        return _fail_text(action.tool, action.step, again=talk.last_role != "tool")
    if action.kind == "close":
        return "You're welcome. Take care!"
    return action.text or "How can I help?"


def _call(name: str, arguments: dict[str, Any], seed: int) -> Message:
    call = ToolCall(id=f"call_{seed:x}", name=name, arguments=canonical_json(arguments))
    return Message(role="assistant", content=None, tool_calls=(call,))


def _render(action: _Action, talk: Conversation, seed: int) -> Message:
    if action.kind in ("call", "retry") and action.tool is not None:
        return _call(action.tool.name, action.arguments or {}, seed)
    return Message(role="assistant", content=_fresh(_say(action, talk), talk.previous_text))


# --------------------------------------------------------------------------- mistakes


def _invent(param: Param, rng: random.Random, sources: str,
            like: object = None) -> str | int:
    """An identifier nobody gave: shaped like the real one when there is one (``#W8178512``
    → ``#W3920417``, punctuation kept, as a model that misremembers digits would write it),
    else ``ORD-123456``-style from the parameter's name."""
    for attempt in range(10_000):
        number = rng.randrange(10_000, 1_000_000)
        if isinstance(like, str) and sum(ch.isdigit() for ch in like) >= 3 and attempt < 20:
            invented: str | int = "".join(rng.choice("0123456789") if ch.isdigit() else ch
                                          for ch in like)
        elif param.kind == "id" and not param.name.lower().endswith(("number", "no", "num")):
            prefix = (name_tokens(param.name) or ("id",))[0][:3].upper()
            invented = f"{prefix}-{number}"
        else:
            invented = number
        if normalise(str(invented)) not in sources:
            return invented
    raise AssertionError("no fresh identifier in 10,000 draws")  # pragma: no cover


def _plant(rng: random.Random, action: _Action, talk: Conversation, catalog: Catalog,
           seed: int, messages: Sequence[Message]) -> tuple[str, Message]:
    """One mistake that fits the moment, and its label; always one of PLANTED_KINDS."""
    tool = action.tool
    acting = action.kind in ("call", "retry")
    options = ["empty_reply"]
    if not acting:
        options.append("harness_leak")
    if talk.previous_text and not claims_success(talk.previous_text):
        options.append("repeated_reply")
    if tool is not None and action.kind in ("call", "ask") \
            and any(p.kind == "id" for p in tool.required):
        options.append("invented_identifier")
    if acting and tool is not None:
        options.append("undeclared_tool")
    if action.kind == "fail" and talk.last_role == "tool":
        options.append("claimed_success_after_failure")
    if tool is not None and tool.mutating and action.kind in ("call", "ask") \
            and not talk.mutating_called and not any(talk.outstanding.values()):
        options.append("action_without_tool_call")
    kind = rng.choice(options)
    if kind == "empty_reply":
        return kind, Message(role="assistant", content="")
    if kind == "repeated_reply":
        return kind, Message(role="assistant", content=talk.previous_text)
    if kind == "harness_leak":
        text = f"{_say(action, talk)} {rng.choice(_LEAKS)}"
        return kind, Message(role="assistant", content=_fresh(text, talk.previous_text))
    if kind == "claimed_success_after_failure":
        record = _record_of(action.step) if action.step is not None else None
        noun = tool.noun if tool is not None else "request"
        label = f"your {noun}{f' {record}' if record else ''}"
        # an action verb only where an action was tried: else action_without_tool_call
        # would fire too, and each planted mistake should be caught by its own check
        text = (f"Done — {label} has been {tool.past or 'processed'} successfully."
                if tool is not None and tool.mutating else
                f"Done — I've got everything for {label} successfully.")
        return kind, Message(role="assistant", content=_fresh(text, talk.previous_text))
    assert tool is not None  # the remaining options all need a tool
    if kind == "invented_identifier":
        arguments = dict(action.arguments or fill_arguments(tool, talk)[0])
        sources = "".join(normalise(m.content or "") for m in messages
                          if m.role != "assistant")
        param = next(p for p in tool.required if p.kind == "id")
        arguments[param.name] = _invent(param, rng, sources, arguments.get(param.name))
        return kind, _call(tool.name, arguments, seed)
    if kind == "undeclared_tool":
        names = (f"{tool.name}_v2", f"{tool.name}_admin", "escalate_to_supervisor")
        name = next(n for n in names if n not in catalog.names)
        return kind, _call(name, action.arguments or {}, seed)
    # action_without_tool_call
    filled = fill_arguments(tool, talk)[0]
    given = next((filled[p.name] for p in tool.required if p.kind == "id" and p.name in filled),
                 None)
    text = (f"I've {tool.past or 'processed'} your {tool.noun}"
            f"{f' {given}' if isinstance(given, str) else ''}. "
            "Is there anything else I can help with?")
    return kind, Message(role="assistant", content=_fresh(text, talk.previous_text))


__all__ = ["PLANTED_KINDS", "OfflineAgent"]
