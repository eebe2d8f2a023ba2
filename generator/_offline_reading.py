"""What the offline agent reads off a request: its tools, the conversation, the values.

Private to :mod:`generator.offline_agent`. :func:`catalog_of` parses a tool set once
(required parameters and their kinds, the words of names and descriptions);
:class:`Conversation` reads the messages (the person's texts, every tool call with its
result, the previous reply); :func:`choose_tool` scores tools by the words they share with
the person (the latest message counts double, an identifier whose letters fit a parameter
adds a point, a tie goes to a tool that only reads); :func:`fill_arguments` takes values
only from what the person wrote or a successful result returned, never inventing one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from generator._conduct_words import (
    PAST_TENSES,
    is_mutating,
    looks_like_identifier,
    name_tokens,
    past_tense,
    result_failed,
)
from generator.records import Message, ToolCall, ToolSpec

_WORD = re.compile(r"[a-z]+")
# an identifier as written, its punctuation kept: #W8178512, ORD-4821, credit_card_7815826
_ID_IN_TEXT = re.compile(
    r"(?<![\w@.#])#?(?=[\w-]*\d)[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*(?![\w@])")
_NOT_ID = re.compile(r"\d+(?:st|nd|rd|th|am|pm|h|m|s|x|k|kg|gb|mb|usd|eur|gbp)", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?[\d\s().-]{7,}\d")
_NUMBER = re.compile(r"(?<![\w.-])[$€£]?(\d+(?:\.\d+)?)(?![\w-])")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_STOP = frozenset({
    "the", "a", "an", "to", "for", "of", "and", "or", "my", "your", "i", "you", "me", "it",
    "is", "are", "be", "this", "that", "with", "on", "in", "at", "by", "from", "can",
    "could", "please", "would", "like", "want", "need", "help", "hi", "hello", "hey",
    "thanks", "thank", "just", "do", "does", "did", "have", "has", "was", "were", "we",
    "our", "us", "its", "id", "not", "no", "yes", "so", "if", "as", "all", "any", "will",
})
_TEXT_PARAMS = frozenset({"reason", "note", "notes", "message", "comment", "description",
                          "query", "text", "details", "issue", "question", "feedback",
                          "body", "subject", "summary", "problem"})
_ID_WORDS = frozenset({"id", "ids", "number", "no", "num", "code", "ref", "reference",
                       "key", "sku", "pin", "iban", "tracking"})


def _stem(word: str) -> str:
    if word in PAST_TENSES:
        return PAST_TENSES[word]
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


# everyday words for what tools call otherwise
_SYNONYMS = {"where": "status", "track": "status", "check": "status", "late": "status",
             "arrive": "status",
             "money": "refund", "back": "refund", "modify": "update", "change": "update",
             "stop": "cancel", "new": "create", "open": "create", "remove": "delete",
             "instead": "update", "switch": "update", "move": "update", "redirect": "update"}


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    words = {_stem(word) for word in _WORD.findall(text.lower()) if word not in _STOP}
    return frozenset(words | {_SYNONYMS[word] for word in words if word in _SYNONYMS})


@lru_cache(maxsize=4096)
def _ids_in(text: str) -> tuple[str, ...]:
    return tuple(token for token in _ID_IN_TEXT.findall(text)
                 if not _NOT_ID.fullmatch(token) and looks_like_identifier(token, "id"))


_GENERIC_ID_WORDS = frozenset({"id", "ids", "number", "no", "num", "code", "ref", "is", "my",
                               "the", "a", "for", "of", "reference", "and", "it", "its"})


@lru_cache(maxsize=4096)
def _labels_in(text: str) -> dict[str, frozenset[str]]:
    """Each identifier of a text with the words just before it, stemmed, generic ones
    dropped: "SKU TRS-956 ... my order id is A-23809" → {TRS-956: {sku}, A-23809: {order}}."""
    labels: dict[str, frozenset[str]] = {}
    for match in _ID_IN_TEXT.finditer(text):
        token = match[0]
        if token not in _ids_in(text):
            continue
        before = _WORD.findall(text[max(0, match.start() - 40):match.start()].lower())[-4:]
        labels.setdefault(token, frozenset(
            _stem(word) for word in before if word not in _GENERIC_ID_WORDS))
    return labels


_THINGS = frozenset({"order", "sku", "product", "item", "account", "customer", "user",
                     "reservation", "booking", "flight", "line", "bill", "invoice", "ticket",
                     "case", "subscription", "payment", "card", "tracking", "phone", "device",
                     "plan", "member", "policy", "claim", "shipment", "parcel", "package"})


def _fit(token: str, param: str, labels: dict[str, frozenset[str]]) -> int:
    """How well an identifier fits a parameter: the words before it name the parameter
    (+2: "order A-23809" for ``order_id``) or another thing (-2: "SKU TRS-956" for
    ``order_id``); its letters fit the parameter's (+1: ORD-1 for ``order_id``)."""
    words = {_stem(word) for word in name_tokens(param)} - _GENERIC_ID_WORDS
    label = labels.get(token, frozenset())
    score = 2 if label & words else -2 if label & _THINGS else 0
    return score + _hinted(token, param)


