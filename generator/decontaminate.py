"""Decontamination of training rows against the held-out set and its production sources.

Rules run in order; a training row is removed by the first rule it matches, and each rule
counts what it removed:

1. ``task_id``: it shares a task id with a reference row (a rollout's goal, or a production
   conversation it was derived from).
2. ``exact_text``: its text equals a reference text after lower-casing and collapsing
   whitespace.
3. ``near_copy``: word 8-grams it shares with the reference set cover at least 80% of its
   own 8-grams. The reference's 8-grams sit in one hashed set (an inverted index with no
   postings), so the check is linear in the words of both sides, never quadratic in rows.
4. ``semantic``: cosine similarity >= 0.85 to a reference text, only when an embedder is
   configured (``--embedder python:module:function``: texts in, one vector per text out);
   otherwise the report says loudly that it did not run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

NGRAM = 8
"""Words per shingle of the near-copy rule."""
NEAR_COPY_COVERAGE = 0.8
"""Share of a row's 8-grams found in the reference that makes it a near copy."""
SEMANTIC_NOT_RUN = "semantic rule not run: no embedder configured"
"""What the report says when rule 4 could not run."""
SEMANTIC_COSINE = 0.85
"""Cosine similarity to a reference text that makes a row a semantic copy."""
_CHUNK = 1024

Embedder = Callable[[list[str]], Sequence[Sequence[float]]]
"""``texts -> one vector per text`` (``--embedder python:module:function``)."""

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class TextRow:
    """One row to check, or one reference row."""

    row_id: str
    """A rollout id or a production conversation id."""
    task_ids: frozenset[str]
    """Its task ids (goal digest, source conversation ids)."""
    text: str
    """What the person asked: the user turns joined."""


@dataclass(frozen=True)
class DecontaminationReport:
    """What decontamination checked and removed, per rule."""

    checked: int
    """Training rows checked."""
    reference_rows: int
    """Reference rows (held-out rollouts and production conversations)."""
    removed: dict[str, int] = field(default_factory=dict)
    """Rows removed per rule (rule name -> count), in rule order."""
    rules_run: tuple[str, ...] = ()
    """The rules that ran."""
    not_run: tuple[str, ...] = ()
    """Why a rule did not run (one sentence each)."""

    @property
    def kept(self) -> int:
        """Training rows that passed every rule."""
        return self.checked - sum(self.removed.values())

    def to_json(self) -> dict[str, object]:
        """Plain JSON-able form."""
        return {"checked": self.checked, "reference_rows": self.reference_rows,
                "removed": dict(self.removed), "kept": self.kept,
                "rules_run": list(self.rules_run), "not_run": list(self.not_run),
                "near_copy": {"ngram_words": NGRAM, "coverage": NEAR_COPY_COVERAGE},
                "semantic": {"cosine": SEMANTIC_COSINE}}


def normalise(text: str) -> str:
    """Lower case, runs of whitespace as one space, trimmed."""
    return _SPACE.sub(" ", text.lower()).strip()


def _grams(text: str) -> list[int]:
    words = _WORD.findall(text.lower())
    return [hash(tuple(words[i:i + NGRAM])) for i in range(len(words) - NGRAM + 1)]


def _unit(vectors: Sequence[Sequence[float]], expected: int) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != expected:
        raise ValueError(f"the embedder returned {matrix.shape} for {expected} texts; it "
                         "must return one vector per text")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def _semantic(rows: list[TextRow], reference: list[str], embedder: Embedder) -> list[TextRow]:
    """The rows whose cosine to some reference text reaches the threshold (chunked: the
    similarity matrix is never held whole)."""
    if not rows or not reference:
        return []
    ref = np.concatenate([_unit(embedder(reference[i:i + _CHUNK]),
                                len(reference[i:i + _CHUNK]))
                          for i in range(0, len(reference), _CHUNK)])
    found: list[TextRow] = []
    for i in range(0, len(rows), _CHUNK):
        chunk = rows[i:i + _CHUNK]
        best = (_unit(embedder([r.text for r in chunk]), len(chunk)) @ ref.T).max(axis=1)
        found += [row for row, score in zip(chunk, best, strict=True)
                  if score >= SEMANTIC_COSINE]
    return found


def decontaminate(train: Sequence[TextRow], reference: Iterable[TextRow],
                  embedder: Embedder | None = None
                  ) -> tuple[dict[str, str], DecontaminationReport]:
    """Which training rows to remove (row id -> the rule that removed it), and the report.
    Rule 4 runs only with an ``embedder``."""
    task_ids: set[str] = set()
    texts: set[str] = set()
    grams: set[int] = set()
    reference_texts: list[str] = []
    references = 0
    for row in reference:
        references += 1
        reference_texts.append(row.text)
        task_ids |= row.task_ids
        texts.add(normalise(row.text))
        grams.update(_grams(row.text))
    texts.discard("")
    removed: dict[str, str] = {}
    counts = {"task_id": 0, "exact_text": 0, "near_copy": 0}
    for row in train:
        rule = None
        if row.task_ids & task_ids:
            rule = "task_id"
        elif normalise(row.text) in texts:
            rule = "exact_text"
        else:
            own = _grams(row.text)
            if own and sum(1 for g in own if g in grams) >= NEAR_COPY_COVERAGE * len(own):
                rule = "near_copy"
        if rule is not None:
            removed[row.row_id] = rule
            counts[rule] += 1
    rules: tuple[str, ...] = ("task_id", "exact_text", "near_copy")
    not_run: tuple[str, ...] = (SEMANTIC_NOT_RUN,)
    if embedder is not None:
        left = [row for row in train if row.row_id not in removed]
        semantic = _semantic(left, reference_texts, embedder)
        removed.update((row.row_id, "semantic") for row in semantic)
        counts["semantic"] = len(semantic)
        rules, not_run = (*rules, "semantic"), ()
    return removed, DecontaminationReport(
        checked=len(train), reference_rows=references, removed=counts, rules_run=rules,
        not_run=not_run)


__all__ = ["NEAR_COPY_COVERAGE", "NGRAM", "SEMANTIC_COSINE", "SEMANTIC_NOT_RUN",
           "DecontaminationReport", "Embedder", "TextRow", "decontaminate", "normalise"]
