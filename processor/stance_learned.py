"""The default user-stance reader: a linear model built on the patterns (numpy only).

The hand-written patterns (:mod:`processor._stance_rules`) are precise but miss: on text
nobody tuned them on, most misses come out ``ordinary``. This reader gives every ask a
probability per stance from a multinomial logistic model over features that need no model
weights at run time (:func:`encode`):

* **words**: lower-cased word unigrams and bigrams, with ids, e-mails, links and numbers
  normalised (``#W8178512`` and ``8JX2WO`` are one token, every number is ``0``), and
  what the history axis reads left out (:mod:`processor._history_cues`: "I'm asking
  again", "it failed before" are history, not a stance);
* **characters**: 3- to 5-grams of the normalised text (a typo keeps most of them);
* **marks**: what the patterns found (their label and every family that matched) and a
  few shapes of the text (``!!``, ``??``, a shouted word, length);
* **meaning**: the mean of the ask's word pieces in a static table distilled from
  all-MiniLM-L6-v2 (``processor/data/stance_words.npz``, ``bench/build_stance_table.py``),
  so that words the training lines never used still count by their sense;
* **scores**: the patterns' score per stance.

Each block is scaled to unit length and weighted (the file's ``scales``). The weights
(``processor/data/stance_reader.npz``) are fitted by ``bench/train_stance_reader.py`` on the
development splits only; the rule that turns probabilities and the patterns' label into a
stance (:meth:`StanceReader.decide`) was chosen there on the training splits:
``patterns_first`` keeps a non-ordinary pattern result, ``patterns_unless_plain`` keeps it
unless the model reads the ask as plain (``ordinary``) with a probability of at least
``plain_probability`` (the patterns' false alarms on calm text: "but", a problem told
calmly), an adversarial one always (a polite request to falsify a record reads as plain
to the model), ``adversarial_first`` keeps an adversarial one (the patterns' most precise stance,
and the one that matters most), and otherwise (``learned``: always) the model's best stance
is taken when its probability reaches ``min_probability``, else ``ordinary``. The first two
also give way when the model reads *another* non-ordinary stance with a probability of at
least ``other_probability`` (never for adversarial): the patterns count words, and an ask
that contradicts itself "immediately" scores hurried on its urgency word, where the model,
reading the whole ask, is sure it is conflicting.

The shipped file (trained 2026-12-02, session 10, on ``dev`` to ``dev7``; its
``other_probability`` chosen 2026-12-03 by the same training, the weights unchanged): words,
characters and meaning only (the marks and scores blocks weigh 0: stacked on the patterns'
findings the model transferred worse to other authors' text); its rule and thresholds are
in the file (printed by the training script). Where the rule keeps the pattern stance the
model is not run, and its probabilities are remembered per normalised ask
(:meth:`StanceReader.read`).

**Spans.** People often say how they come at the agent in a sentence or two and the ask in
others ("This is the third time I'm asking. Cancel reservation 8JX2WO."). The blocks are
scaled to unit length, so the plain ask's words dilute the opening's: on openings joined to
a plain ask the whole-ask reading loses 8-15 points of recall on every stance. So when the
whole ask reads ``ordinary``, its first and last few sentences are read on their own
(:func:`processor._stance_spans.text_spans`), and the model's stance of the one it gives a
stance with the highest probability, at least :data:`SPAN_PROBABILITY`, decides.

Loaded once per process (:func:`load_reader`); about 1-2x the patterns' own time per ask
(186 µs per ask measured on a loaded 2-core machine, patterns included, before the spans).
An ask that reads plain and has several sentences takes up to 8 more model readings, each
remembered per normalised span: the 1M-span map (``bench/processor_map.py``) took 52.3 s
with them (spans of 3 words or more, the first version) and 57.9 s without, in one
session (median of 3 each). A missing or
damaged data file raises :class:`ReaderFileError` naming the file and the fix.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import unicodedata
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from processor._history_cues import without_history
from processor._stance_rules import STANCES, decide, pattern_stance, stance_evidence
from processor._stance_spans import text_spans
from processor.errors import ProcessorError

__all__ = ["BLOCKS", "READER_RESOURCE", "RULES", "SPAN_PROBABILITY", "WORDS_RESOURCE",
           "Encoded", "ReaderFileError", "StanceReader", "WordTable", "decide_stance", "encode",
           "load_reader", "load_table", "normalise", "pack_arrays", "parse_reader", "parse_table",
           "read_arrays", "read_stance", "reader_digest", "resource_bytes", "write_arrays"]

WORDS_RESOURCE = ("processor", "data/stance_words.npz")
"""Package and path of the static word table."""
READER_RESOURCE = ("processor", "data/stance_reader.npz")
"""Package and path of the reader's weights."""
BLOCKS = ("words", "characters", "marks", "meaning", "scores")
"""The feature blocks, in the order of the file's ``scales``."""
RULES = ("patterns_first", "patterns_unless_plain", "adversarial_first", "learned")
"""How probabilities and the patterns' label make a stance (:meth:`StanceReader.decide`)."""
PATTERN_STANCES = STANCES[1:]
"""The stances with a pattern score, in the order of the ``scores`` block."""
_MEMO = 65536
"""Model readings a reader keeps (by normalised ask)."""
_SCORE_CAP = 4.0
"""Pattern scores above this count as this (the block is score / cap)."""