def _plain(name: str) -> str:
    """order_id → order ID; email → email address."""
    words = [("ID" if word in ("id", "ids") else word) for word in name_tokens(name)]
    if words == ["email"]:
        return "email address"
    return " ".join(words) or name


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # id, email, number, integer, boolean, enum, date, text, string
    enum: tuple[str, ...]
    plain: str


@dataclass(frozen=True)
class Tool:
    name: str
    name_words: frozenset[str]
    words: frozenset[str]
    required: tuple[Param, ...]
    mutating: bool
    past: str | None
    verb: str
    noun: str


def _param(name: str, schema: Any) -> Param:
    schema = schema if isinstance(schema, dict) else {}
    tokens = set(name_tokens(name))
    kind_of = schema.get("type")
    enum = tuple(str(value) for value in schema.get("enum", ()) or ())
    if enum:
        kind = "enum"
    elif "email" in tokens or schema.get("format") == "email":
        kind = "email"
    elif kind_of == "boolean":
        kind = "boolean"
    elif kind_of in ("integer", "number"):
        kind = "integer" if kind_of == "integer" else "number"
        if tokens & _ID_WORDS:
            kind = "id"
    elif tokens & _ID_WORDS:
        kind = "id"
    elif "date" in tokens or schema.get("format") == "date":
        kind = "date"
    elif tokens & _TEXT_PARAMS:
        kind = "text"
    else:
        kind = "string"
    return Param(name, kind, enum, _plain(name))


def _tool(spec: ToolSpec) -> Tool:
    tokens = name_tokens(spec.name)
    properties = spec.parameters.get("properties", {}) or {}
    required = tuple(_param(name, properties.get(name))
                     for name in spec.parameters.get("required", ()) or () if name)
    mutating = is_mutating(spec.name)
    verb = next((t for t in tokens if _stem(t) in PAST_TENSES.values()), "") if mutating else ""
    rest = [t for t in tokens if t != verb and t not in ("get", "lookup", "find", "check",
                                                         "search", "list", "fetch", "status")]
    return Tool(spec.name, frozenset(_stem(t) for t in tokens),
                 frozenset(_words(spec.description)), required, mutating,
                 past_tense(spec.name), verb or "look up", " ".join(rest) or "request")


@dataclass(frozen=True)
class Catalog:
    tools: tuple[Tool, ...]
    names: frozenset[str]
    tokens: int


@dataclass(frozen=True)
class Step:
    """A tool call of the conversation with its result (None before it is answered)."""

    name: str
    arguments: str
    result: str | None
    failed: bool


