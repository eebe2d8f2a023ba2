"""What the offline agent reads off a request: its tools, the conversation, the values.

Private to :mod:`generator.offline_agent`. :func:`catalog_of` parses a tool set once
(required parameters and their kinds, parameters worth filling when a value fits, the
words of names and descriptions, the words only action names hold); :class:`Conversation`
reads the messages (the person's texts, every tool call with its result, the previous
reply, the identifiers results refused or listed, each identifier with the words that name
its kind); :func:`asked_actions` finds the action the person asks for (or the ones that
tie); :func:`choose_tool` scores tools by the words they share with the person (the
latest message counts double, an identifier whose letters fit a parameter adds a point, a
tie goes to a tool that only reads); :func:`fill_arguments` takes values only from what
the person wrote or a successful result returned, never inventing one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from generator._conduct_words import (
    PAST_TENSES,
    is_mutating,
    looks_like_identifier,
    name_tokens,
    past_tense,
    result_failure,
)
from generator.records import Message, ToolCall, ToolSpec
from processor.results import read_result

_WORD = re.compile(r"[a-z]+")
# an identifier as written, its punctuation kept: #W8178512, ORD-4821, credit_card_7815826
_ID_IN_TEXT = re.compile(
    r"(?<![\w@.#])#?(?=[\w-]*\d)[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*(?![\w@])")
_NOT_ID = re.compile(r"\d+(?:st|nd|rd|th|am|pm|h|m|s|x|k|kg|gb|mb|usd|eur|gbp|fa|d)", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?[\d\s().-]{7,}\d")
# written like a phone number (555-123-2002, (555) 123 2002): never another kind of id
_PHONE_SHAPED = re.compile(r"\+?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}")
_PHONE_WORDS = frozenset({"phone", "mobile", "tel", "msisdn", "telephone"})
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


# everyday words for what tools call otherwise (a word may stand for several)
_SYNONYMS = {"where": "status", "track": "status", "check": "status", "late": "status",
             "arrive": "status", "delay": "status", "delayed": "status", "time": "status",
             "money": "refund", "back": "refund", "modify": "update", "change": "update",
             "stop": "cancel", "new": "create", "open": "create", "remove": "delete",
             "instead": "update", "switch": "update", "move": "update", "redirect": "update",
             "amend": "update", "edit": "update", "fix": "update", "correct": "update",
             "swap": "update", "drop": "cancel", "scrap": "cancel", "cancellation": "cancel",
             "bag": "baggage", "luggage": "baggage", "suitcase": "baggage",
             "traveller": "passenger", "traveler": "passenger", "misspelled": "passenger",
             "typo": "passenger", "birthday": "passenger",
             "upgrade": "flight update", "cabin": "flight", "business": "flight",
             "economy": "flight", "rebook": "flight",
             "compensation": "certificate", "compensate": "certificate",
             "voucher": "certificate", "pay": "payment", "settle": "payment",
             "topup": "refuel", "refill": "refuel", "pause": "suspend", "freeze": "suspend",
             "reactivate": "resume", "restore": "resume", "unsuspend": "resume",
             "human": "transfer", "representative": "transfer", "supervisor": "transfer",
             "activate": "enable", "deactivate": "disable",
             "allow": "enable", "permit": "enable", "abroad": "enable", "overseas": "enable",
             "block": "disable", "bump": "update"}


# "turn roaming on" / "switch it off": the particle says which
_BETWEEN = r"(?:(?!on\b|off\b)\w+\s+){0,2}?"
_PHRASES = ((re.compile(rf"\b(?:turn|switch)(?:ed|ing|s)?\s+{_BETWEEN}on\b"), " enable "),
            (re.compile(rf"\b(?:turn|switch)(?:ed|ing|s)?\s+{_BETWEEN}off\b"), " disable "),
            (re.compile(r"\bon\s+hold\b"), " suspend "))


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    low = text.lower()
    for pattern, word in _PHRASES:
        low = pattern.sub(rf"\g<0>{word}", low)
    raw = [word for word in _WORD.findall(low) if word not in _STOP]
    words = {_stem(word) for word in raw}
    return frozenset(words | {other for word in (*raw, *words) if word in _SYNONYMS
                              for other in _SYNONYMS[word].split()})


@lru_cache(maxsize=4096)
def _ids_in(text: str) -> tuple[str, ...]:
    found = [(match.start(), match[0]) for match in _ID_IN_TEXT.finditer(text)
             if not _NOT_ID.fullmatch(match[0]) and looks_like_identifier(match[0], "id")]
    # a booking code of capitals alone ("on PKKZAV"), never a shouted word ("ASAP")
    found += [(match.start(), match[0]) for match in _CODE.finditer(text)
              if match[0].lower() not in _SHOUTED]
    return tuple(token for _, token in sorted(found))


_CODE = re.compile(r"(?<![\w#@.-])[A-Z]{6}(?![\w@-])")
_SHOUTED = frozenset({"please", "thanks", "urgent", "cancel", "refund", "update", "change",
                     "really", "honest", "seriously", "asap", "hello", "answer", "status",
                     "online", "broken", "locked", "lately", "before", "simple",
                     "ticket", "double", "charge", "twenty", "always", "people"})


_GENERIC_ID_WORDS = frozenset({"id", "ids", "number", "no", "num", "code", "ref", "is", "my",
                               "the", "a", "for", "of", "reference", "and", "it", "its"})


@lru_cache(maxsize=4096)
def _labels_in(text: str) -> dict[str, frozenset[str]]:
    """Each identifier of a text with the words just before it, stemmed, generic ones
    dropped: "SKU TRS-956 ... my order id is A-23809" → {TRS-956: {sku}, A-23809: {order}}."""
    labels: dict[str, frozenset[str]] = {}
    ids = _ids_in(text)
    matches = [m for m in (*_ID_IN_TEXT.finditer(text), *_CODE.finditer(text)) if m[0] in ids]
    ends = sorted(m.end() for m in matches)
    for match in sorted(matches, key=lambda m: m.start()):
        token = match[0]
        # the words since the sentence began or the identifier before it ended
        start = max([max(0, match.start() - 40)] + [e for e in ends if e <= match.start()])
        window = re.split(r"[.!?;]\s", text[start:match.start()])[-1]
        before = _WORD.findall(window.lower())[-4:]
        labels.setdefault(token, frozenset(
            _stem(word) for word in before if word not in _GENERIC_ID_WORDS))
    return labels


_THINGS = frozenset({"order", "sku", "product", "item", "account", "customer", "user",
                     "reservation", "booking", "flight", "line", "bill", "invoice", "ticket",
                     "case", "subscription", "payment", "card", "tracking", "phone", "device",
                     "plan", "member", "policy", "claim", "shipment", "parcel", "package"})


# what people call a record that tools name otherwise ("ticket 8JX2WO" for reservation_id)
_SAME_THING = {"booking": ("reservation",), "ticket": ("reservation",),
               "confirmation": ("reservation",), "conf": ("reservation",),
               "trip": ("reservation",), "pnr": ("reservation",),
               "account": ("customer", "user"), "client": ("customer",),
               "number": ("phone",), "bill": ("invoice",), "invoice": ("bill",)}


def _fit(token: str, param: str, labels: dict[str, frozenset[str]]) -> int:
    """How well an identifier fits a parameter: the words before it name the parameter
    (+2: "order A-23809" for ``order_id``) or another thing (-2: "SKU TRS-956" for
    ``order_id``); its letters fit the parameter's (+1: ORD-1 for ``order_id``)."""
    return _fit_label(token, param, labels.get(token, frozenset()))