class ReaderFileError(ProcessorError):
    """A data file of the stance reader is missing, unreadable or has the wrong shape (the
    command line prints the message, which names the file and how to rebuild it)."""


# ---------------------------------------------------------------- data files


def write_arrays(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``path`` as :func:`pack_arrays` packs them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pack_arrays(arrays))


def pack_arrays(arrays: Mapping[str, np.ndarray]) -> bytes:
    """``arrays`` as the bytes of an ``.npz`` file that are the same for the same arrays
    (fixed timestamps, sorted names), so a training script can ``--check`` its output."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[name]),
                                      allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, member.getvalue())
    return buffer.getvalue()


def read_arrays(data: bytes, where: str, fields: Sequence[str], fix: str,
                ) -> dict[str, np.ndarray]:
    """The named arrays of an ``.npz`` file's bytes; :class:`ReaderFileError` naming
    ``where``, the problem and ``fix`` when one is missing or the file is not an npz."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            missing = [name for name in fields if name not in archive.files]
            if missing:
                raise ReaderFileError(f"{where}: missing array(s) {', '.join(missing)}; {fix}")
            return {name: archive[name] for name in fields}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ReaderFileError(f"{where}: not a readable .npz file ({exc}); {fix}") from None


def resource_bytes(resource: tuple[str, str], fix: str) -> bytes:
    """The bytes of a packaged data file; :class:`ReaderFileError` when it cannot be read."""
    package, path = resource
    try:
        return resources.files(package).joinpath(path).read_bytes()
    except OSError as exc:
        raise ReaderFileError(f"{package}/{path}: cannot read it ({exc}); reinstall "
                              f"tracemill or {fix}") from None


_TABLE_FIX = "rebuild it with python bench/build_stance_table.py (needs the embed extra)"
_READER_FIX = "rebuild it with python bench/train_stance_reader.py"

# ---------------------------------------------------------------- text