class Conversation:
    """What the agent reads off the messages before it answers."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.users = [m.content or "" for m in messages if m.role == "user"]
        self.last_role = messages[-1].role if messages else "system"
        self.previous_text = next((m.content.strip() for m in reversed(messages)
                                   if m.role == "assistant" and m.content
                                   and m.content.strip()), "")
        calls: dict[str, ToolCall] = {}
        results: dict[str, str] = {}
        self.steps: list[Step] = []
        for message in messages:
            if message.role == "assistant":
                for call in message.tool_calls:
                    calls[call.id] = call
            elif message.role == "tool" and message.tool_call_id in calls:
                results[message.tool_call_id] = message.content or ""
        for call_id, call in calls.items():
            result = results.get(call_id)
            self.steps.append(Step(call.name, call.arguments, result,
                                    result is not None and _failed(result)))
        self.counts = Counter((step.name, step.arguments) for step in self.steps)
        self.mutating_called = any(is_mutating(step.name) for step in self.steps)
        self.outstanding = {step.name: step.failed for step in self.steps}
        self.fresh: list[Step] = []
        if self.last_role == "tool":
            last = next(m for m in reversed(messages) if m.role == "assistant")
            ids = {call.id for call in last.tool_calls}
            self.fresh = [step for call_id, step in zip(calls, self.steps, strict=True)
                          if call_id in ids]


@lru_cache(maxsize=4096)
def _failed(result: str) -> bool:
    return result_failed(result)


def parse_json(result: str) -> Any:
    try:
        return orjson.loads(result)
    except orjson.JSONDecodeError:
        return None


def canonical_json(arguments: dict[str, Any]) -> str:
    return orjson.dumps(arguments).decode()


def catalog_of(tools: Sequence[ToolSpec]) -> Catalog:
    """The parsed tool set (build once per tools tuple: it costs more than a reply)."""
    return Catalog(tuple(_tool(spec) for spec in tools), frozenset(spec.name for spec in tools),
                   sum(len(spec.description) + len(str(spec.parameters)) for spec in tools) // 4)


def rank_tools(talk: Conversation, catalog: Catalog) -> list[Tool]:
    """The tools that share words or identifiers with what the person wrote, best first
    (the latest message counts double; on a tie, looking something up comes before
    changing it)."""
    if not catalog.tools or not talk.users:
        return []
    latest, everything = _words(talk.users[-1]), _words(" ".join(talk.users))
    ids = [token for text in talk.users for token in _ids_in(text)]
    labels = _labels(talk)
    # "my order id is A-23809" names the record, not what the person wants done with it
    named = frozenset().union(*labels.values()) if labels else frozenset()
    intent_latest, intent_all = latest - named, everything - named
    scored: list[tuple[int, bool, int, Tool]] = []
    for position, tool in enumerate(catalog.tools):
        score = (2 * (3 * len(intent_latest & tool.name_words) + len(latest & tool.words))
                 + 3 * len(intent_all & tool.name_words) + len(everything & tool.words))
        # an identifier that fits a parameter (ORD-1 → order_id) points at the tool
        score += sum(max(0, _fit(token, param.name, labels)) for param in tool.required
                     if param.kind == "id" for token in ids)
        if score > 0:
            scored.append((-score, tool.mutating, position, tool))
    return [tool for *_, tool in sorted(scored, key=lambda item: item[:3])]


def choose_tool(talk: Conversation, catalog: Catalog) -> Tool | None:
    ranked = rank_tools(talk, catalog)
    if ranked:
        return ranked[0]
    if talk.steps:  # "try again": the tool the conversation is about
        return next((t for t in catalog.tools if t.name == talk.steps[-1].name), None)
    return None


def stem(word: str) -> str:
    """A word as :func:`choose_tool` compares it (``cancelled`` → ``cancel``)."""
    return _stem(word.lower())


def words_said(talk: Conversation) -> frozenset[str]:
    """The stemmed words of everything the person wrote."""
    return _words(" ".join(talk.users))


def _ids_given(talk: Conversation) -> Iterator[str]:
    """Identifiers the person wrote (latest message first), then ones results returned."""
    for text in reversed(talk.users):
        yield from _ids_in(text)
    for step in reversed(talk.steps):
        if step.result is not None and not step.failed:
            yield from ids_returned(step.result)


@lru_cache(maxsize=4096)
def ids_returned(result: str) -> tuple[str, ...]:
    return tuple(_result_ids(parse_json(result)))


def _result_ids(value: Any, key: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for inner_key, inner in value.items():
            yield from _result_ids(inner, str(inner_key))
    elif isinstance(value, list):
        for inner in value:
            yield from _result_ids(inner, key)
    elif isinstance(value, str | int) and not isinstance(value, bool) and key and \
            looks_like_identifier(str(value), key) and set(name_tokens(key)) & _ID_WORDS:
        yield str(value)


def _labels(talk: Conversation) -> dict[str, frozenset[str]]:
    """Every identifier the person wrote with the words before it (latest mention wins)."""
    merged: dict[str, frozenset[str]] = {}
    for text in talk.users:
        merged.update(_labels_in(text))
    return merged


def _hinted(token: str, param: str) -> bool:
    """Whether an id's letters fit the parameter (ORD → order_id, BK → booking_id)."""
    letters = re.match(r"[A-Za-z]+", token)
    words = name_tokens(param)
    if letters is None or not words:
        return False
    prefix, word = letters[0].lower(), words[0]
    if prefix[0] != word[0]:
        return False
    position = 0
    for char in prefix:
        position = word.find(char, position) + 1
        if position == 0:
            return False
    return True


