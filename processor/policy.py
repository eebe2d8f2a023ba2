"""A user's policy document: its clauses, and which clause a conversation's text is about.

A policy document is Markdown or plain text (``--policy FILE``). :func:`parse_policy`
splits it into clauses, line by line:

- a **numbered item** (``1. ...``, ``2) ...``, ``1.2 ...``, ``§3 ...``) is a clause whose
  id is its number (``1``, ``1.2``, ``3``);
- a **bullet** (``-``, ``*``, ``+``, ``•``) is a clause whose id is a slug of its first
  words (``refunds-over-100-need``);
- a **heading** (``# ...``) opens a section; the section's prose (lines that belong to no
  item) is a clause with the heading's number, else a slug of the heading, as its id and
  ``heading: prose`` as its text. A heading with no prose under it is no clause of its own.

Lines that follow an item without a blank line continue it. A document with none of these
shapes is read as paragraphs, one clause each. Ids are unique: a repeated id gets ``-2``,
``-3``, ... in document order, so the ids of a document never depend on anything but its text.

Matching (:func:`match_clause`) is a keyword overlap, deterministic and cheap: text is
lower-cased, split into runs of letters and digits, words of the :data:`STOPWORDS` list and
words shorter than 3 characters dropped, and a plural ``s`` / ``ies`` folded. A clause's
score against a text is the number of distinct words they share; a clause needs at least
:data:`MIN_SHARED` shared words to match. The best score wins; ties go to the clause
whose words the text covers in the larger share, then to the earlier clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from processor.errors import PolicyFileError

__all__ = ["MIN_SHARED", "STOPWORDS", "Clause", "ClauseIndex", "clause_index", "load_policy",
           "match_clause", "parse_policy", "words"]

MIN_SHARED = 2
"""Fewest distinct words a text must share with a clause for the clause to match."""

_STOPWORD_TEXT = """
a an the and or but nor not no yes of to in on at by for from with without into onto
over under than then this that these those there here it its is are was were be been
being do does did done has have had having will would shall should can could may might
must you your yours we our ours they their them he she his her him i me my mine
as if so such any all each every some other which who whom whose what when where why how
about also only just very more most less least own same too again further once up down
out off agent assistant user customer reply replied said says answer answered
pass passed fail failed failure true false
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
"""Words too common to say which clause a text is about (English function words, and the
words every agent conversation uses)."""

_NUMBERED = re.compile(
    r"^\s*(?:§\s*(?P<section>\d+(?:\.\d+)*)\.?|(?P<dotted>\d+(?:\.\d+)+)\.?|(?P<plain>\d+)[.)])"
    r"\s+(?P<text>\S.*)$")
_BULLET = re.compile(r"^\s*[-*+•]\s+(?P<text>\S.*)$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.*?)\s*#*\s*$")
_HEADING_NUMBER = re.compile(r"^(?:§\s*)?(?P<number>\d+(?:\.\d+)*)[.)]?\s+(?P<rest>\S.*)$")
_WORD = re.compile(r"[a-z0-9]+")
_SLUG_WORDS = 4


@dataclass(frozen=True)
class Clause:
    """One clause of a policy document."""

    id: str
    """Its number as written (``1.2``), else a slug of its first words; unique in the
    document."""
    text: str
    """Its text, continuation lines joined by spaces."""


def _slug(text: str) -> str:
    return "-".join(_WORD.findall(text.lower())[:_SLUG_WORDS]) or "clause"


@dataclass
class _Open:
    """A clause being read: its id (None: slug it) and its lines."""

    id: str | None
    lines: list[str]
    heading: str | None = None


