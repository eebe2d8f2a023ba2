"""The stance patterns' pre-checks never skip a family that would match.

Before a family's regex runs, :func:`processor._stance_rules.stance_scores` tests what
every match must contain (:mod:`processor._regex_literals`): one of its required strings
(``literals``), one string of each further list (``clauses``), a match of a required
piece (``piece``). Each is read from the pattern so as to be certain; these tests check
that on every family, for texts built to match it (Hypothesis's ``from_regex``), and on
every sentence at hand: a pre-check that failed where the regex matches would change a
stance without any other test noticing.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from processor._regex_literals import (
    implies,
    required_clauses,
    required_literals,
    required_pattern,
)
from processor._stance_patterns import FAMILIES, Family
from processor._stance_rules import stance_evidence, stance_scores

ROOT = Path(__file__).resolve().parents[2]


def _sentences() -> list[str]:
    """Every opening of the stance corpus and every sentence of the stance tests."""
    texts: list[str] = []
    for path in sorted((ROOT / "bench" / "data" / "stance").glob("*.jsonl")):
        texts += [json.loads(line)["text"] for line in path.read_text(encoding="utf-8")
                  .splitlines() if line.strip()]
    for path in sorted((ROOT / "tests" / "processor").glob("test_stance*.py")):
        texts += [node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and len(node.value) >= 8]
    return list(dict.fromkeys(texts))


SENTENCES = _sentences()


def _lowered(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'").lower()


def _passes(family: Family, text: str) -> bool:
    """Whether every pre-check of ``family`` lets its regex run on ``text``."""
    if family.literals is not None and not any(string in text for string in family.literals):
        return False
    if not all(any(string in text for string in clause) for clause in family.clauses):
        return False
    return family.piece is None or family.piece.search(text) is not None


@contextmanager
def _without_prechecks() -> Iterator[None]:
    saved = [(family.literals, family.clauses, family.piece) for family in FAMILIES]
    try:
        for family in FAMILIES:
            object.__setattr__(family, "literals", None)
            object.__setattr__(family, "clauses", ())
            object.__setattr__(family, "piece", None)
        yield
    finally:
        for family, (literals, clauses, piece) in zip(FAMILIES, saved, strict=True):
            object.__setattr__(family, "literals", literals)
            object.__setattr__(family, "clauses", clauses)
            object.__setattr__(family, "piece", piece)


# --- what is read from a pattern ----------------------------------------------------------


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"\bbut\s+not\b", (("but",), ("not",))),
    (r"(?:yes|nope),\s*right\s*\?", (("?",), ("right",), ("nope", "yes"))),
    (r"(?:yes|no),\s*right\?", (("right?",),)),  # "no" is too short to say anything
    (r"hmm+\b|ugh", (("hmm", "ugh"),)),
    (r"hmm+", (("hmm",),)),
    (r"(?:abc)?\d+", ()),
    (r"(?i:refund)\d+", ()),  # case-insensitive: the text may differ
])
def test_required_clauses_of_simple_patterns(pattern: str,
                                             expected: tuple[tuple[str, ...], ...]) -> None:
    assert set(required_clauses(re.compile(pattern, re.VERBOSE))) >= set(expected)
    if not expected:
        assert required_clauses(re.compile(pattern, re.VERBOSE)) == ()


def test_implied_clauses() -> None:
    assert implies(("quickly", "asap"), ("quick", "asap", "now"))
    assert not implies(("quickly", "track"), ("quick",))


def test_required_piece_starts_at_a_literal_and_stops_at_a_back_reference() -> None:
    piece = required_pattern(re.compile(r"\b(\w+)\s+but\s+not\s+\1\b"))
    assert piece is not None
    assert piece.search("x but  not y") and not piece.search("but then not")
    # a pattern that starts with a literal is scanned for it already; none for IGNORECASE
    assert required_pattern(re.compile(r"but\s+not\s+\w+")) is None
    assert required_pattern(re.compile(r"\w+\s+but\s+not", re.IGNORECASE)) is None


def test_the_prechecks_are_in_use() -> None:
    """The pre-checks this file guards are there (else the tests below prove nothing)."""
    assert sum(family.literals is not None for family in FAMILIES) > len(FAMILIES) // 2
    assert sum(bool(family.clauses) for family in FAMILIES) > len(FAMILIES) // 3
    assert sum(family.piece is not None for family in FAMILIES) > 20
    assert required_literals(re.compile("abc")) == ("abc",)


# --- every family, texts built to match it ------------------------------------------------


@pytest.mark.parametrize("number", range(len(FAMILIES)),
                         ids=[f"{n}-{family.name}" for n, family in enumerate(FAMILIES)])
def test_a_text_that_matches_passes_every_precheck(number: int) -> None:
    family = FAMILIES[number]

    @settings(max_examples=12, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(family.pattern))
    def check(text: str) -> None:
        assert family.pattern.search(text)
        assert _passes(family, text), (family.name, text)

    check()


# --- every sentence at hand -----------------------------------------------------------------


def test_no_precheck_hides_a_match_in_the_corpus() -> None:
    """Every family (not only those whose cues an ask has) on every sentence at hand."""
    assert len(SENTENCES) > 3000
    matched = 0
    for text in SENTENCES:
        lowered = _lowered(text)
        for family in FAMILIES:
            if family.pattern.search(lowered):
                matched += 1
                assert _passes(family, lowered), (family.name, text)
    assert matched > 3000


def test_scores_and_evidence_equal_the_unchecked_pass() -> None:
    """What the patterns say with the pre-checks is what they say with every candidate
    family searched."""
    texts = SENTENCES + [text.upper() for text in SENTENCES[::7]]
    fast = [(stance_scores(text), sorted(stance_evidence(text))) for text in texts]
    with _without_prechecks():
        slow = [(stance_scores(text), sorted(stance_evidence(text))) for text in texts]
    assert fast == slow
    assert sum(bool(evidence) for _, evidence in fast) > len(texts) // 2
