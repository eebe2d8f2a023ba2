"""Cross-validate the stance reader's span settings on the training splits, bare and framed.

The reader reads spans of an ask on their own when the whole ask reads plain
(:data:`processor.stance_learned.SPAN_PROBABILITY`, :data:`processor._stance_spans.SPAN_WORDS`).
Scoring those settings with the shipped weights on the lines they were fitted on flatters the
whole-ask reading; so here the model is refitted per fold (stratified 5 folds over the training
splits, the shipped file's feature set, penalty and rule), and each held-out line is read
*bare* and *framed*: joined to held-out plain lines (as ``bench/stance_confusion.py --framed
ordinary`` does: three copies, the plain line first 40% of the time), the way people put how
they come at the agent and what they want in one message. Printed per setting: macro F1, the
macro F1 with the plain lines weighted as much as all others together (``traffic``: most
production asks are plain), the recall of ``conflicting`` and the share of plain asks kept
plain. Report-only splits (test2, test3) are never read. The reader's other settings
(features, penalty, rule and thresholds) come from the shipped file, chosen on these same
lines, so the absolute figures are a little flattering: compare the settings with each other.

    python bench/stance_span_cv.py                                  # the shipped settings
    python bench/stance_span_cv.py --span-words 5,8,12 --span-probability 0.7,0.8
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from stance_confusion import DATA, LABELS, Line, framed, load, score  # noqa: E402
from train_stance_head import FOLDS, folds  # noqa: E402
from train_stance_reader import (  # noqa: E402
    OUT,
    TABLE,
    TRAIN,
    fit,
    macro,
    matrix,
    recorded_settings,
    vocabulary_of,
)

import processor._stance_spans as spans_module  # noqa: E402
import processor.stance_learned as reader_module  # noqa: E402
from processor.stance_learned import StanceReader, encode, parse_table  # noqa: E402


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--span-words", default=str(spans_module.SPAN_WORDS),
                        help="Comma-separated SPAN_WORDS values to score.")
    parser.add_argument("--span-probability", default=str(reader_module.SPAN_PROBABILITY),
                        help="Comma-separated SPAN_PROBABILITY values (1.01: no spans).")
    parser.add_argument("--splits", default=None,
                        help=f"Training splits (default: those of {'+'.join(TRAIN)} that exist).")
    args = parser.parse_args(argv)
    print("$ python bench/stance_span_cv.py "
          + " ".join(shlex.quote(arg) for arg in (argv if argv is not None else sys.argv[1:])))
    splits = args.splits or "+".join(name for name in TRAIN
                                     if (DATA / f"{name}.jsonl").exists())
    if {"test2", "test3"} & set(splits.split("+")):
        parser.error("test2 and test3 are report-only: never score settings on them")
    table = parse_table(TABLE.read_bytes(), str(TABLE))
    config, rule, least, plain, other = recorded_settings(OUT)
    scales = config.scales()
    if scales[2] or scales[4]:
        parser.error(f"{OUT} reads the patterns' findings: spans are not used by such weights")
    lines = load(splits)
    y = np.array([LABELS.index(line.stance) for line in lines])
    settings = list(dict.fromkeys((words, probability)
                                  for words in map(int, _floats(args.span_words))
                                  for probability in _floats(args.span_probability)))
    gold: dict[str, list[str]] = {"bare": [], "framed": []}
    said: dict[tuple[int, float], dict[str, list[str]]] = {
        key: {"bare": [], "framed": []} for key in settings}
    fold = folds(y, 0)
    for k in range(FOLDS):
        train = [int(i) for i in np.flatnonzero(fold != k)]
        held = [int(i) for i in np.flatnonzero(fold == k)]
        encoded = [encode(lines[i].text, table, patterns=False) for i in train]
        vocabulary = vocabulary_of(encoded, scales)
        w, b = fit(matrix(encoded, vocabulary, scales), y[train], config.lam)
        width = len(vocabulary)
        reader = StanceReader(tuple(LABELS), vocabulary, w[:width], w[width:], b, scales, rule,
                              least, plain, other, table)
        bare = [lines[i] for i in held]
        sets = {"bare": bare, "framed": framed(bare, "ordinary")}
        for name, part in sets.items():
            gold[name] += [line.stance for line in part]
        for words, probability in settings:
            spans_module.SPAN_WORDS = words
            reader_module.SPAN_PROBABILITY = probability
            for name, part in sets.items():
                said[words, probability][name] += [reader.read(line.text) for line in part]
        print(f"fold {k + 1}/{FOLDS} done", flush=True)
    print(f"\n{len(lines)} lines of {splits}, {FOLDS}-fold cross-validation; reader {rule}, "
          f"min_probability {least}, plain_probability {plain}, other_probability {other}")
    for (words, probability), found in said.items():
        cells = []
        for name in ("bare", "framed"):
            truth = [Line(str(i), "", stance) for i, stance in enumerate(gold[name])]
            result = score(name, truth, found[name], 0.0)
            traffic = macro(truth, found[name], np.ones(len(truth), dtype=bool), traffic=True)
            cells.append(f"{name} macro F1 {result.macro_f1:.3f} traffic {traffic:.3f} "
                         f"conflicting {result.recall['conflicting']:.2f} plain kept "
                         f"{result.recall['ordinary']:.2f}")
        print(f"SPAN_WORDS {words:>2} SPAN_PROBABILITY {probability:<4g}: " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
