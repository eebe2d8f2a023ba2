"""Values of the simulated world: identifiers, placeholders, reshaped values.

Private to :mod:`generator.world` (which re-exports the public names). Rules in one place:

- *Identifier-like* (:func:`is_id_like`): a parameter named like a record's handle: ``id``,
  ``uuid``, ``ref``, ``reference``, ``pnr``, ``sku``, ``confirmation``, ``ticket``,
  ``locator``, or ending in one of those or in ``_number``, ``_code``, ``_no``, ``_num``,
  ``_nr`` (camelCase too: ``bookingRef``, ``orderNo``), or with ``format: uuid``; a
  ``*_key`` only when its value looks like an identifier (``license_key: LK-4821``, never
  ``api_key`` or ``sort_key``); a bare ``ticket``, ``confirmation`` or ``reference``
  holding a sentence is text. Never one with an ``enum``, of a non-scalar type, or naming
  a value rather than a record: the word before the ending is one of :data:`VALUE_HEADS`
  (``zip_code``, ``phone_number``, ``page_no``, ``country_code``...).
- *Placeholder* (:func:`looks_like_placeholder`): template syntax (``<order id>``,
  ``{{email}}``), an echo of the parameter's name or description or of a type or format
  (``string``, ``YYYY-MM-DD``), ``your ...``, example domains (``user@example.com``),
  stock names (``john doe``, ``first name``), filler words (``n/a``, ``test``, ``xxx``),
  sequential or repeated digits (``12345``, ``0000``) and masks (``XXXX-1234``).
- *Reshaping* (:func:`reshape`): a value seen in production becomes one of the same shape:
  digits and the letters after a token's leading letters are redrawn, words are kept,
  emails become ``name.x@mailbox.test``, dates (alone or inside a text) move near the
  world's clock and stay real dates.
"""

from __future__ import annotations

import functools
import random
import re
import uuid
from collections.abc import Container, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from generator.records import ToolSpec

ToolKind = Literal["read", "create", "update", "delete"]

_VERBS: dict[str, ToolKind] = {
    **dict.fromkeys(("get", "lookup", "find", "search", "list", "check", "fetch", "read",
                     "show", "view", "query", "retrieve", "describe", "track", "verify",
                     "validate", "calculate", "estimate", "count"), "read"),
    **dict.fromkeys(("create", "add", "book", "open", "place", "submit", "schedule",
                     "register", "new", "insert", "send", "post", "reserve"), "create"),
    **dict.fromkeys(("update", "change", "cancel", "refund", "set", "issue", "apply", "reset",
                     "modify", "edit", "approve", "reject", "assign", "close", "transfer",
                     "escalate", "pause", "resume", "activate", "deactivate", "renew",
                     "extend", "confirm", "mark", "redeem", "pay", "charge", "ship", "void",
                     "block", "unblock", "lock", "unlock", "upgrade", "downgrade", "move",
                     "rename", "replace", "return", "reschedule", "suspend", "enable", "disable",
                     "exchange", "refuel", "reactivate", "restore"), "update"),
    **dict.fromkeys(("delete", "remove", "purge", "erase", "destroy", "drop"), "delete"),
}
_IRREGULAR = {"refund": "refunded", "cancel": "cancelled", "cancellation": "cancelled",
              "set": "set", "reset": "reset", "pay": "paid", "send": "sent", "ship": "shipped",
              "submit": "submitted", "transfer": "transferred", "drop": "dropped",
              "new": "created", "lock": "locked", "unlock": "unlocked", "post": "posted",
              "open": "opened", "edit": "edited", "return": "returned"}
VALUE_HEADS = frozenset({
    "zip", "postal", "post", "country", "currency", "language", "locale", "region", "state",
    "area", "dial", "iso", "phone", "mobile", "telephone", "tel", "fax", "status", "error",
    "http", "response", "house", "street", "building", "floor", "flat", "apartment", "unit",
    "suite", "page", "line", "version", "card", "security", "cvv", "color", "colour", "max",
    "min", "total", "seat"})
"""Words that, before an identifier-like ending, name a value, not a record the world holds
(``zip_code``, ``line_number``); an ``*_id`` always names a record (``line_id``)."""
_ID_ENDINGS = frozenset({"id", "uuid", "guid", "number", "code", "ref", "reference", "no",
                         "num", "nr", "sku", "pnr", "confirmation", "locator", "ticket"})
