"""Strings one of which every match of a regular expression contains.

The stance detector (:mod:`processor.stance`) searches a dozen large patterns in every
ask; most of them do not match, and Python's ``re`` tries each pattern's alternatives at
every position of the text before it says so (several µs a pattern). When every match of
a pattern must contain one of a few literal strings, a substring test (well under a µs)
proves most of those searches fruitless without running them.

:func:`required_literals` reads the pattern's parse tree (``re._parser``: the parser the
``re`` module itself compiles with) and keeps only what is certain: a run of consecutive
literal characters in a sequence, the union of such sets over every branch of an
alternation, the body of a group or of a repeat that happens at least once. Anything else
(character classes, look-arounds, optional parts, case-insensitive groups) requires
nothing. So "no required string is in the text" implies "the pattern cannot match": the
pre-check changes which searches run, never what they find.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["required_literals"]

# the parser behind re.compile (Python 3.11+); without it, nothing is pre-checked. Imported
# by name: typeshed's `re` has no such attributes, and whether mypy sees the private
# submodules depends on what else the build reads.
_p: Any
_c: Any
try:
    _c = importlib.import_module("re._constants")
    _p = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - other Pythons
    _p = _c = None

MIN_LENGTH = 3
"""Required strings shorter than this say too little to be worth testing."""
MAX_STRINGS = 40
"""More alternatives than this cost more to test than the search they would save."""

_Requirement = frozenset[str]


def required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Strings one of which every match of ``pattern`` contains; None when there is no
    such short list (see the module docstring)."""
    if _p is None or pattern.flags & re.IGNORECASE or not isinstance(pattern.pattern, str):
        return None
    try:
        parsed = _p.parse(pattern.pattern, pattern.flags)
    except (re.error, AttributeError, TypeError):  # pragma: no cover - compiled already
        return None
    found = _sequence(parsed.data)
    if found is None or len(found) > MAX_STRINGS or min(map(len, found)) < MIN_LENGTH:
        return None
    return tuple(sorted(found))


def _better(new: _Requirement, old: _Requirement | None) -> bool:
    if old is None:
        return True
    shortest_new, shortest_old = min(map(len, new)), min(map(len, old))
    return shortest_new > shortest_old or (shortest_new == shortest_old and len(new) < len(old))


def _sequence(items: Iterable[tuple[Any, Any]]) -> _Requirement | None:
    """The best requirement of a sequence of parse items (all of them must match, in
    order), None when it has none."""
    best: _Requirement | None = None
    run: list[str] = []

    def consider(requirement: _Requirement | None) -> None:
        nonlocal best
        if requirement and len(requirement) <= MAX_STRINGS and _better(requirement, best):
            best = requirement

    for op, value in items:
        if op is _c.LITERAL:
            run.append(chr(value))
            continue
        if run:
            consider(frozenset(("".join(run),)))
            run = []
        consider(_item(op, value))
    if run:
        consider(frozenset(("".join(run),)))
    return best


def _item(op: Any, value: Any) -> _Requirement | None:
    """The requirement of one non-literal parse item."""
    if op is _c.SUBPATTERN:
        _, add_flags, del_flags, body = value
        if (add_flags | del_flags) & re.IGNORECASE:
            return None
        return _sequence(body.data)
    if op is _c.BRANCH:
        union: set[str] = set()
        for branch in value[1]:
            requirement = _sequence(branch.data)
            if requirement is None:
                return None
            union |= requirement
        return frozenset(union)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, _, body = value
        return _sequence(body.data) if low >= 1 else None
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _sequence(value.data)
    return None