@lru_cache(maxsize=16384)
def _fit_label(token: str, param: str, label: frozenset[str]) -> int:
    words = {_stem(word) for word in name_tokens(param)} - _GENERIC_ID_WORDS
    label = label | {other for word in label for other in _SAME_THING.get(word, ())}
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
    optional: tuple[Param, ...] = ()
    """Parameters not required that a careful agent fills when the person gave a value
    that fits (an identifier, a phone number, an e-mail address, a date)."""

    @property
    def params(self) -> tuple[Param, ...]:
        return self.required + self.optional


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
    names = {param.name for param in required}
    optional = tuple(param for param in (_param(name, schema) for name, schema
                                         in properties.items() if name not in names)
                     if param.kind in ("id", "email", "date"))
    mutating = is_mutating(spec.name)
    verb = next((t for t in tokens if _stem(t) in PAST_TENSES.values()), "") if mutating else ""
    rest = [t for t in tokens if t != verb and t not in ("get", "lookup", "find", "check",
                                                         "search", "list", "fetch", "status")]
    return Tool(spec.name, frozenset(_stem(t) for t in tokens),
                 frozenset(_words(spec.description)), required, mutating,
                 past_tense(spec.name), verb or "look up", " ".join(rest) or "request",
                 optional)


@dataclass(frozen=True)
class Catalog:
    tools: tuple[Tool, ...]
    names: frozenset[str]
    tokens: int
    act_words: frozenset[str] = frozenset()
    """Words of action names that no read tool's name has (``baggage``, ``roaming``,
    ``cancel``): a person who says one asks for an action."""
    action_share: dict[str, int] = field(default_factory=dict)
    """How many action names hold each word (a word of one action only tells most)."""
    asks: dict[tuple[str, frozenset[str], frozenset[str]], Any] = field(
        default_factory=dict, compare=False)
    """What each message asks for (:func:`_action_in`), kept: a catalog outlives a reply."""


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
        self.asked_what = any(m.role == "assistant" and m.content and "what would you like "
                              "me to do" in m.content.lower() for m in messages)
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
        self.refused = _refused(self.steps)
        self._labels: dict[str, frozenset[str]] | None = None
        self._fits: dict[tuple[str, str], int] = {}
        self._filled: dict[tuple[str, tuple[tuple[str, str], ...]],
                           tuple[dict[str, Any], list[Param]]] = {}
        self.listed = frozenset().union(*(_listed(step.result) for step in self.steps
                                           if step.result is not None and not step.failed))
        self.mutating_called = any(is_mutating(step.name) for step in self.steps)
        self.outstanding = {step.name: step.failed for step in self.steps}
        self.fresh: list[Step] = []
        if self.last_role == "tool":
            last = next(m for m in reversed(messages) if m.role == "assistant")
            ids = {call.id for call in last.tool_calls}
            self.fresh = [step for call_id, step in zip(calls, self.steps, strict=True)
                          if call_id in ids]

    @property
    def labels(self) -> dict[str, frozenset[str]]:
        """Every identifier said or returned with the words that name its kind."""
        if self._labels is None:
            self._labels = _labels(self)
        return self._labels


