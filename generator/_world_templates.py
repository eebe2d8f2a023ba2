"""Result templates of the simulated world: one production exemplar per kind of answer.

Private to :mod:`generator.world`. A tool's exemplars (JSON results seen in traces) are
grouped by the kind of answer they are, read from their ``status``: ``already`` (it starts
``already``), ``partial`` (it starts ``partial``) or ``normal``. Merging every exemplar
into one shape made a normal result carry an "already handled" message, so each kind keeps
one exemplar, its richest (most keys, the first on a tie), with the state keys (``stale``,
``duplicate``...) left out: the world adds its own. A rendered record has that exemplar's
keys with new values: enum-like strings drawn from the values seen at the same path in the
kind's exemplars, identifiers and numbers reshaped, dates moved near the world's clock.

*Free text* (a top-level string with spaces that is not enum-like, such as a ``message``)
is settled against the finished record (:func:`settle_text`): its words are kept; an
identifier, number or date in it that is one of the exemplar's own top-level values takes
that field's value in the new record; any other identifier becomes the record's own id and
any other date or time the record's date. So a message never names a record the world
does not hold, and never shows an impossible date.
"""

from __future__ import annotations

import functools
import random
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal

import orjson

from generator._world_values import (
    DATE_IN_TEXT,
    FIRST_NAMES,
    SURNAMES,
    id_head,
    is_id_like,
    redate,
    reshape,
    reshape_token,
    similar_int,
    words,
)

Kind = Literal["normal", "already", "partial"]

_STATE_KEYS = frozenset({"stale", "duplicate", "duplicate_of", "matching_records", "error",
                         "as_of"})
_TEXT_TOKEN = re.compile(DATE_IN_TEXT.pattern + r"|[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*")


@dataclass(frozen=True)
class Shape:
    """One exemplar, the model of one kind of answer."""

    body: Any
    """The exemplar's value (state keys left out)."""
    texts: tuple[str, ...]
    """Its top-level keys holding free text, settled against each finished record."""
    sources: Mapping[str, str]
    """Its top-level token-like values as text → their keys (``"R-3998"`` → ``refund``)."""


@dataclass(frozen=True)
class Template:
    """The shapes of a tool's results, one per kind of answer seen in its exemplars."""

    kinds: Mapping[str, Shape]
    """``normal``, ``already``, ``partial``: the kinds the exemplars show."""
    choices: Mapping[str, tuple[Any, ...]]
    """Enum-like string values seen per path in normal answers (``.carrier`` → UPS, FedEx)."""
    listed: bool
    """The tool answered with a JSON list of records."""
    text: str | None = None
    """A plain-text exemplar (``Transfer successful``, a bare id), for a tool that answers
    with text rather than a record."""
    variants: tuple[Shape, ...] = ()
    """Every normal exemplar (a tool that answers for several kinds of record, such as
    ``get_details_by_id``, shows each in its own shape: :meth:`variant_for`)."""

    def variant_for(self, record_id: str) -> Shape | None:
        """The normal exemplar whose own id is written like ``record_id`` (same letters
        before the first digit and same length), None when none is."""
        head = id_head(record_id)
        alike = [shape for shape, own in zip(self.variants, self.variant_ids, strict=True)
                 if own is not None and id_head(own) == head and len(own) == len(record_id)]
        if alike:  # one of them, the same for the same record
            return alike[zlib.crc32(record_id.encode()) % len(alike)]
        return next((shape for shape, own in zip(self.variants, self.variant_ids, strict=True)
                     if head and own is not None and id_head(own) == head), None)

    @functools.cached_property
    def variant_ids(self) -> tuple[str | None, ...]:
        """Each variant's own id (its first identifier-like key's value), if any."""
        return tuple(_own_id(shape.body) for shape in self.variants)

    @property
    def id_key(self) -> str | None:
        """The key a normal answer names its record's id under (``order_id``), if any."""
        body = self.kinds["normal"].body if "normal" in self.kinds else None
        if not isinstance(body, dict):
            return None
        return next((key for key in body if is_id_like(key, None)), None)

    @property
    def id_value(self) -> str | None:
        """The exemplar's own id (a new id is shaped like it)."""
        key = self.id_key
        value = self.kinds["normal"].body.get(key) if key else None
        return str(value) if isinstance(value, str | int) and not isinstance(value, bool) \
            else None


