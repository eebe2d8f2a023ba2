"""Train the built-in stance head (``--stance-model builtin``) on the development splits.

Embeds every line of ``bench/data/stance/dev.jsonl`` and ``dev2.jsonl`` (never
``test.jsonl``) with the bundled all-MiniLM-L6-v2 (the ``embed`` extra), fits a multinomial
logistic head (class-balanced, L2 penalty ``lam``; plain numpy: accelerated gradient
descent, a fixed number of steps, so the result is deterministic), and chooses ``lam`` and
the rule's ``min_probability`` (:meth:`processor.stance_embed.StanceHead.decide`: a
non-ordinary pattern result is kept; a pattern ``ordinary`` becomes the head's label when
its probability reaches ``min_probability``) by stratified 5-fold cross-validation on
dev + dev2, repeated with 3 shuffles (macro F1, mean over the repeats). It prints the grid
and the cross-validated figures of the head alone, the patterns alone and the chosen rule,
then writes ``processor/data/stance_head.json`` (rounded weights: the same inputs give the
same file).

The patterns were tuned on these same lines, so cross-validation flatters them and every
rule that trusts them; the honest comparison is ``stance_confusion.py --split test --model
builtin``, run once.

    python bench/train_stance_head.py            # writes processor/data/stance_head.json
    python bench/train_stance_head.py --check    # fails when the committed file differs
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one thread: the same sums in the same order

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from stance_confusion import DATA, LABELS, Scores, load, render, score  # noqa: E402

from processor.stance import classify_stance  # noqa: E402
from processor.stance_embed import parse_head  # noqa: E402

OUT = ROOT / "processor" / "data" / "stance_head.json"
SPLITS = ("dev", "dev2")
"""What the head is trained on (never ``test``)."""
LAMS = (1e-5, 1e-4, 3e-4, 1e-3)
"""L2 penalties tried."""
THRESHOLDS = (0.4, 0.5, 0.6, 0.7, 0.8)
"""``min_probability`` values tried."""
FOLDS = 5
REPEATS = 3
STEPS = 1500
"""Gradient steps per fit."""
DIGITS = 6
"""Significant digits kept in the file."""


def fit(x: np.ndarray, y: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(weights, bias) of a class-balanced multinomial logistic regression with an L2
    penalty on the weights: Nesterov's accelerated gradient on centred inputs."""
    classes = len(LABELS)
    mean = x.mean(axis=0)
    centred = x - mean
    target = np.eye(classes)[y]
    counts = np.bincount(y, minlength=classes).astype(np.float64)
    weight = 1.0 / counts[y]
    weight /= weight.sum()
    # a bound on the curvature: half the weighted second moment, the penalty, the bias
    lipschitz = 0.5 * float(np.linalg.eigvalsh((centred * weight[:, None]).T @ centred).max())
    lipschitz += lam + 0.5
    step = 1.0 / lipschitz
    ratio = np.sqrt(lam / lipschitz)
    momentum = (1 - ratio) / (1 + ratio)
    w = np.zeros((x.shape[1], classes))
    b = np.zeros(classes)
    w_prev, b_prev = w, b
    for _ in range(STEPS):
        vw = w + momentum * (w - w_prev)
        vb = b + momentum * (b - b_prev)
        probabilities = _softmax(centred @ vw + vb)
        residual = (probabilities - target) * weight[:, None]
        w_prev, b_prev = w, b
        w = vw - step * (centred.T @ residual + lam * vw)
        b = vb - step * residual.sum(axis=0)
    return w, b - mean @ w


def _softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(logits)
    result: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
    return result


def folds(y: np.ndarray, seed: int) -> np.ndarray:
    """A stratified fold number per line."""
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(y), dtype=int)
    for label in range(len(LABELS)):
        members = np.flatnonzero(y == label)
        rng.shuffle(members)
        fold[members] = np.arange(len(members)) % FOLDS
    return fold


def combine(probabilities: np.ndarray, patterns: Sequence[str], threshold: float) -> list[str]:
    """The rule of :meth:`processor.stance_embed.StanceHead.decide`, over many asks."""
    best = probabilities.argmax(axis=1)
    out = []
    for row, index, pattern in zip(probabilities, best, patterns, strict=True):
        if pattern != "ordinary":
            out.append(pattern)
        else:
            out.append(LABELS[index] if row[index] >= threshold else "ordinary")
    return out


