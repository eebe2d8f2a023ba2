"""JSON values as instrumentations record them: decoded and encoded fast, untagged.

Span attributes and record bodies hold JSON text, already-structured values, or OTLP
key-value lists stored with their tag (``{"kvlistValue": [[k, v], ...]}``). These helpers
decode text (orjson where it agrees with :mod:`json`), write compact JSON text the same
way, turn tagged key-value lists into objects, and read the first present key of a mapping.
:data:`ABSENT` marks a key that is not there (``None`` can be a recorded value).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

__all__ = [
    "ABSENT",
    "decode",
    "first_present",
    "first_str",
    "json_in_text",
    "json_text",
    "json_value",
    "lead",
    "looks_like_json",
    "untag",
]


class _Absent:
    """Marks a key that is not there (None can be a recorded value)."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


def json_value(value: object) -> Any:
    """A value that may be JSON text or already structured; ``ABSENT`` if the text is
    not JSON."""
    if isinstance(value, str):
        try:
            return decode(value)
        except ValueError:
            return ABSENT
    return untag(value)


def json_in_text(text: str) -> Any:
    """Decoded JSON when ``text`` is a JSON document, else ``text`` itself."""
    try:
        return decode(text)
    except ValueError:
        return text


_ESCAPED_ASCII_LETTER = re.compile(r"\\u00[4-7][0-9a-fA-F]")


def decode(text: str) -> Any:
    """``untag(json.loads(text))``, without the walk when the text cannot hold a tag.

    A decoded ``kvlistValue`` key is in the text either as it is or with some letter
    written as a ``\\u00XX`` escape; without either, decoding gives plain dicts and lists
    with no tag, which ``untag`` would only copy.
    """
    decoded = _loads(text)
    if "kvlistValue" in text or ("\\u00" in text and _ESCAPED_ASCII_LETTER.search(text)):
        return untag(decoded)
    return decoded


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19


def _loads(text: str) -> Any:
    """``json.loads(text)``, by orjson where the two agree.

    They differ on integers past 64 bits (orjson gives a float): text with a run of 19
    digits goes to ``json``. orjson refuses what ``json`` may take (``NaN``,
    ``Infinity``, numbers that overflow, lone surrogates, deep nesting): ``json``
    decides those, and raises the errors.
    """
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return json.loads(text)
    if _LONG_NUMBER in data.translate(_DIGITS):
        return json.loads(text)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(text)


def looks_like_json(text: str) -> bool:
    return lead(text) in _JSON_LEADS


_JSON_LEADS = frozenset({"[", "{"})


def lead(text: str) -> str:
    """The first character that is not white space (``text.lstrip()[:1]``, without
    copying the text when it starts with its content)."""
    head = text[:1]
    if head.isspace():
        return text.lstrip()[:1]
    return head


_ORJSON_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_SMALL_FLOAT = re.compile(rb"[0-9]e-|0\.0000")


def json_text(value: Any) -> str | None:
    """Text as it is; anything else as compact JSON; None stays None."""
    if value is None or value is ABSENT:
        return None
    if isinstance(value, str):
        return value
    return _dumps(value)


def _dumps(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``, by orjson where
    the two agree.

    They differ on floats below 1e-4 (``1e-07`` against ``1e-7`` or ``0.00001``), on NaN
    and infinities (orjson writes ``null``), and orjson refuses what ``json`` may take
    (integers past 64 bits, lone surrogates, non-text keys, subclasses, deep nesting):
    output that may hold one of those is made by ``json``.
    """
    try:
        encoded = orjson.dumps(value, None, _ORJSON_OPTIONS)
    except TypeError:
        return _json_dumps(value)
    if b"null" in encoded or (
        (b"e-" in encoded or b"0.0000" in encoded) and _SMALL_FLOAT.search(encoded)
    ):
        return _json_dumps(value)
    return encoded.decode()


def _json_dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def untag(value: Any) -> Any:
    """Key-value lists stored with repeated keys (``{"kvlistValue": [[k, v], ...]}``) as
    objects, the last value of a key winning, as for attributes.

    Plain JSON data without a tag comes back as it is (nothing here changes it), anything
    else as a copy.
    """
    if type(value) is str or _plain(value):
        return value
    return _untag(value)


def _untag(value: Any) -> Any:
    if isinstance(value, Mapping):
        pairs = value.get("kvlistValue") if len(value) == 1 else None
        if isinstance(pairs, list):
            return {
                pair[0]: untag(pair[1])
                for pair in pairs
                if isinstance(pair, list) and len(pair) == 2
            }
        return {key: untag(item) for key, item in value.items()}
    if isinstance(value, list):
        return [untag(item) for item in value]
    return value


def _plain(value: Any) -> bool:
    """Whether ``value`` is made only of dicts, lists, text, numbers, booleans and None,
    with no one-key ``kvlistValue`` object: then untagging it gives an equal copy."""
    kind = type(value)
    if kind is dict:
        if len(value) == 1 and "kvlistValue" in value:
            return False
        items: Iterable[Any] = value.values()
    elif kind is list:
        items = value
    else:
        return kind is str or kind is int or kind is float or kind is bool or value is None
    for item in items:
        kind = type(item)
        if kind is str or kind is int or kind is float or kind is bool or item is None:
            continue
        if not _plain(item):
            return False
    return True


def first_str(mapping: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def first_present(mapping: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if key in mapping:
            return mapping[key]
    return ABSENT