def _own_id(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    key = next((key for key in body if is_id_like(key, None)), None)
    value = body.get(key) if key else None
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def _size(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(_size(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_size(item) for item in value)
    return 1


def _enum_like(text: str) -> bool:
    return len(text) <= 30 and not any(ch.isdigit() for ch in text) \
        and text.count(" ") <= 2 and "@" not in text and "/" not in text


def _free_text(value: Any) -> bool:
    return isinstance(value, str) and " " in value.strip() and not _enum_like(value)


def _kind(record: Any) -> Kind:
    status = str(record.get("status", "")).lower() if isinstance(record, dict) else ""
    return "already" if status.startswith("already") else \
        "partial" if status.startswith("partial") else "normal"


def _collect_choices(value: Any, path: str, into: dict[str, list[Any]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in _STATE_KEYS:
                _collect_choices(item, f"{path}.{key}", into)
    elif isinstance(value, list):
        return  # a list's objects keep their own values: a yoga mat keeps its own options
    elif isinstance(value, str) and _enum_like(value):
        seen = into.setdefault(path, [])
        if value not in seen:
            seen.append(value)


def _shape(record: Any) -> Shape:
    if not isinstance(record, dict):
        return Shape(record, (), {})
    body = {key: value for key, value in record.items() if key not in _STATE_KEYS}
    texts = tuple(key for key, value in body.items() if _free_text(value))
    sources = {str(value): key for key, value in body.items()
               if key not in texts and isinstance(value, str | int | float)
               and not isinstance(value, bool) and len(str(value)) >= 3}
    return Shape(body, texts, sources)


def parse_template(exemplars: Sequence[str]) -> Template | None:
    """The shapes of a tool's JSON exemplars (None when none is a usable record).

    Cached: every world of a run parses the same exemplars, and a template is never
    changed after it is made (rendering builds new values).
    """
    return _parse_template(tuple(exemplars))


@functools.lru_cache(maxsize=256)
def _parse_template(exemplars: tuple[str, ...]) -> Template | None:
    records: list[Any] = []
    listed = False
    plain: str | None = None
    for text in exemplars[:8]:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            if plain is None and text.strip() and not text.lstrip().startswith(
                    ("{", "[", "Error")):
                plain = text.strip()
            continue
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            plain = plain or text.strip()
        elif isinstance(value, list):
            items = [item for item in value if isinstance(item, dict)]
            listed = listed or bool(items)
            records.extend(items[:3])
            if value and not items:  # a list of lists or of values: kept as it is
                records.append(value)
        elif isinstance(value, dict) and "error" not in value:
            records.append(value)
    if not records:
        return Template({}, {}, False, text=plain) if plain is not None else None
    best: dict[str, Any] = {}
    choices: dict[str, list[Any]] = {}
    normal: list[Any] = []
    for record in records:
        kind = _kind(record)
        if kind not in best or _size(record) > _size(best[kind]):  # the richest; first on
            best[kind] = record  # a tie (most values at any depth: a bill with its lines)
        if kind == "normal":
            _collect_choices(record, "", choices)
            normal.append(record)
    return Template({kind: _shape(record) for kind, record in best.items()},
                    {path: tuple(values) for path, values in choices.items()}, listed,
                    plain, tuple(_shape(record) for record in normal))


def render_template(template: Template, kind: str, rng: random.Random, now: datetime,
                    shape: Shape | None = None, shift: timedelta | None = None) -> Any:
    """A new record of the kind's shape, or of ``shape`` when given (None when the
    exemplars show no such answer): same keys and types, values redrawn; free text is left
    for :func:`settle_text`. With ``shift`` (the world's clock minus production's, see
    :func:`latest_date`) every date of the record moves by it and by one small jitter, so
    a period still ends after it starts and a birth date stays decades back; people's
    names are drawn anew."""
    shape = shape or template.kinds.get(kind)
    if shape is None:
        return None
    choices = template.choices if kind == "normal" else {}
    moved = None if shift is None else shift - timedelta(days=rng.randrange(0, 21))
    if isinstance(shape.body, dict):
        return {key: value if key in shape.texts else
                _render(value, f".{key}", key, rng, now, choices, moved)
                for key, value in shape.body.items()}
    return _render(shape.body, "", "", rng, now, choices, moved)


def _render(value: Any, path: str, key: str, rng: random.Random, now: datetime,
            choices: Mapping[str, tuple[Any, ...]], shift: timedelta | None = None) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return similar_int(value, rng)
    if isinstance(value, float):
        return round(value * rng.uniform(0.6, 1.4), 2)
    if isinstance(value, str):
        options = choices.get(path)
        if options and _enum_like(value) and not is_id_like(key, None):
            return rng.choice(options)
        name = "_".join(words(key))
        if name in _PERSON_NAMES and value.strip():
            return _person_name(name, rng)
        if shift is not None and _FULL_DATE.search(value):
            return _moved(value, shift, rng)
        if _MONTH_YEAR.match(value):  # a card's expiry: 12/2026
            return f"{rng.randint(1, 12):02d}/{int(value[-4:]) + rng.randint(-1, 2)}"
        return reshape(value, rng, now)
    if isinstance(value, dict):
        return {k: _render(v, f"{path}.{k}", k, rng, now, choices, shift)
                for k, v in value.items()}
    if isinstance(value, list) and value:
        count = rng.randint(1, min(3, len(value)))
        return [_render(value[i], path + "[]", key, rng, now, choices, shift)
                for i in range(count)]
    return value if not isinstance(value, list) else []


_FULL_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:([T ])(\d{2}):(\d{2})(?::(\d{2}))?)?")
_CLOCK = re.compile(r"\d{2}:\d{2}(?::\d{2})?")
_MOVABLE = re.compile(_FULL_DATE.pattern + r"|(?<!\d)\d{2}:\d{2}(?::\d{2})?(?!\d)"
                      r"|[A-Za-z0-9]*\d[A-Za-z0-9]*")
_MONTH_YEAR = re.compile(r"^(0[1-9]|1[0-2])/\d{4}$")
_PERSON_NAMES = frozenset({"first_name", "last_name", "full_name", "given_name", "surname",
                           "family_name", "firstname", "lastname"})


def _person_name(name: str, rng: random.Random) -> str:
    first, last = rng.choice(FIRST_NAMES).capitalize(), rng.choice(SURNAMES)
    return first if "first" in name or "given" in name else \
        f"{first} {last}" if "full" in name else last


def _moved(text: str, shift: timedelta, rng: random.Random) -> str:
    """Every date in ``text`` moved by ``shift``; the times of day and the other tokens
    with digits (an order number in a note) drawn anew."""
    def move(match: re.Match[str]) -> str:
        if match[1] is None:
            token = match[0]
            if _CLOCK.fullmatch(token):
                return f"{rng.randrange(24):02d}:{rng.randrange(60):02d}" + (
                    f":{rng.randrange(60):02d}" if len(token) > 5 else "")
            return reshape_token(token, rng)
        try:
            day = date(int(match[1]), int(match[2]), int(match[3])) + shift
        except (ValueError, OverflowError):
            return match[0]
        if match[4] is None:
            return day.isoformat()
        clock = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}"
        return f"{day.isoformat()}{match[4]}{clock}" + (
            f":{rng.randrange(60):02d}" if match[7] is not None else "")
    return _MOVABLE.sub(move, text)


def latest_date(template: Template | None) -> date | None:
    """The latest calendar date in a template's exemplars (production's clock)."""
    if template is None:
        return None
    found = [date(int(m[1]), int(m[2]), int(m[3]))
             for shape in (*template.kinds.values(), *template.variants)
             for m in _FULL_DATE.finditer(orjson.dumps(shape.body).decode())
             if _valid(m)]
    return max(found, default=None)


def _valid(match: re.Match[str]) -> bool:
    try:
        date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return False
    return True


def settle_text(record: dict[str, Any], shape: Shape, own_id: str, when: datetime) -> None:
    """Rewrite the record's free text to agree with it (see the module docstring)."""
    values = {token: str(record[key]) for token, key in shape.sources.items()
              if isinstance(record.get(key), str | int | float)
              and not isinstance(record.get(key), bool)}

    def swap(match: re.Match[str]) -> str:
        token = match[0]
        if token in values:
            return values[token]
        if DATE_IN_TEXT.fullmatch(token):
            return redate(token, when)
        digits = sum(ch.isdigit() for ch in token)
        if own_id and digits and (len(token) >= 5 if token.isdigit() else (
                not token.replace(".", "", 1).isdigit()
                and (digits >= 3 or "-" in token or "_" in token))):
            return own_id  # an id the text names is the record the answer is about
        return token

    lead = own_id[: len(own_id) - len(own_id.lstrip("#@$%&*~^"))]
    for key in shape.texts:
        text = record.get(key)
        if isinstance(text, str) and text == shape.body.get(key):  # not set by the call
            text = _TEXT_TOKEN.sub(swap, text)
            if lead:  # "#W123" in the text kept its "#": the id's own "#" is not doubled
                text = text.replace(lead + own_id, own_id)
            record[key] = text