def mean_scores(name: str, runs: Sequence[Scores]) -> Scores:
    """The mean of several scorings of the same lines (matrix: summed over the runs)."""
    matrix = {gold: {label: sum(run.matrix[gold][label] for run in runs) for label in LABELS}
              for gold in LABELS}

    def avg(pick: str) -> dict[str, float]:
        return {label: float(np.mean([getattr(run, pick)[label] for run in runs]))
                for label in LABELS}

    return Scores(name, matrix, avg("precision"), avg("recall"), avg("f1"),
                  float(np.mean([run.macro_f1 for run in runs])),
                  float(np.mean([run.accuracy for run in runs])), 0.0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT,
                        help="Where to write the head (default processor/data/stance_head.json).")
    parser.add_argument("--check", action="store_true",
                        help="Write nothing; exit 1 when --out differs from what training gives.")
    args = parser.parse_args(argv)
    print("$ python bench/train_stance_head.py "
          + " ".join(shlex.quote(arg) for arg in (argv if argv is not None else sys.argv[1:])))
    from generator.decontaminate import load_builtin_embedder

    embedder, why = load_builtin_embedder()
    if embedder is None:
        print(f"cannot train: {why}", file=sys.stderr)
        return 2
    lines = load("+".join(SPLITS))
    y = np.array([LABELS.index(line.stance) for line in lines])
    patterns = [classify_stance(line.text) for line in lines]
    started = time.perf_counter()
    x = np.asarray(embedder([line.text for line in lines]), dtype=np.float64)
    print(f"embedded {len(lines)} lines of {'+'.join(SPLITS)} in "
          f"{time.perf_counter() - started:.1f} s ({embedder.stamp})")

    held_out: dict[float, list[np.ndarray]] = {}  # lam -> per repeat, out-of-fold probabilities
    for lam in LAMS:
        for repeat in range(REPEATS):
            fold = folds(y, repeat)
            probabilities = np.zeros((len(y), len(LABELS)))
            for k in range(FOLDS):
                w, b = fit(x[fold != k], y[fold != k], lam)
                probabilities[fold == k] = _softmax(x[fold == k] @ w + b)
            held_out.setdefault(lam, []).append(probabilities)

    def rule_scores(lam: float, threshold: float) -> Scores:
        return mean_scores(f"cv: patterns unless ordinary, head p>={threshold} (lam {lam:g})",
                           [score("", lines, combine(p, patterns, threshold), 0.0)
                            for p in held_out[lam]])

    print(f"\ncross-validated macro F1 on dev+dev2 ({FOLDS} folds x {REPEATS} shuffles), "
          "rule: patterns unless ordinary, then the head from p >= threshold")
    print("lam       head  " + " ".join(f"p>={t:<4}" for t in THRESHOLDS))
    grid: dict[tuple[float, float], float] = {}
    for lam in LAMS:
        head = mean_scores("", [score("", lines, [LABELS[i] for i in p.argmax(axis=1)], 0.0)
                                for p in held_out[lam]])
        row = []
        for threshold in THRESHOLDS:
            grid[lam, threshold] = rule_scores(lam, threshold).macro_f1
            row.append(f"{grid[lam, threshold]:.3f} ")
        print(f"{lam:<8g} {head.macro_f1:.3f}  " + "  ".join(row))
    lam, threshold = max(grid, key=lambda key: (round(grid[key], 6), key[1], key[0]))
    print(f"chosen: lam {lam:g}, min_probability {threshold}")
    print()
    head = mean_scores(f"cv: head alone (lam {lam:g})",
                       [score("", lines, [LABELS[i] for i in p.argmax(axis=1)], 0.0)
                        for p in held_out[lam]])
    print(render(score("patterns (tuned on these lines)", lines, patterns, 0.0), len(lines)))
    print()
    print(render(head, len(lines)) + "\n(matrix: summed over the shuffles)")
    print()
    print(render(rule_scores(lam, threshold), len(lines)) + "\n(matrix: summed over the shuffles)")

    w, b = fit(x, y, lam)
    digests = {name: hashlib.sha256((DATA / f"{name}.jsonl").read_bytes()).hexdigest()[:16]
               for name in SPLITS}
    document = {
        "format": "tracemill stance head 1",
        "embedder": embedder.stamp,
        "dimensions": int(x.shape[1]),
        "labels": list(LABELS),
        "min_probability": threshold,
        "lam": lam,
        "trained_on": {f"bench/data/stance/{name}.jsonl": digest
                       for name, digest in digests.items()},
        "cv_macro_f1": round(grid[lam, threshold], 4),
        "bias": [float(f"{value:.{DIGITS}g}") for value in b],
        "weights": [[float(f"{value:.{DIGITS}g}") for value in row] for row in w],
    }
    text = json.dumps(document, indent=None, separators=(",", ":")).replace("],[", "],\n[")
    text += "\n"
    parse_head(json.loads(text), str(args.out))  # what the processor will load
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'DIFFERS from a fresh training'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.encode()) // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
