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

:func:`required_clauses` goes further: *several* such lists, all of which a match must
satisfy ("but" and "not"; "?" and "right"), read by the same rules, with the
alternatives of a group combined branch by branch, and short strings kept when they are
rare characters ("?", "!!", "%") that a whole ask seldom holds. The stance detector tests
them after :func:`required_literals`'s list: each one that fails skips a search that
could only have failed.

:func:`required_pattern` is the same idea with structure kept: a piece of the pattern
(consecutive items of a branch, from a run of literal characters on, stopping before a
back-reference) that every match contains a match of, compiled on its own. It pays where
the pattern starts with something ``re`` must try at every position (a captured word, a
class) and a literal comes later: the piece starts with that literal, which ``re`` finds
by a fast scan ("but not" after any word: the piece from "but", spaces, "not" on).
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["implies", "required_clauses", "required_literals", "required_pattern"]

# the parser behind re.compile (Python 3.11+); without it, nothing is pre-checked. Imported
# by name: typeshed's `re` has no such attributes, and whether mypy sees the private
# submodules depends on what else the build reads.
_p: Any
_c: Any
_compiler: Any
try:
    _c = importlib.import_module("re._constants")
    _p = importlib.import_module("re._parser")
    _compiler = importlib.import_module("re._compiler")
except ImportError:  # pragma: no cover - other Pythons
    _p = _c = _compiler = None

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


# --- several requirements: every match contains a string of each clause ---------------

MAX_CLAUSES = 3
"""Clauses kept per pattern (the fewest strings first): each costs substring tests."""
_COMBINATIONS = 64
"""Branch-by-branch unions tried per alternation before keeping one clause per branch."""
_COMMON = frozenset(" ,.'-")
"""Single characters nearly every ask holds: they prove nothing."""

_Clause = frozenset[str]


def required_clauses(pattern: re.Pattern[str]) -> tuple[tuple[str, ...], ...]:
    """Lists of strings such that every match of ``pattern`` contains one string of each
    list (at most :data:`MAX_CLAUSES`, fewest strings first); empty when nothing useful is
    certain. Same rules as :func:`required_literals` (see the module)."""
    if _p is None or pattern.flags & re.IGNORECASE or not isinstance(pattern.pattern, str):
        return ()
    try:
        parsed = _p.parse(pattern.pattern, pattern.flags)
    except (re.error, AttributeError, TypeError):  # pragma: no cover - compiled already
        return ()
    clauses = [clause for clause in _all_of(parsed.data) if _useful(clause)]
    clauses.sort(key=lambda clause: (len(clause), -_weakest(clause), sorted(clause)))
    return tuple(tuple(sorted(clause)) for clause in clauses[:MAX_CLAUSES])


def _worth(string: str) -> int:
    """How much a required string says: its length; rare punctuation ("?", "{{") as 3."""
    if string and not any(char.isalnum() or char.isspace() or char in _COMMON
                          for char in string):
        return max(len(string), MIN_LENGTH)
    return len(string.strip())


def _weakest(clause: _Clause) -> int:
    return min(map(_worth, clause))


def _useful(clause: _Clause) -> bool:
    return len(clause) <= MAX_STRINGS and _weakest(clause) >= MIN_LENGTH


def implies(first: Iterable[str], second: Iterable[str]) -> bool:
    """Whether a text holding one of ``first`` surely holds one of ``second`` (each string
    of ``first`` contains one of ``second``): then ``second`` need not be tested."""
    wanted = tuple(second)
    return all(any(other in string for other in wanted) for string in first)


def _simplest(clauses: Iterable[_Clause]) -> list[_Clause]:
    """The clauses without those another one implies, and in each clause no string that
    contains another (it would be implied)."""
    kept: list[_Clause] = []
    for clause in sorted({frozenset(string for string in clause
                                    if not any(other != string and other in string
                                               for other in clause))
                          for clause in clauses}, key=lambda clause: (len(clause),
                                                                      sorted(clause))):
        if len(clause) <= MAX_STRINGS and not any(implies(other, clause) for other in kept):
            kept.append(clause)
    return kept


def _all_of(items: Iterable[tuple[Any, Any]]) -> list[_Clause]:
    """Every clause a sequence of parse items requires (all items match, in order)."""
    clauses: list[_Clause] = []
    run: list[str] = []
    for op, value in items:
        if op is _c.LITERAL:
            run.append(chr(value))
            continue
        if op is _c.MAX_REPEAT or op is _c.MIN_REPEAT:
            low, _, body = value
            if run and low >= 1 and len(body.data) == 1 and body.data[0][0] is _c.LITERAL:
                # "hm+": "hm" and at least one more "m", side by side
                run.append(chr(body.data[0][1]) * low)
        if run:
            clauses.append(frozenset(("".join(run),)))
            run = []
        clauses += _clauses_of(op, value)
    if run:
        clauses.append(frozenset(("".join(run),)))
    return _simplest(clauses)