_ID_ALONE = frozenset({"id", "uuid", "guid", "ref", "reference", "pnr", "sku", "confirmation",
                       "ticket", "locator"})
_ID_WORDS = frozenset({"id", "uuid", "guid", "number", "code", "ref", "reference", "no", "num",
                       "nr", "key"})  # words that say "handle", not what the record is
_NOT_RECORD_KEYS = frozenset({
    "api", "access", "secret", "private", "public", "encryption", "ssh", "sort", "partition",
    "cache", "idempotency", "dedup", "dedupe", "hash", "signing", "session", "sorting"})
_ID_VALUE = re.compile(r"^[#@$%&*~^]?(?=[^\s]*\d)[A-Za-z0-9]+(?:[-_./:][A-Za-z0-9]+)*$")

FIRST_NAMES = ("ana", "ben", "chloe", "dev", "emil", "fatima", "goran", "hana", "ivo", "june",
               "kofi", "lena", "mateo", "nia", "omar", "priya", "rosa", "sven", "tariq", "yuki")
SURNAMES = ("Kovac", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak", "Haddad",
             "Brennan", "Costa", "Ivanova", "Mensah")
STREETS = ("Elm Street", "Harbor Road", "Maple Avenue", "Station Lane", "Mill Court")
CITIES = ("Springfield", "Lisbon", "Tampere", "Osaka", "Porto", "Leeds", "Graz")
THINGS = ("trail running shoes", "rain jacket", "espresso grinder", "desk lamp",
           "wool blanket", "travel adapter", "kettle")
REASONS = ("item arrived damaged", "wrong size", "ordered by mistake", "changed my mind",
            "charged twice")

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
DATE_IN_TEXT = re.compile(
    r"(?<!\d)(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?|\d{2}:\d{2}(?::\d{2})?)(?!\d)")