def parse_policy(text: str) -> tuple[Clause, ...]:
    """The clauses of a policy document's text, in document order (see the module doc)."""
    clauses: list[_Open] = []
    section: _Open | None = None  # the current heading's prose
    item: _Open | None = None  # the item that following lines continue
    for line in text.splitlines():
        if not line.strip():
            item = None
            continue
        if heading := _HEADING.match(line):
            title = heading["text"].strip()
            numbered = _HEADING_NUMBER.match(title)
            section = _Open(numbered["number"] if numbered else None, [],
                            heading=numbered["rest"] if numbered else title)
            clauses.append(section)
            item = None
        elif numbered := _NUMBERED.match(line):
            number = numbered["section"] or numbered["dotted"] or numbered["plain"]
            item = _Open(number, [numbered["text"].strip()])
            clauses.append(item)
        elif bullet := _BULLET.match(line):
            item = _Open(None, [bullet["text"].strip()])
            clauses.append(item)
        elif item is not None:
            item.lines.append(line.strip())
        elif section is not None:
            section.lines.append(line.strip())
        else:
            item = _Open(None, [line.strip()])  # prose before any heading: a paragraph
            clauses.append(item)
    return _finish(clauses)


def _finish(opened: Iterable[_Open]) -> tuple[Clause, ...]:
    seen: dict[str, int] = {}
    clauses = []
    for clause in opened:
        if clause.heading is not None and not clause.lines:
            continue  # a heading over items only: the items are the clauses
        body = " ".join(clause.lines)
        text = f"{clause.heading}: {body}" if clause.heading else body
        base = clause.id or _slug(clause.heading or body)
        seen[base] = seen.get(base, 0) + 1
        clauses.append(Clause(base if seen[base] == 1 else f"{base}-{seen[base]}", text))
    return tuple(clauses)


def load_policy(path: Path) -> tuple[Clause, ...]:
    """The clauses of the policy document at ``path``; PolicyFileError when it cannot be
    read or holds no clause."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyFileError(
            f"policy file {path} does not exist; fix the path given to --policy "
            "(or TRACEMILL_POLICY_FILE)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyFileError(
            f"cannot read policy file {path}: {exc}; it must be UTF-8 Markdown or text") from None
    clauses = parse_policy(text)
    if not clauses:
        raise PolicyFileError(
            f"policy file {path} holds no clause; write its rules as numbered items, "
            "bullets or headed sections")
    return clauses


def _fold(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> frozenset[str]:
    """The matching words of a text (see the module doc)."""
    return frozenset(_fold(word) for word in _WORD.findall(text.lower())
                     if len(word) >= 3 and word not in STOPWORDS)


@dataclass(frozen=True)
class ClauseIndex:
    """A document's clauses with their words, computed once (see :func:`clause_index`)."""

    ids: tuple[str, ...]
    """Clause ids in document order."""
    words: tuple[frozenset[str], ...]
    """Each clause's words (:func:`words` of its text)."""
    by_id: dict[str, int]
    """Clause position by normalised id (see :func:`_normal_id`)."""


def _normal_id(name: str) -> str:
    return "-".join(_WORD.findall(name.lower()))


@lru_cache(maxsize=8)
def clause_index(clauses: tuple[tuple[str, str], ...]) -> ClauseIndex:
    """The index of ``(id, text)`` clauses; cached, so each worker process builds it once
    per policy however many conversations it places."""
    return ClauseIndex(
        ids=tuple(clause_id for clause_id, _ in clauses),
        words=tuple(words(text) for _, text in clauses),
        by_id={_normal_id(clause_id): index for index, (clause_id, _) in enumerate(clauses)})


def match_clause(index: ClauseIndex, texts: Sequence[str | None]) -> str | None:
    """The id of the clause the texts are about, or None when none reaches MIN_SHARED.

    A text equal to a clause's id (``refunds-over-100`` or ``1.2``; case, ``_`` and spaces
    aside) names that clause outright, as an evaluation named after a clause does.
    """
    for text in texts:
        if text and (named := index.by_id.get(_normal_id(text))) is not None:
            return index.ids[named]
    found: frozenset[str] = frozenset().union(*(words(text) for text in texts if text))
    if not found:
        return None
    best: tuple[int, float, int] | None = None
    for position, clause_words in enumerate(index.words):
        shared = len(found & clause_words)
        if shared < MIN_SHARED:
            continue
        key = (shared, shared / len(clause_words), -position)
        if best is None or key > best:
            best = key
    return None if best is None else index.ids[-best[2]]