@lru_cache(maxsize=4096)
def _failed(result: str) -> bool:
    # a stale body still reports what was done (the agent says it may be out of date)
    return result_failure(result) not in (None, "stale_result")


@lru_cache(maxsize=4096)
def _not_found(result: str) -> bool:
    return read_result(result).condition == "not_found"


def _refused(steps: Sequence[Step]) -> frozenset[str]:
    """Identifiers a result said do not exist: the ones its message names, else every
    identifier of the call ("Error: Order not found"). A careful agent does not send them
    again; it asks, or takes the one the person gives next."""
    refused: set[str] = set()
    for step in steps:
        if not step.failed or not step.result or not _not_found(step.result):
            continue
        arguments = parse_json(step.arguments)
        if not isinstance(arguments, dict):
            continue
        values = [str(value) for key, value in arguments.items()
                  if isinstance(value, str | int) and not isinstance(value, bool)
                  and looks_like_identifier(str(value), str(key))]
        named = [value for value in values if value in step.result]
        refused.update(named or values)
    return frozenset(refused)


def parse_json(result: str) -> Any:
    try:
        return orjson.loads(result)
    except orjson.JSONDecodeError:
        return None


def canonical_json(arguments: dict[str, Any]) -> str:
    return orjson.dumps(arguments).decode()


