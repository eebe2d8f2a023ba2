"""The pattern families of the user-stance detector (:mod:`processor.stance`).

Each family is an *intent* written as a regular expression over the lower-cased ask
(apostrophes normalised to ``'``), with a weight; a stance's score is the sum of the
weights of its families that match (each family counts once). Guards are families with a
negative weight: they say that a trigger-looking word is used neutrally (a question about
a policy, urgent care, prompt injection as a coding topic, a polite hedge).

A family may be split into several entries with the same name, each branch with its own
cues; it still counts once. Every entry is searched only when the ask holds one of its
*cues* (whole words, or ``marks``: substrings) and, when it has *needs*, one of those too
(:func:`candidates`): Python's ``re`` tries every branch of an alternation at every
position, so running ~200 patterns on every ask would cost several hundred µs, where the
cue index keeps it to the dozen that can match (tens of µs).

The families were written from the label guidelines (bench/data/stance/README.md) and
from how people ask support agents for things in general, then checked against the
development split and against sentences written for tests/processor/test_stance.py;
never against the test split, and none of them is a sentence of the corpus.
"""

from __future__ import annotations

from processor._stance_acts import ADVERSARIAL_ACTS
from processor._stance_adversarial import ADVERSARIAL, ADVERSARIAL_GUARDS
from processor._stance_family import Family, tokens
from processor._stance_inference import CONFLICTING_REVERSAL, MISTAKEN_INFERENCE
from processor._stance_leverage import LEVERAGE
from processor._stance_moods import (
    FRUSTRATED,
    HURRIED,
    HURRIED_GUARDS,
    TIME_BUDGET,
    UNSURE,
    UNSURE_GUARDS,
)
from processor._stance_premises import CONFLICTING, MISTAKEN, flip_flops, same_verb_negated

__all__ = ["FAMILIES", "Family", "candidates", "flip_flops", "same_verb_negated", "tokens"]

FAMILIES: tuple[Family, ...] = (
    *ADVERSARIAL, *ADVERSARIAL_ACTS, *LEVERAGE, *ADVERSARIAL_GUARDS, *FRUSTRATED, *HURRIED,
    *TIME_BUDGET, *HURRIED_GUARDS, *UNSURE, *UNSURE_GUARDS, *MISTAKEN, *MISTAKEN_INFERENCE,
    *CONFLICTING, *CONFLICTING_REVERSAL)
"""Every family, in no particular order (scores are sums)."""


def _index() -> tuple[dict[str, tuple[int, ...]], tuple[tuple[str, tuple[int, ...]], ...],
                      tuple[int, ...]]:
    by_cue: dict[str, list[int]] = {}
    for number, family in enumerate(FAMILIES):
        for cue in family.cues:
            by_cue.setdefault(cue, []).append(number)
    by_mark: dict[str, list[int]] = {}
    for number, family in enumerate(FAMILIES):
        for mark in family.marks:
            by_mark.setdefault(mark, []).append(number)
    marked = tuple((mark, tuple(numbers)) for mark, numbers in by_mark.items())
    always = tuple(number for number, family in enumerate(FAMILIES)
                   if not family.cues and not family.marks)
    return {cue: tuple(numbers) for cue, numbers in by_cue.items()}, marked, always


_BY_CUE, _MARKED, _ALWAYS = _index()
_CUE_WORDS = frozenset(_BY_CUE)
_NEEDS = tuple(family.needs for family in FAMILIES)


def candidates(words: frozenset[str], lowered: str) -> set[int]:
    """Indices (into :data:`FAMILIES`) of the families whose cues the ask has."""
    chosen = set(_ALWAYS)
    for word in words & _CUE_WORDS:
        chosen.update(_BY_CUE[word])
    for mark, numbers in _MARKED:
        if mark in lowered:
            chosen.update(numbers)
    return {number for number in chosen
            if not _NEEDS[number] or not _NEEDS[number].isdisjoint(words)}

