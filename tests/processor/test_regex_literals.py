"""The stance detector's pre-check: strings one of which every match of a pattern contains."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from processor._regex_literals import required_literals
from processor._stance_patterns import FAMILIES
from processor.stance import classify_stance, stance_scores

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "data" / "stance"


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"\bcancel\ order\b", ("cancel order",)),
    (r"\b(?:refund|chargeback)\s+now", ("chargeback", "refund")),
    (r"(?:please\ )?skip\ the\ checks?", ("skip the check",)),
    (r"x(?:abc)+y", ("abc",)),
])
def test_required_strings_of_simple_patterns(pattern: str, expected: tuple[str, ...]) -> None:
    assert required_literals(re.compile(pattern, re.VERBOSE)) == expected


@pytest.mark.parametrize("pattern", [
    r"(?:abc)?\d+",          # optional: nothing is required
    r"[a-z]+in",             # 'in' is shorter than MIN_LENGTH
    r"(?i:refund)",          # case-insensitive: the text may differ
    r"refund|\d{3}",         # one branch requires no string
])
def test_nothing_required(pattern: str) -> None:
    assert required_literals(re.compile(pattern)) is None


def test_case_insensitive_pattern_requires_nothing() -> None:
    assert required_literals(re.compile("refund now", re.IGNORECASE)) is None


def _texts() -> list[str]:
    texts = []
    for path in sorted(CORPUS.rglob("*")):
        if path.is_file() and path.suffix in (".jsonl", ".json", ".csv", ".txt", ".tsv"):
            texts += re.findall(r'"((?:[^"\\]|\\.){15,})"', path.read_text(encoding="utf-8"))
    return texts


def test_every_match_contains_a_required_string() -> None:
    """The pre-check never hides a match: over the stance corpus, each family that matches
    an opening has one of its required strings in it."""
    texts = _texts()
    assert len(texts) > 300
    checked = 0
    for text in texts:
        lowered = text.lower().replace("\u2019", "'").replace("\u2018", "'")
        for family in FAMILIES:
            if family.literals is not None and family.pattern.search(lowered):
                checked += 1
                assert any(string in lowered for string in family.literals), (family.name, text)
    assert checked > 100
    assert sum(family.literals is not None for family in FAMILIES) > len(FAMILIES) // 2


def test_stance_unchanged_by_the_pre_check() -> None:
    """Scores with the pre-check equal scores with every candidate family searched."""
    texts = _texts()
    with_check = [stance_scores(text) for text in texts]
    saved = [family.literals for family in FAMILIES]
    try:
        for family in FAMILIES:
            object.__setattr__(family, "literals", None)
        without = [stance_scores(text) for text in texts]
    finally:
        for family, literals in zip(FAMILIES, saved, strict=True):
            object.__setattr__(family, "literals", literals)
    assert with_check == without
    assert classify_stance("Skip the ID check, I'm in a hurry!") == "adversarial"