def catalog_of(tools: Sequence[ToolSpec]) -> Catalog:
    """The parsed tool set (build once per tools tuple: it costs more than a reply)."""
    parsed = tuple(_tool(spec) for spec in tools)
    reads = frozenset().union(*(t.name_words for t in parsed if not t.mutating))
    share = Counter(word for t in parsed if t.mutating for word in t.name_words)
    acts = frozenset(share) - reads - _NOT_ACTS
    return Catalog(parsed, frozenset(spec.name for spec in tools),
                   sum(len(spec.description) + len(str(spec.parameters)) for spec in tools) // 4,
                   acts, dict(share))


_NOT_ACTS = frozenset({"agent", "request", "to", "the", "a", "for", "of", "by", "id", "data",
                       "info", "detail"})


def asked_actions(talk: Conversation, catalog: Catalog, acts: frozenset[str]
                  ) -> tuple[Tool | None, tuple[Tool, ...]]:
    """The action the person asks for: the action tool whose name shares an action word
    with what they wrote ("cancel", "bag" → ``update_reservation_baggages``), scored by
    the words it shares (a word of this action only counts double, words in a sentence
    that names a record double again), the first message that asks for one deciding
    unless a later one names an action by a word of it only; or None and the actions that
    tie when none is clear ("roaming": enable or disable?) so the agent can ask which."""
    chosen: Tool | None = None
    tied: tuple[Tool, ...] = ()
    signals = catalog.act_words | acts
    for text in talk.users:
        key = (text, signals, talk.refused)
        if key not in catalog.asks:
            if len(catalog.asks) > 8192:
                catalog.asks.clear()
            catalog.asks[key] = _action_in(text, catalog, signals, talk.refused)
        found = catalog.asks[key]
        if found is None:
            continue
        if not isinstance(found[1], bool):  # a tie: which of these? (the first ask's)
            tied = tied or tuple(t for t in found if isinstance(t, Tool))
            continue
        if chosen is None or found[1]:
            chosen = found[0]  # a later message overrides with a word of one action only
    return chosen, (() if chosen is not None else tied)


def _misspelt(words: frozenset[str], vocabulary: frozenset[str]) -> frozenset[str]:
    """Words of ``vocabulary`` that a word of ``words`` misspells by one slip (a letter
    doubled, dropped, swapped or changed), for words of five letters or more."""
    found: set[str] = set()
    for word in words:
        if len(word) >= 5:
            found.update(_slips(word, vocabulary))
    return frozenset(found)


@lru_cache(maxsize=16384)
def _slips(word: str, vocabulary: frozenset[str]) -> tuple[str, ...]:
    return tuple(known for known in vocabulary if len(known) >= 5
                 and abs(len(known) - len(word)) <= 1 and _one_slip(word, known))


def _one_slip(a: str, b: str) -> bool:
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