def fill_arguments(tool: Tool, talk: Conversation) -> tuple[dict[str, Any], list[Param]]:
    arguments: dict[str, Any] = {}
    missing: list[Param] = []
    ids = list(dict.fromkeys(_ids_given(talk)))
    used: set[str] = set()
    said = " ".join(talk.users)
    for param in tool.required:
        value: Any = None
        if param.kind == "id":
            free = [token for token in ids if token not in used]
            phone = bool({"phone", "mobile", "tel", "msisdn"} & set(name_tokens(param.name)))
            # a phone number goes where a phone is asked for, and only there
            free = [t for t in free if bool(_PHONE.fullmatch(t)) == phone] or (
                [] if phone else free)
            labels = _labels(talk)
            ranked = sorted(free, key=lambda t: -_fit(t, param.name, labels))  # stable
            value = ranked[0] if ranked else None
            if value is not None:
                used.add(value)
        elif param.kind == "email":
            found = _EMAIL.findall(said)
            value = found[-1] if found else None
        elif param.kind in ("number", "integer"):
            bare = _ID_IN_TEXT.sub(lambda m: m[0] if m[0].replace(".", "").isdigit() else " ",
                                   talk.users[-1] if talk.users else "")
            numbers = _NUMBER.findall(bare) or _NUMBER.findall(said)
            if numbers:
                value = float(numbers[-1]) if param.kind == "number" else int(float(numbers[-1]))
        elif param.kind == "enum":
            value = next((v for text in reversed(talk.users) for v in param.enum
                          if v.lower() in text.lower()
                          or v.lower().replace("_", " ") in text.lower()), None)
        elif param.kind == "boolean":
            value = not re.search(r"\b(?:no|don't|do not|false)\b", said, re.I)
        elif param.kind == "date":
            dates = _DATE.findall(said)
            value = dates[-1] if dates else None
        elif param.kind == "text" and talk.users:
            value = " ".join(talk.users[0].split())[:200] or None
        else:
            value = _phrase(param, talk)
        if value is None:
            missing.append(param)
        else:
            arguments[param.name] = value
    return arguments, missing


def _phrase(param: Param, talk: Conversation) -> str | None:
    words = r"\s+".join(re.escape(w) for w in param.plain.lower().split())
    for text in reversed(talk.users):
        match = re.search(rf"{words}\s*(?:is|:|=)\s*([^\n,;!?]+?)\s*(?:[.,;!?]|$)", text, re.I)
        if match:
            return match[1].strip()
    # A short answer right after the agent asked for this very value is the value.
    if talk.users and param.plain.lower() in talk.previous_text.lower():
        answer = talk.users[-1].strip().rstrip(".!")
        if 0 < len(answer.split()) <= 8:
            return answer
    return None
