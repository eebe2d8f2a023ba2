"""Redaction of configured attribute keys in everything tracemill shows or writes.

``redact = ["user.email", "*.phone"]`` (``TRACEMILL_REDACT=user.email,*.phone``) names
keys, matched case-insensitively as shell patterns. :meth:`Redactor.apply` walks a JSON
document (API answers, report content, transcripts, export rows): every value under a
matching key becomes ``"[redacted]"``, and every text that repeats one of those values
elsewhere in the same document (an assistant echoing the address back) has it replaced
too. Texts that hold JSON (a tool call's encoded arguments, a tool's result body) are
read as JSON, so their keys count as well. A value that only ever appears in free text,
never under a redacted key of the same document, is not found: name the attribute that
carries it. Keys are never removed, so the shape of a
record stays valid for its schema.

Exports, reports, the admin API (and so the web page that reads it) and the command line
call :func:`redactor` with the settings and apply it to what they are about to show.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["MASK", "Redactor", "redactor"]

MASK = "[redacted]"
"""What a redacted value reads as."""

_SHORTEST_ECHO = 4
"""Values shorter than this are masked under their key but not searched for in texts
(replacing every "no" or "42" in a transcript would destroy it)."""

Model = TypeVar("Model", bound=BaseModel)


class Redactor:
    """Masks the values of keys matching the configured patterns."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(p.strip().lower() for p in patterns if p.strip())
        """The key patterns (lower case)."""

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches(self, key: str) -> bool:
        """Whether values under ``key`` are redacted."""
        lowered = key.lower()
        return any(fnmatch.fnmatchcase(lowered, p) for p in self.patterns)

    def apply(self, document: Any) -> Any:
        """A copy of ``document`` (dicts, lists, scalars) with redacted values masked."""
        if not self.patterns:
            return document
        secrets: set[str] = set()
        masked = self._mask(document, secrets)
        echoes = sorted((s for s in secrets if len(s) >= _SHORTEST_ECHO), key=len,
                        reverse=True)
        if not echoes:
            return masked
        pattern = re.compile("|".join(re.escape(s) for s in echoes))
        return _replace(masked, pattern)

    def model(self, record: Model) -> Model:
        """``record`` with redacted values masked (validated again as its own type)."""
        if not self.patterns:
            return record
        return type(record).model_validate(self.apply(record.model_dump(mode="json")))

    def _mask(self, value: Any, secrets: set[str]) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if isinstance(key, str) and self.matches(key):
                    _collect(item, secrets)
                    out[key] = _masked(item)
                elif (isinstance(key, str) and key == "key" and isinstance(item, str)
                      and self.matches(item) and "value" in value):
                    # OTLP's {"key": K, "value": V} attribute lists
                    out[key] = item
                else:
                    out[key] = self._mask(item, secrets)
            if (isinstance(value.get("key"), str) and self.matches(value["key"])
                    and "value" in value):
                _collect(value["value"], secrets)
                out["value"] = _masked(value["value"])
            return out
        if isinstance(value, list | tuple):
            return [self._mask(item, secrets) for item in value]
        if isinstance(value, str) and value[:1] in ("{", "["):
            return self._mask_json_text(value, secrets)
        return value

    def _mask_json_text(self, text: str, secrets: set[str]) -> str:
        # tool call arguments and results travel as JSON text inside the records
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        found: set[str] = set()
        masked = self._mask(parsed, found)
        if not found:
            return text
        secrets |= found
        return json.dumps(masked, ensure_ascii=False, separators=(",", ":"))


def redactor(patterns: Iterable[str]) -> Redactor:
    """The redactor of the ``redact`` setting."""
    return Redactor(patterns)


def _masked(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(v) for v in value]
    return MASK


def _collect(value: Any, secrets: set[str]) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _collect(item, secrets)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, secrets)
    elif isinstance(value, str):
        if value:
            secrets.add(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        secrets.add(str(value))


def _replace(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(MASK, value)
    if isinstance(value, dict):
        return {k: _replace(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, pattern) for v in value]
    return value