@lru_cache(maxsize=4096)
def _heads(text: str) -> frozenset[str]:
    """The thing each identifier is called right before it ("my line id is L1436" →
    line), when nothing else stands between."""
    heads: set[str] = set()
    low = text.lower()
    for token in _ids_in(text):
        at = low.find(token.lower())
        words = [w for w in _WORD.findall(low[max(0, at - 30):at])
                 if w not in _GENERIC_ID_WORDS]
        if words and _stem(words[-1]) in _THINGS:
            heads.add(_stem(words[-1]))
    return frozenset(heads)


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def _action_in(text: str, catalog: Catalog, signals: frozenset[str], refused: frozenset[str]
               ) -> tuple[Tool, bool] | tuple[Tool, ...] | None:
    """(the action, whether a word of it only said so), or the actions that tie."""
    """The action one message asks for, and whether a word of that action only says so;
    words in a sentence that names a record count double ("I want to pay my bill B4241"
    over "I want a human")."""
    # "my line id is L1436" names a record, it asks for nothing
    named = _heads(text)
    said = _words(text) - named
    said |= _misspelt(said - signals, signals)  # "enabble" is "enable"
    near = _words(" ".join(sentence for sentence in _SENTENCE.findall(text)
                           if any(token not in refused for token in _ids_in(sentence))))
    scored: list[tuple[int, bool, Tool]] = []
    for tool in catalog.tools:
        if not tool.mutating or not (tool.name_words & said & signals):
            continue
        shared = tool.name_words & said
        unique = {word for word in shared if catalog.action_share.get(word, 0) == 1}
        score = len(shared) + len(unique) + 2 * len(tool.name_words & near & signals)
        scored.append((score, bool(unique & signals), tool))
    if not scored:
        return None
    scored.sort(key=lambda item: -item[0])
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return tuple(tool for score, _, tool in scored if score == scored[0][0])
    return scored[0][2], scored[0][1]


def rank_tools(talk: Conversation, catalog: Catalog) -> list[Tool]:
    """The tools that share words or identifiers with what the person wrote, best first
    (the latest message counts double; on a tie, looking something up comes before
    changing it)."""
    if not catalog.tools or not talk.users:
        return []
    latest, everything = _words(talk.users[-1]), _words(" ".join(talk.users))
    ids = [token for text in talk.users for token in _ids_in(text)]
    labels = talk.labels
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


@lru_cache(maxsize=4096)
def _listed(result: str) -> frozenset[str]:
    """Identifiers a result lists several of under one key (``"line_ids": [...]``)."""
    out: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            plain = [str(v) for v in value if isinstance(v, str | int)
                     and not isinstance(v, bool)]
            if len(plain) > 1:
                out.update(plain)
            for inner in value:
                walk(inner)

    walk(parse_json(result))
    return frozenset(out)


@lru_cache(maxsize=4096)
def _result_labels(result: str) -> dict[str, frozenset[str]]:
    """Each identifier a result returned with the words of the key it came under
    (``"user_id": "mia_li_1"`` → {user}; a bare ``id`` takes its parent's key)."""
    labels: dict[str, frozenset[str]] = {}

    def walk(value: Any, key: str, parent: str) -> None:
        if isinstance(value, dict):
            for inner_key, inner in value.items():
                walk(inner, str(inner_key), key or parent)
        elif isinstance(value, list):
            for inner in value:
                walk(inner, key, parent)
        elif isinstance(value, str | int) and not isinstance(value, bool) and key and \
                looks_like_identifier(str(value), key) and set(name_tokens(key)) & _ID_WORDS:
            named = {_stem(w) for w in name_tokens(key)} - _GENERIC_ID_WORDS or \
                {_stem(w) for w in name_tokens(parent)} - _GENERIC_ID_WORDS
            labels.setdefault(str(value), frozenset(named))

    walk(parse_json(result), "", "")
    return labels


def _labels(talk: Conversation) -> dict[str, frozenset[str]]:
    """Every identifier the person wrote with the words before it (latest mention wins),
    and every one a result returned with the words of its key (the person's words win)."""
    merged: dict[str, frozenset[str]] = {}
    for step in talk.steps:
        if step.result is not None and not step.failed:
            merged.update(_result_labels(step.result))
    for text in talk.users:
        merged.update({token: label for token, label in _labels_in(text).items()
                       if label or token not in merged})
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


def is_phone_param(param: Param) -> bool:
    return bool(_PHONE_WORDS & set(name_tokens(param.name)))