_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_URL = re.compile(r"https?://\S+|www\.\S+")
# linear on any text: a match starts only where the run starts, and the run is taken whole
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]+\.[\w.]+")
_ID = re.compile(r"(?<![\w-])(?=[a-z0-9-]*\d)(?=[a-z0-9-]*[a-z])[a-z0-9][a-z0-9-]{3,}(?![\w])")
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[a-z0-9']+|[!?]")
_SHOUTED = re.compile(r"(?<![\w-])[A-Z]{3,}(?![\w-])")
_PLACEHOLDERS = frozenset(("idtok", "urltok", "emailtok"))


def normalise(text: str) -> str:
    """Lower case, one kind of quote, ids/links/e-mails as one word each, every number
    ``0``, single spaces; mentions of an earlier contact left out (the history axis reads
    them: :mod:`processor._history_cues`)."""
    lowered = without_history(text.translate(_QUOTES).lower())
    lowered = _URL.sub(" urltok ", lowered)
    lowered = _EMAIL.sub(" emailtok ", lowered)
    lowered = _ID.sub(" idtok ", lowered)
    lowered = _DIGITS.sub("0", lowered)
    return " ".join(lowered.split())


@dataclass(frozen=True)
class Encoded:
    """One ask as features (the blocks of :data:`BLOCKS`, unscaled)."""

    words: frozenset[str]
    """``w:`` unigrams and ``b:`` bigrams."""
    characters: frozenset[str]
    """``c:`` character 3- to 5-grams."""
    marks: frozenset[str]
    """``p:`` the patterns' label, ``f:`` their families, ``s:`` shapes of the text."""
    meaning: np.ndarray
    """The unit mean vector of the word pieces (zeros when none is in the table)."""
    scores: np.ndarray
    """The patterns' score per stance of :data:`PATTERN_STANCES`, over the cap."""
    pattern: str
    """The patterns' stance."""


def encode(text: str, table: WordTable, patterns: bool = True) -> Encoded:
    """The features of one ask (see the module); ``patterns=False`` skips running the
    patterns (their marks and scores stay empty, their stance ``ordinary``): for a reader
    that does not use them."""
    words, grams, characters, meaning = _lexical(normalise(text), table)
    evidence = stance_evidence(text) if patterns else []
    scores = dict.fromkeys(PATTERN_STANCES, 0.0)
    marks = set()
    for stance, name, weight in evidence:
        scores[stance] += weight
        marks.add("f:" + name)
    pattern = decide(scores) if text and patterns else "ordinary"
    if patterns:
        marks.add("p:" + pattern)
    if "!!" in text:
        marks.add("s:!!")
    if "??" in text or "?!" in text or "!?" in text:
        marks.add("s:??")
    if _SHOUTED.search(text):
        marks.add("s:caps")
    marks.add(f"s:len{min(len(words) // 10, 5)}")
    score_vector = np.array([min(max(scores[stance], 0.0), _SCORE_CAP) / _SCORE_CAP
                             for stance in PATTERN_STANCES])
    return Encoded(grams, characters, frozenset(marks), meaning, score_vector, pattern)


def _lexical(normal: str, table: WordTable,
             ) -> tuple[list[str], frozenset[str], frozenset[str], np.ndarray]:
    """(words, word grams, character grams, meaning) of a normalised ask."""
    words = _WORD.findall(normal)
    grams = {"w:" + word for word in words}
    grams.update(f"b:{first}_{second}" for first, second in zip(
        ["<s>", *words], [*words, "</s>"], strict=True))
    padded = f" {normal} "
    characters = frozenset("c:" + padded[start:start + size] for size in (3, 4, 5)
                           for start in range(len(padded) - size + 1))
    meaning = table.mean([word for word in words if word not in _PLACEHOLDERS])
    return words, frozenset(grams), characters, meaning


_NO_SCORES = np.zeros(len(PATTERN_STANCES))


# ---------------------------------------------------------------- the word table


def _basic_split(word: str) -> list[str]:
    """BERT's basic tokenizer on one lower-cased word: accents stripped, punctuation apart."""
    if not word.isascii():
        word = "".join(char for char in unicodedata.normalize("NFD", word)
                       if unicodedata.category(char) != "Mn")
    return re.findall(r"[a-z0-9]+|[^\sa-z0-9]", word)


class WordTable:
    """Static vectors of word pieces; an ask's meaning is the mean of its pieces'."""

    def __init__(self, pieces: Sequence[str], vectors: np.ndarray, source: str) -> None:
        self.index = {piece: number for number, piece in enumerate(pieces)}
        """Word piece -> row."""
        self.vectors = vectors
        """(pieces, dimensions) float32."""
        self.source = source
        """Which model the table was distilled from."""
        self._rows = lru_cache(maxsize=65536)(self._word_rows)

    @property
    def dimensions(self) -> int:
        """Length of a vector."""
        return int(self.vectors.shape[1])

    def _word_rows(self, word: str) -> tuple[int, ...]:
        rows: list[int] = []
        for part in _basic_split(word):
            found = self.index.get(part)
            if found is not None:
                rows.append(found)
                continue
            start, pieces = 0, list[int]()
            while start < len(part):  # greedy longest match (WordPiece)
                end = len(part)
                while end > start:
                    piece = part[start:end] if start == 0 else "##" + part[start:end]
                    found = self.index.get(piece)
                    if found is not None:
                        break
                    end -= 1
                if found is None:
                    pieces = []  # an unknown piece: the word counts for nothing
                    break
                pieces.append(found)
                start = end
            rows.extend(pieces)
        return tuple(rows)

    def mean(self, words: Sequence[str]) -> np.ndarray:
        """The unit mean vector of the words' pieces (zeros for none)."""
        rows = [row for word in words for row in self._rows(word)]
        if not rows:
            return np.zeros(self.dimensions)
        # a sum: the norm makes it the mean's direction
        vector = self.vectors.take(np.asarray(rows, dtype=np.intp), axis=0).sum(
            axis=0, dtype=np.float64)
        norm = float(np.sqrt(vector @ vector))
        unit: np.ndarray = vector / norm if norm > 0 else vector
        return unit


def parse_table(data: bytes, where: str) -> WordTable:
    """The word table in a file's bytes (:class:`ReaderFileError` when it is not one)."""
    arrays = read_arrays(data, where, ("pieces", "vectors", "scales", "source"), _TABLE_FIX)
    pieces, vectors, scales = arrays["pieces"], arrays["vectors"], arrays["scales"]
    if (pieces.ndim != 1 or vectors.ndim != 2 or vectors.shape[0] != len(pieces)
            or scales.shape != (len(pieces),) or vectors.dtype != np.int8):
        raise ReaderFileError(f"{where}: pieces {pieces.shape}, vectors {vectors.shape} "
                              f"{vectors.dtype} and scales {scales.shape} do not fit; "
                              f"{_TABLE_FIX}")
    matrix = vectors.astype(np.float32) * scales.astype(np.float32)[:, None]
    return WordTable([str(piece) for piece in pieces], matrix, str(arrays["source"][0]))


@lru_cache(maxsize=1)
def load_table() -> WordTable:
    """The word table shipped with the package (loaded once per process)."""
    package, path = WORDS_RESOURCE
    return parse_table(resource_bytes(WORDS_RESOURCE, _TABLE_FIX), f"{package}/{path}")


# ---------------------------------------------------------------- the reader


@dataclass(frozen=True)
class StanceReader:
    """The fitted model and its decision rule."""

    labels: tuple[str, ...]
    """The stance of each weight column."""
    features: Mapping[str, int]
    """Sparse feature (word, character gram, mark) -> weight row."""
    sparse: np.ndarray
    """(sparse features, labels) weights."""
    dense: np.ndarray
    """(meaning dimensions + pattern scores, labels) weights."""
    bias: np.ndarray
    """(labels,)."""
    scales: np.ndarray
    """The weight of each block of :data:`BLOCKS`."""
    rule: str
    """One of :data:`RULES`."""
    min_probability: float
    """Probability from which the model's non-ordinary stance is taken."""
    plain_probability: float
    """``patterns_unless_plain``: the model's ``ordinary`` probability from which a pattern
    stance other than adversarial is overruled."""
    other_probability: float
    """``patterns_first`` and ``patterns_unless_plain``: the probability from which the
    model's reading of another non-ordinary stance replaces a pattern stance other than
    adversarial (1.0: never)."""
    table: WordTable
    """The static word table the ``meaning`` block comes from."""
    memo: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    """Model probabilities by normalised ask (at most :data:`_MEMO`)."""

    def probabilities(self, encoded: Encoded) -> np.ndarray:
        """(labels,) probabilities of one encoded ask."""
        get = self.features.get
        rows: list[int] = []
        weights: list[float] = []
        for number, (block, scale) in enumerate(zip(
                (encoded.words, encoded.characters, encoded.marks), self.scales[:3],
                strict=True)):
            if not scale or not block:
                continue
            found = [row for row in map(get, block) if row is not None]
            # words and characters: unit length; marks: one each
            weight = float(scale) / math.sqrt(len(block)) if number < 2 else float(scale)
            rows += found
            weights += [weight] * len(found)
        logits = self.bias.copy()
        if rows:
            # in row order: the sum's order, and so its last bits, must not follow set order
            # (a row is one feature of one block, so the order is total)
            index = np.asarray(rows, dtype=np.intp)
            order = np.argsort(index, kind="stable")
            logits += np.asarray(weights)[order] @ self.sparse.take(index[order], axis=0)
        dense = np.concatenate((encoded.meaning * self.scales[3],
                                encoded.scores * self.scales[4]))
        logits = logits + dense @ self.dense
        logits -= logits.max()
        exp = np.exp(logits)
        result: np.ndarray = exp / exp.sum()
        return result

    def decide(self, probabilities: np.ndarray, pattern: str) -> str:
        """The stance from the model's probabilities and the patterns' label (see
        :func:`decide_stance`)."""
        return decide_stance(probabilities, pattern, self.labels, self.rule,
                             self.min_probability, self.plain_probability,
                             self.other_probability)

    def read(self, text: str, spans: bool = True) -> str:
        """The stance of one ask; ``spans=False`` reads the whole ask only (for the
        benchmark's comparison, see :data:`SPAN_PROBABILITY`). Weights that read the
        patterns' findings (the ``marks`` or ``scores`` block, not the shipped ones) read
        the whole ask only: the findings are the whole ask's."""
        if not text.strip():
            return "ordinary"
        if self.scales[2] or self.scales[4]:  # the weights read the patterns' findings
            encoded = encode(text, self.table)
            return self.decide(self.probabilities(encoded), encoded.pattern)
        pattern = pattern_stance(text) if self.rule != "learned" else "ordinary"
        if self.keeps(pattern):
            return pattern  # the model is not needed
        stance = self.decide(self._model(text[:MODEL_CHARS]), pattern)
        if stance != "ordinary" or not spans:
            return stance
        # a stance said in a few sentences beside a plain ask: the ask's words dilute the
        # model's features, so the spans without it are read too (see SPAN_PROBABILITY)
        plain = self.labels.index("ordinary")
        best, top = None, SPAN_PROBABILITY
        for span in text_spans(text, MODEL_CHARS):
            found = self._model(span)  # within MODEL_CHARS: see text_spans
            stanced = float(np.delete(found, plain).max())
            if stanced >= top:
                best, top = found, stanced
        # the span's own reading decides: a pattern stance the whole ask's reading overruled
        # does not come back with a span that reads another stance
        return stance if best is None else self.decide(best, "ordinary")

    def _model(self, text: str) -> np.ndarray:
        """The model's probabilities for one ask, remembered by its normalised text (asks
        that differ in ids, numbers or case share one reading)."""
        normal = normalise(text)
        found = self.memo.get(normal)
        if found is None:
            _, grams, characters, meaning = _lexical(normal, self.table)
            found = self.probabilities(
                Encoded(grams, characters, frozenset(), meaning, _NO_SCORES, "ordinary"))
            if len(self.memo) >= _MEMO:
                self.memo.clear()
            self.memo[normal] = found
        return found

    def keeps(self, pattern: str) -> bool:
        """Whether the rule keeps this pattern stance whatever the model says."""
        if pattern == "ordinary":
            return False
        if self.rule == "patterns_first":
            return pattern == "adversarial" or self.other_probability >= 1.0
        return self.rule == "adversarial_first" and pattern == "adversarial"


def decide_stance(probabilities: np.ndarray, pattern: str, labels: Sequence[str], rule: str,
                  min_probability: float, plain_probability: float,
                  other_probability: float) -> str:
    """The stance from the model's probabilities (in the order of ``labels``) and the
    patterns' label under a rule of :data:`RULES` and its thresholds (see the module);
    :meth:`StanceReader.decide`, and the training script's choice of the rule."""
    best = int(probabilities.argmax())
    label = labels[best]
    if pattern != "ordinary" and rule in ("patterns_first", "patterns_unless_plain"):
        if pattern == "adversarial":
            return pattern
        plain = probabilities[labels.index("ordinary")]
        if rule == "patterns_unless_plain" and plain >= plain_probability:
            return "ordinary"
        if label not in ("ordinary", pattern) and other_probability < 1.0 and \
                probabilities[best] >= other_probability:
            return label  # the model reads another stance, and is sure of it
        return pattern
    if pattern == "adversarial" and rule == "adversarial_first":
        return pattern
    if label != "ordinary" and probabilities[best] >= min_probability:
        return label
    return "ordinary"


def parse_reader(data: bytes, where: str, table: WordTable) -> StanceReader:
    """The reader in a weights file's bytes (:class:`ReaderFileError` when it is not one)."""
    arrays = read_arrays(data, where, ("labels", "features", "sparse", "dense", "bias",
                                       "scales", "rule", "min_probability",
                                       "plain_probability", "other_probability"),
                        _READER_FIX)
    labels = tuple(str(label) for label in arrays["labels"])
    features, sparse, dense = arrays["features"], arrays["sparse"], arrays["dense"]
    bias, scales = arrays["bias"], arrays["scales"]
    rule, min_probability = str(arrays["rule"][0]), float(arrays["min_probability"][0])
    plain_probability = float(arrays["plain_probability"][0])
    other_probability = float(arrays["other_probability"][0])
    if sorted(labels) != sorted(STANCES):
        raise ReaderFileError(f"{where}: labels {labels} are not the stances {STANCES}; "
                              f"{_READER_FIX}")
    width = len(labels)
    expected_dense = table.dimensions + len(PATTERN_STANCES)
    if (features.ndim != 1 or sparse.shape != (len(features), width)
            or dense.shape != (expected_dense, width) or bias.shape != (width,)
            or scales.shape != (len(BLOCKS),)):
        raise ReaderFileError(
            f"{where}: features {features.shape}, sparse {sparse.shape}, dense {dense.shape}, "
            f"bias {bias.shape}, scales {scales.shape} do not fit {width} labels and a "
            f"{table.dimensions}-dimension word table; {_READER_FIX}")
    finite = all(np.isfinite(array.astype(np.float64)).all()
                 for array in (sparse, dense, bias, scales))
    if rule not in RULES or not finite or not all(
            0.0 <= value <= 1.0 for value in (min_probability, plain_probability,
                                             other_probability)):
        raise ReaderFileError(f"{where}: rule {rule!r} (one of {RULES}), non-finite weights, "
                              f"or min_probability {min_probability}, plain_probability "
                              f"{plain_probability} or other_probability {other_probability} "
                              f"outside 0..1; {_READER_FIX}")
    return StanceReader(labels, {str(name): row for row, name in enumerate(features)},
                        sparse.astype(np.float64), dense.astype(np.float64),
                        bias.astype(np.float64), scales.astype(np.float64), rule,
                        min_probability, plain_probability, other_probability, table)


@lru_cache(maxsize=1)
def load_reader() -> StanceReader:
    """The reader shipped with the package (loaded once per process)."""
    package, path = READER_RESOURCE
    return parse_reader(resource_bytes(READER_RESOURCE, _READER_FIX), f"{package}/{path}",
                        load_table())


@lru_cache(maxsize=1)
def reader_digest() -> str:
    """A short digest of the shipped weights and table (names a reader in caches)."""
    digest = hashlib.sha256(resource_bytes(READER_RESOURCE, _READER_FIX))
    digest.update(resource_bytes(WORDS_RESOURCE, _TABLE_FIX))
    return digest.hexdigest()[:12]


SPAN_PROBABILITY = 0.7
"""When the whole ask reads plain, a *span* of it (the first or last sentences, without the
rest: :func:`processor._stance_spans.text_spans`) that the model gives a stance at least
this probability decides instead. People often say how they come at the agent in a sentence
or two and the ask in others; the model's blocks are scaled to unit length, so a plain ask
beside an opening dilutes it: on openings joined to a plain ask (``bench/stance_confusion.py
--framed``) the whole-ask reading loses 8-15 points of recall on every stance. Chosen on the
training splits framed with their own plain lines (``dev`` to ``dev6``, spans of at least
``SPAN_WORDS`` words: macro F1 0.729 without spans, 0.847 / 0.839 / 0.823 at 0.7 / 0.75 /
0.8; plain lines read as plain 0.981 without spans, 0.935 / 0.952 / 0.964) and on the
generator's ordinary openings (read as plain 0.82 without spans, 0.79 / 0.80 / 0.80): see
``bench/data/stance/README.md``."""

MODEL_CHARS = 4000
"""How much of an ask the model reads (the patterns read all of it): enough for any
opening, and a pasted log or document costs no more."""


@lru_cache(maxsize=8192)
def read_stance(text: str) -> str:
    """The default reader's stance of one ask (see the module)."""
    return load_reader().read(text)
