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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import orjson

from generator._world_values import DATE_IN_TEXT, is_id_like, redate, reshape, similar_int

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
        for item in value:
            _collect_choices(item, path + "[]", into)
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
    for text in exemplars[:8]:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, list):
            items = [item for item in value if isinstance(item, dict)]
            listed = listed or bool(items)
            records.extend(items[:3])
        elif isinstance(value, dict) and "error" not in value:
            records.append(value)
    if not records:
        return None
    best: dict[str, Any] = {}
    choices: dict[str, list[Any]] = {}
    for record in records:
        kind = _kind(record)
        if kind not in best or len(record) > len(best[kind]):  # the richest; first on a tie
            best[kind] = record
        if kind == "normal":
            _collect_choices(record, "", choices)
    return Template({kind: _shape(record) for kind, record in best.items()},
                    {path: tuple(values) for path, values in choices.items()}, listed)


def render_template(template: Template, kind: str, rng: random.Random, now: datetime) -> Any:
    """A new record of the kind's shape (None when the exemplars show no such answer):
    same keys and types, values redrawn; free text is left for :func:`settle_text`."""
    shape = template.kinds.get(kind)
    if shape is None:
        return None
    choices = template.choices if kind == "normal" else {}
    if isinstance(shape.body, dict):
        return {key: value if key in shape.texts else
                _render(value, f".{key}", key, rng, now, choices)
                for key, value in shape.body.items()}
    return _render(shape.body, "", "", rng, now, choices)


def _render(value: Any, path: str, key: str, rng: random.Random, now: datetime,
            choices: Mapping[str, tuple[Any, ...]]) -> Any:
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
        return reshape(value, rng, now)
    if isinstance(value, dict):
        return {k: _render(v, f"{path}.{k}", k, rng, now, choices) for k, v in value.items()}
    if isinstance(value, list) and value:
        count = rng.randint(1, min(3, len(value)))
        return [_render(value[i], path + "[]", key, rng, now, choices) for i in range(count)]
    return value if not isinstance(value, list) else []


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

    for key in shape.texts:
        text = record.get(key)
        if isinstance(text, str) and text == shape.body.get(key):  # not set by the call
            record[key] = _TEXT_TOKEN.sub(swap, text)