def fits(token: str, param: Param, talk: Conversation) -> int:
    """How well an identifier the person gave fits a parameter (see :func:`_fit`); a
    phone number fits a phone parameter best and no other."""
    key = (token, param.name)
    score = talk._fits.get(key)
    if score is None:
        if is_phone_param(param):
            digits = sum(ch.isdigit() for ch in token)
            score = 3 if _PHONE_SHAPED.fullmatch(token) else 2 if _PHONE.fullmatch(token) \
                and digits >= 10 else -9
        elif _PHONE_SHAPED.fullmatch(token):
            score = -9
        else:
            score = _fit(token, param.name, talk.labels)
        talk._fits[key] = score
    return score


def person_ids_in(text: str) -> tuple[str, ...]:
    """The identifiers one text states."""
    return _ids_in(text)


def tool_words_of(text: str) -> frozenset[str]:
    """One text's words as tools are compared with them (stemmed, everyday synonyms)."""
    return _words(text)


def generic_id(param: Param) -> bool:
    """A parameter that takes any kind of identifier (``id``: a lookup by any id)."""
    return param.kind == "id" and not (set(name_tokens(param.name)) - _GENERIC_ID_WORDS)


def person_ids(talk: Conversation) -> list[str]:
    """Identifiers the person wrote, in the order first said, none a result refused."""
    return [token for token in dict.fromkeys(token for text in talk.users
                                             for token in _ids_in(text))
            if token not in talk.refused]


def fill_arguments(tool: Tool, talk: Conversation,
                   prefer: dict[str, str] | None = None) -> tuple[dict[str, Any], list[Param]]:
    """The tool's arguments from what the person said and results returned, and the
    required parameters still missing. ``prefer`` pins values (a lookup of one record);
    parameters not required are filled only with a value that fits them."""
    key = (tool.name, tuple(sorted(prefer.items())) if prefer else ())
    cached = talk._filled.get(key)  # the conversation's own cache
    if cached is None:
        cached = talk._filled[key] = _fill(tool, talk, prefer)
    return dict(cached[0]), list(cached[1])


def _fill(tool: Tool, talk: Conversation, prefer: dict[str, str] | None
          ) -> tuple[dict[str, Any], list[Param]]:
    arguments: dict[str, Any] = {}
    missing: list[Param] = []
    ids = [token for token in dict.fromkeys(_ids_given(talk)) if token not in talk.refused]
    said_ids = person_ids(talk)
    listed, spoken = talk.listed - set(said_ids), set(said_ids)
    used: set[str] = set(prefer.values()) if prefer else set()
    said = " ".join(talk.users)
    for param in tool.params:
        value: Any = None
        required = param in tool.required
        if prefer and param.name in prefer:
            value = prefer[param.name]
        elif param.kind == "id":
            free = [token for token in ids if token not in used]
            # a phone number goes where a phone is asked for, and only there
            phone = is_phone_param(param)
            free = [t for t in free if bool(_PHONE.fullmatch(t)) == phone] or (
                [] if phone else [t for t in free if not _PHONE_SHAPED.fullmatch(t)])
            ranked = sorted(free, key=lambda t: -fits(t, param, talk))  # stable
            value = ranked[0] if ranked else None
            if value is not None and value in listed and len(
                    [t for t in ranked if fits(t, param, talk) == fits(value, param, talk)
                     and t in listed]) > 1 and fits(value, param, talk) > 0:
                # one of several lines a result listed: the one the person said, else ask
                value = next((t for t in ranked if t not in listed and t in spoken
                              and fits(t, param, talk) > 0), None)
            # never a record of another kind ("user mia_li_1" for payment_id): ask instead
            if value is not None and fits(value, param, talk) < (0 if required else 1):
                value = None
            if value is not None:
                used.add(value)
        elif not required:
            if param.kind == "email":
                found = _EMAIL.findall(said)
                value = found[-1] if found else None
            elif param.kind == "date":
                dates = _DATE.findall(said)
                value = dates[-1] if dates else None
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
        if value is not None:
            arguments[param.name] = value
        elif required:
            missing.append(param)
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