_TOKENS = re.compile(r"([A-Za-z0-9]+)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# --------------------------------------------------------------------------- names


@functools.lru_cache(maxsize=4096)
def words(name: str) -> tuple[str, ...]:
    """A tool or parameter name as lowercase words (snake, kebab, dotted or camelCase)."""
    return tuple(w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", name).lower()) if w)


@functools.lru_cache(maxsize=4096)
def tool_nouns(name: str, *, skip: int = 0) -> frozenset[str]:
    """A name's words in the singular (``get_orders`` → ``get``, ``order``), after the
    first ``skip`` of them."""
    return frozenset(word.rstrip("s") for word in words(name)[skip:])


@functools.lru_cache(maxsize=1024)
def tool_verb(name: str) -> str | None:
    """The first known verb among a tool name's words (``issue_refund`` → ``issue``)."""
    return next((word for word in words(name) if word in _VERBS), None)


def tool_kind(name: str) -> ToolKind:
    """read, create, update or delete: the first known verb among the name's words."""
    verb = tool_verb(name)
    return _VERBS[verb] if verb is not None else "read"  # unclear: reading is harmless


@functools.lru_cache(maxsize=1024)
def past_tense(name: str) -> str:
    """What a tool's action leaves behind: ``issue_refund`` → ``refunded``."""
    parts = words(name)
    for word in ("refund", "cancel", "cancellation"):
        if word in parts:
            return _IRREGULAR[word]
    verb = next((word for word in parts if word in _VERBS), None)
    if verb is None:
        return "processed"
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def subject_noun(tool: str, id_name: str | None) -> str:
    """The thing a call is about, for messages: ``order`` for ``cancel_order``/``order_id``."""
    if id_name:
        named = [w for w in words(id_name) if w not in _ID_WORDS]
        if named:
            return " ".join(named)
    rest = [w for w in words(tool) if w not in _VERBS and w not in ("status", "details", "info")]
    return rest[0] if rest else "record"


def is_id_like(name: str, schema: Mapping[str, Any] | None, value: Any = None) -> bool:
    """Whether a parameter names a record the world must hold (see the module docstring);
    ``value``, when known, decides the ``*_key`` names."""
    if type(schema) is dict or isinstance(schema, Mapping):  # dict first: the hot path
        if schema.get("enum"):
            return False
        if schema.get("format") == "uuid":
            return True
        kind = schema.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(k in (None, "string", "integer") for k in kinds):
            return False
    if _named_like_id(name):  # a bare "ticket" or "reference" holding a sentence is text
        return not (isinstance(value, str) and " " in value.strip()
                    and words(name)[0] in ("ticket", "confirmation", "reference"))
    return value is not None and _named_like_key(name) and looks_like_id(str(value))


def looks_like_id(text: str) -> bool:
    """One token with a digit, such as ``LK-4821``, ``7f3a9c`` or ``#W8178512`` (one sign
    before it is part of it): not a word or a sentence."""
    return 3 <= len(text) <= 64 and bool(_ID_VALUE.match(text))


@functools.lru_cache(maxsize=4096)
def _named_like_id(name: str) -> bool:
    parts = words(name)
    if len(parts) == 1:
        return parts[0] in _ID_ALONE
    return len(parts) > 1 and parts[-1] in _ID_ENDINGS and (
        parts[-2] not in VALUE_HEADS or parts[-1] in ("id", "uuid", "guid"))  # line_id


@functools.lru_cache(maxsize=4096)
def _named_like_key(name: str) -> bool:
    parts = words(name)
    return len(parts) > 1 and parts[-1] == "key" and parts[-2] not in _NOT_RECORD_KEYS


def id_parameters(schema: Mapping[str, Any], arguments: Mapping[str, Any]
                  ) -> list[tuple[str, str]]:
    """The identifier-like top-level arguments given, as (name, value text), schema order."""
    props = schema.get("properties") or {}
    found = []
    for name, value in arguments.items():
        if value is None or isinstance(value, bool | dict | list | float):
            continue
        if is_id_like(name, props.get(name) if isinstance(props, dict) else None, value):
            found.append((name, str(value).strip()))
    return found


@functools.lru_cache(maxsize=1024)
def same_noun(key: str, name: str) -> bool:
    """Whether two identifier names name the same kind of record (``order_id`` and
    ``orderNumber`` do; ``flight_id`` and ``booking_ref`` do not; ``id`` matches any)."""
    first, second = subject_noun("", key), subject_noun("", name)
    return "record" in (first, second) or first.rstrip("s") == second.rstrip("s")


def id_names(tool: ToolSpec) -> list[str]:
    """The tool's identifier-like parameters (``*_key`` ones need a value to tell)."""
    props = schema_at(tool.parameters, "properties")
    return [name for name, sub in props.items() if is_id_like(name, schema_at(props, name))]


def search_criteria(tool: ToolSpec, arguments: Mapping[str, Any]) -> bool:
    """Whether the arguments say what to find without an identifier: a free-text value
    (an email, a name, a query) or a structure; options such as enums, flags and numbers
    narrow a search but name nothing."""
    props = schema_at(tool.parameters, "properties")
    return any((isinstance(value, str) and value.strip() and not schema_at(props, key).get(
        "enum")) or (isinstance(value, dict | list) and value)
        for key, value in arguments.items())


def collect_ids(value: Any, into: set[str]) -> None:
    """Add every identifier-like value of a result, at any depth, to ``into``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str | int) and not isinstance(item, bool) \
                    and is_id_like(key, None) and str(item):
                into.add(str(item))
            elif isinstance(item, dict | list):
                collect_ids(item, into)
    elif isinstance(value, list):
        for item in value:
            collect_ids(item, into)


# --------------------------------------------------------------------------- placeholders

_TEMPLATE = re.compile(r"^\s*(<.*>|\{.*\}|\[.*\]|\$\{.*\}|%[sd])\s*$|\.\.\.|…")
_EXAMPLE_DOMAIN = re.compile(
    r"@(example|test|domain|email|company|yourdomain|mail|sample|acme)\.(com|org|net|io)\b"
    r"|\bexample\.(com|org|net)\b")
_SCHEMA_WORDS = frozenset({
    "string", "str", "integer", "int", "number", "float", "boolean", "bool", "object",
    "array", "null", "date", "datetime", "date time", "timestamp", "email", "email address",
    "uuid", "id", "yyyy mm dd", "mm/dd/yyyy", "dd/mm/yyyy", "hh:mm", "yyyy mm ddthh:mm:ssz"})
_STOCK = frozenset({
    "john doe", "jane doe", "john smith", "jane smith", "first name", "last name",
    "full name", "firstname lastname", "first last", "foo bar", "test user", "customer name",
    "user name", "username", "your name", "lorem ipsum", "name surname", "jon doe"})
_FILLER = frozenset({
    "n/a", "na", "none", "null", "nil", "undefined", "unknown", "tbd", "todo", "test",
    "testing", "foo", "bar", "baz", "abc", "abc123", "xyz", "value", "text", "sample",
    "example", "default", "dummy", "fake", "placeholder", "anything", "something", "any",
    "name", "address", "your value", "insert here", "?", "-", "--"})
_HINTS = ("e.g.", "for example", "placeholder", "insert ", "enter ", "replace with",
          "fill in", "lorem ipsum")
_MASK = re.compile(r"x{3,}|#{2,}|\*{2,}|_{3,}|\?{2,}")


def schema_at(schema: Any, key: str) -> Mapping[str, Any]:
    """``schema[key]`` when it is a schema object, else an empty one (anything goes)."""
    sub = schema.get(key) if isinstance(schema, Mapping) else None
    return sub if isinstance(sub, Mapping) else {}


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.strip().lower()).strip(" .:")


def looks_like_placeholder(value: str, name: str = "", description: str = "") -> bool:
    """Whether a value is a stand-in rather than something a person said (module docstring)."""
    text = value.strip()
    if not text:
        return True
    low, norm = text.lower(), _norm(text)
    if _TEMPLATE.search(text) or _EXAMPLE_DOMAIN.search(low) or _MASK.search(low):
        return True
    if norm in _SCHEMA_WORDS or norm in _STOCK or norm in _FILLER:
        return True
    if norm.startswith(("your ", "my ", "the customer", "customer s ", "user s ")) \
            or any(hint in low for hint in _HINTS) or re.search(r"\b(yyyy|mm/dd|dd/mm)\b", low):
        return True
    name_words = words(name)
    if name_words and norm in (" ".join(name_words), " ".join(name_words[:-1]) or "-"):
        return True
    if description and norm == _norm(description):
        return True
    alnum = re.sub(r"[^0-9a-z]", "", low)
    if len(alnum) >= 3 and len(set(alnum)) == 1:
        return True
    digits = re.sub(r"[\s\-]", "", text)
    return len(digits) >= 3 and digits.isdigit() and (
        digits in "01234567890123456789" or digits in "98765432109876543210")


def find_placeholder(arguments: Mapping[str, Any], schema: Mapping[str, Any],
                     path: str = "") -> tuple[str, str] | None:
    """The first argument (dotted path, value) that looks like a placeholder, if any."""
    props = schema_at(schema, "properties")
    for name, value in arguments.items():
        sub = schema_at(props, name)
        where = f"{path}{name}"
        if sub.get("enum"):
            continue
        description = str(sub.get("description", ""))
        if isinstance(value, str):
            if looks_like_placeholder(value, name, description):
                return where, value
        elif isinstance(value, int) and not isinstance(value, bool) and is_id_like(name, sub):
            if looks_like_placeholder(str(value), name, description) or value <= 0:
                return where, str(value)
        elif isinstance(value, dict):
            found = find_placeholder(value, sub, where + ".")
            if found:
                return found
        elif isinstance(value, list):
            items = schema_at(sub, "items")
            for index, item in enumerate(value):
                if isinstance(item, str) and looks_like_placeholder(item, name, description):
                    return f"{where}[{index}]", item
                if isinstance(item, dict):
                    found = find_placeholder(item, items, f"{where}[{index}].")
                    if found:
                        return found
    return None


def shape_hint(path: str, schema: Mapping[str, Any], facts: Mapping[str, str]) -> str:
    """What a real value of an argument looks like, without giving one away."""
    leaf = re.sub(r"\[\d+\]", "", path).split(".")[-1]
    sub = schema_at(schema_at(schema, "properties"), leaf)
    label = " ".join(words(leaf)) or leaf
    known = facts.get(leaf)
    if sub.get("format") == "email" or "email" in label:
        return "A real email address looks like name@provider.tld; ask the person for theirs."
    if sub.get("format") in ("date", "date-time"):
        return f"A real {label} is a calendar date such as 2025-03-14 (ISO 8601)."
    if known and not EMAIL_RE.match(known):
        masked = "".join(
            token if token.isalpha() and index == 0 else
            re.sub(r"[0-9]", "#", re.sub(r"[A-Za-z]", "A", token))
            for index, token in enumerate(_TOKENS.split(known)))
        return f"A real {label} looks like {masked}; ask the person for theirs."
    if is_id_like(leaf, sub):
        return (f"A real {label} is the exact identifier the person gave or an earlier result "
                "showed; ask the person for it.")
    return f"Use what the person actually said for {label}, or ask them."


# --------------------------------------------------------------------------- values


def random_email(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)}.{rng.choice('abcdefghijklmnoprstuvwz')}@mailbox.test"


def random_digits(rng: random.Random, count: int, nonzero_first: bool = True) -> str:
    head = str(rng.randint(1, 9)) if nonzero_first else str(rng.randint(0, 9))
    return head + "".join(str(rng.randint(0, 9)) for _ in range(count - 1))


def _moment_near(now: datetime, rng: random.Random) -> datetime:
    return now - timedelta(days=rng.randrange(1, 60), minutes=rng.randrange(1440))


def reshape(value: str, rng: random.Random, now: datetime) -> str:
    """A value of the same shape as ``value`` (see the module docstring); words are kept."""
    if EMAIL_RE.match(value):
        return random_email(rng)
    if UUID_RE.match(value):
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if not any(ch.isdigit() for ch in value):
        return value
    if DATE_IN_TEXT.search(value):  # a date moves as a date: never 8443-62-12
        moment = _moment_near(now, rng)
        pieces = DATE_IN_TEXT.split(value)
        dates = [redate(found, moment) for found in DATE_IN_TEXT.findall(value)]
        return "".join(_reshape_tokens(piece, rng) + (dates[i] if i < len(dates) else "")
                       for i, piece in enumerate(pieces))
    for _ in range(8):
        shaped = _reshape_tokens(value, rng)
        if shaped != value:
            return shaped
    return value + str(rng.randint(1, 9))


def redate(text: str, moment: datetime) -> str:
    """``moment`` written the way ``text`` writes a date, a date and time, or a time."""
    if len(text) <= 8 and text[2:3] == ":":  # 09:30, 09:30:15
        return moment.strftime("%H:%M:%S")[: len(text)]
    out = moment.strftime("%Y-%m-%d")
    if len(text) > 10:
        out += text[10] + moment.strftime("%H:%M:%S")[: len(text) - 11]
    return out + text[len(out):]


def _reshape_tokens(text: str, rng: random.Random) -> str:
    return "".join(reshape_token(token, rng) if index % 2 else token
                   for index, token in enumerate(_TOKENS.split(text)))


_UPPER, _LOWER = "ABCDEFGHJKLMNPRSTUVWYZ", "abcdefghjkmnprstuvwyz"  # no I/O/Q/X: no misreads


def reshape_token(token: str, rng: random.Random) -> str:
    """A token with its digits and its letters after the leading ones redrawn."""
    if not any(ch.isdigit() for ch in token):
        return token
    keep = len(token) - len(token.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    out = [token[:keep]]
    draw = rng.random  # one float per character: much cheaper than randint / choice
    for index in range(keep, len(token)):
        ch = token[index]
        if ch.isdigit():
            first = index == keep or not token[index - 1].isdigit()
            out.append(str(1 + int(draw() * 9)) if first and ch != "0" else str(int(draw() * 10)))
        elif ch.isupper():
            out.append(_UPPER[int(draw() * len(_UPPER))])
        else:
            out.append(_LOWER[int(draw() * len(_LOWER))])
    return "".join(out)


def similar_int(value: int, rng: random.Random) -> int:
    size = len(str(abs(value)))
    drawn = rng.randint(1, 9) if size == 1 else rng.randint(10 ** (size - 1), 10 ** size - 1)
    return -drawn if value < 0 else drawn


def new_identifier(tool: str, rng: random.Random, avoid: Container[str],
                   like: str | None = None) -> str:
    """A fresh identifier for a new record: shaped like ``like`` (the exemplars' id, the
    person's), else ``ORD-48213``-like from the tool's noun."""
    prefix = (re.sub(r"[^A-Za-z]", "", subject_noun(tool, None)) or "rec")[:3].upper()
    for _ in range(20):
        if like and not any(ch.isdigit() for ch in like):  # HATHAT: letters redrawn alike
            made = "".join(_UPPER[int(rng.random() * len(_UPPER))] if ch.isupper() else
                           _LOWER[int(rng.random() * len(_LOWER))] if ch.isalpha() else ch
                           for ch in like)
        else:
            made = reshape(like, rng, datetime(2025, 1, 1, tzinfo=UTC)) if like else \
                f"{prefix}-{random_digits(rng, 5)}"
        if made not in avoid and not looks_like_placeholder(made):
            return made
    return f"{prefix}-{rng.getrandbits(40):010d}"


def id_head(value: str) -> str:
    """The letters and punctuation before an identifier's first digit (``#W``,
    ``credit_card_``): what it keeps when reshaped."""
    match = re.match(r"^\D*", value)
    return match[0] if match else ""