def _clauses_of(op: Any, value: Any) -> list[_Clause]:
    """The clauses of one non-literal parse item."""
    if op is _c.SUBPATTERN:
        _, add_flags, del_flags, body = value
        if (add_flags | del_flags) & re.IGNORECASE:
            return []
        return _all_of(body.data)
    if op is _c.BRANCH:
        # a match takes one branch: one string of a clause of *each* branch is certain
        branches = [[clause for clause in _all_of(branch.data) if _useful(clause)]
                    for branch in value[1]]
        if not all(branches):
            return []
        size = 1
        for clauses in branches:
            size *= len(clauses)
        if size > _COMBINATIONS:
            branches = [[max(clauses, key=lambda clause: (_weakest(clause), -len(clause)))]
                        for clauses in branches]
        return _simplest(frozenset().union(*chosen) for chosen in itertools.product(*branches))
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, _, body = value
        return _all_of(body.data) if low >= 1 else []
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _all_of(value.data)
    return []


# --- a required piece of the pattern ----------------------------------------------------

MAX_PIECES = 2
"""Alternative pieces kept: with more, ``re`` tries each at every position where one could
start, and the piece costs about what it saves (measured on the stance corpus)."""


def required_pattern(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """A pattern of which every match of ``pattern`` contains a match, cheaper to search
    for (it starts with a literal where ``pattern`` does not); None when there is none
    (see the module)."""
    if _p is None or pattern.flags & re.IGNORECASE or not isinstance(pattern.pattern, str):
        return None
    try:
        parsed = _p.parse(pattern.pattern, pattern.flags)
    except (re.error, AttributeError, TypeError):  # pragma: no cover - compiled already
        return None
    if _starts_with_literal(parsed.data):
        return None  # re scans for that literal already
    windows = _windows(parsed.data)
    if windows is None or len(windows) > MAX_PIECES or all(
            all(op is _c.LITERAL for op, _ in window) for window in windows):
        return None  # nothing beyond literals: required_literals says as much
    state = parsed.state
    if len(windows) == 1:
        piece = _p.SubPattern(state, windows[0])
    else:
        piece = _p.SubPattern(state, [(_c.BRANCH, (None, [_p.SubPattern(state, window)
                                                           for window in windows]))])
    try:
        compiled: re.Pattern[str] = _compiler.compile(piece, pattern.flags)
    except (re.error, AttributeError, TypeError, ValueError):  # pragma: no cover
        return None
    return compiled


def _starts_with_literal(items: Any) -> bool:
    for op, value in items:
        if op is _c.SUBPATTERN:
            return _starts_with_literal(value[3].data)
        return bool(op is _c.LITERAL)
    return False


def _windows(items: Any) -> list[list[tuple[Any, Any]]] | None:
    """Pieces (lists of parse items) one of which every match of ``items`` contains a
    match of: a literal-led run of this sequence, or else one per branch of an
    alternation in it; None when there is none."""
    items = list(items)
    best: tuple[int, int] | None = None  # (length of the literal run, where it starts)
    start = 0
    while start < len(items):
        if items[start][0] is not _c.LITERAL:
            start += 1
            continue
        end = start
        while end < len(items) and items[end][0] is _c.LITERAL:
            end += 1
        if end - start >= MIN_LENGTH and (best is None or end - start > best[0]):
            best = (end - start, start)
        start = end
    if best is not None:
        window = []
        for item in items[best[1]:]:
            if _refers_back(item):
                break  # a back-reference needs the group it refers to
            window.append(item)
        return [window]
    for op, value in items:
        if op is _c.BRANCH:
            pieces: list[list[tuple[Any, Any]]] = []
            for branch in value[1]:
                found = _windows(branch.data)
                if found is None:
                    break
                pieces += found
            else:
                return pieces
    return None


def _refers_back(item: tuple[Any, Any]) -> bool:
    """Whether an item is or holds a back-reference (or a test of whether a group
    matched)."""
    op, value = item
    if op is _c.GROUPREF or op is _c.GROUPREF_EXISTS:
        return True
    if op is _c.SUBPATTERN:
        return any(map(_refers_back, value[3].data))
    if op is _c.BRANCH:
        return any(_refers_back(inner) for branch in value[1] for inner in branch.data)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        return any(map(_refers_back, value[2].data))
    if op is _c.ASSERT or op is _c.ASSERT_NOT:
        return any(map(_refers_back, value[1].data))
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return any(map(_refers_back, value.data))
    return False
