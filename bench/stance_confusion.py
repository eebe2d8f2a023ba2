"""Benchmark: the user-stance detector against independently written, gold-labelled openings.

Reads ``bench/data/stance/*.jsonl`` (see its README: written without seeing the
detector; ``dev`` to ``dev11`` and ``test`` are development splits now,
``test2`` and ``test3`` are report-only) and prints, for the default reader
(:func:`processor.stance.classify_stance`: the learned reader of
:mod:`processor.stance_learned` with the patterns), for the patterns alone
(:func:`processor.stance.pattern_stance`) and for the old keyword list they replaced
(copied below as the baseline, measured in the same run):

* the confusion matrix, gold by predicted, over the 7 stances;
* per-class precision, recall and F1; macro F1; accuracy;
* CPU microseconds per ask (median of 5 passes over the split).

``--show-errors`` lists the lines the default reader gets wrong, and is refused for
``--split test2`` and ``test3`` so that the held-out texts are never read while developing.
``--split dev+dev2`` measures both development splits together (any ``+`` of development
splits works). ``--model SPEC`` also measures the
model-based classifier (:mod:`processor.stance_model`: the same instruction and strict
parsing; an unparseable answer falls back to the patterns, as in processing), with keys
from the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ...). ``--model builtin``
measures the offline model (:mod:`processor.stance_embed`: all-MiniLM-L6-v2 and a linear
head trained on dev + dev2 by ``bench/train_stance_head.py``; the ``embed`` extra), as
processing combines it with the patterns and the head alone, with its load time and
throughput (asks per second, wall clock, this machine).

    python bench/stance_confusion.py --split dev
    python bench/stance_confusion.py --split dev2 --show-errors
    python bench/stance_confusion.py --split test
    python bench/stance_confusion.py --split test2
    python bench/stance_confusion.py --split test --model openai:gpt-4o-mini
    python bench/stance_confusion.py --split test --model builtin
    python bench/stance_confusion.py --split test3 --framed tau2

``--framed tau2`` joins every line to a plain ask, as people write a first message (the
stance in a sentence or two, the ask in others): one of the tau2 stream's ask templates
(``tests/support/tau2_phrases.py``), before the line 40% of the time and after it
otherwise, three times per line with a fixed seed; ``--framed ordinary`` takes the
split's own ordinary lines as the asks (what the span threshold was chosen on, training
splits only). It also measures the reader without its span readings
(:data:`processor.stance_learned.SPAN_PROBABILITY`) in the same run, and
``--span-probability P`` sets that threshold for the run.

``--save-confusion`` writes the default reader's confusion counts on the (framed) split to
``processor/data/stance_confusion.json`` with the reader's digest: how the failure map tells
one group read as two stances from two groups (:mod:`processor._misreading`). Only a
development split the reader was not trained on is accepted, so the counts are out of
sample, and only framed, the shape of a first message:

    python bench/stance_confusion.py --split dev8 --framed tau2 --save-confusion
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import processor.stance_learned as stance_learned
from processor.stance import classify_stance, pattern_stance, stance_evidence
from processor.stance_embed import BUILTIN, load_builtin_model
from processor.stance_model import label_asks

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "stance"
CONFUSION_FILE = ROOT / "processor" / "data" / "stance_confusion.json"
LABELS = ("adversarial", "frustrated", "hurried", "unsure", "mistaken", "conflicting",
          "ordinary")

# The keyword list the detector had before issue 8 (processor/stance.py at b26fbef),
# kept here verbatim as the baseline.
_OLD_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("adversarial", ("ignore previous", "ignore your instructions", "ignore all previous",
                     "system prompt", "pretend you", "you are now", "jailbreak")),
    ("frustrated", ("!!!", "ridiculous", "third time", "unacceptable", "useless",
                    "fed up", "what is wrong with")),
    ("hurried", ("asap", "right now", "urgent", "quickly", "hurry", "immediately")),
    ("mistaken", ("i was told", "wasn't it", "i thought", "isn't it supposed")),
    ("unsure", ("not sure", "i think", "maybe", "don't know if", "possibly")),
    ("conflicting", ("but also", "and also cancel", "but keep", "or rather")),
)


def old_keywords(text: str) -> str:
    """The pre-issue-8 classifier: the first keyword list with a hit, else ordinary."""
    lowered = text.lower()
    for stance, keywords in _OLD_KEYWORDS:
        if any(keyword in lowered for keyword in keywords):
            return stance
    return "ordinary"


@dataclass(frozen=True)
class Line:
    """One gold-labelled opening."""

    id: str
    """``d-NNNN`` or ``t-NNNN``."""
    text: str
    """What the person wrote."""
    stance: str
    """The gold label."""


@dataclass(frozen=True)
class Scores:
    """One classifier's results on one split."""

    name: str
    """Which classifier."""
    matrix: dict[str, dict[str, int]]
    """gold → predicted → count."""
    precision: dict[str, float]
    """Per label."""
    recall: dict[str, float]
    """Per label."""
    f1: dict[str, float]
    """Per label."""
    macro_f1: float
    """Mean of the per-label F1."""
    accuracy: float
    """Share of lines predicted right."""
    microseconds: float
    """Median time per ask over 5 passes."""


SPLITS = ("dev", "dev2", "dev3", "dev4", "dev6", "dev7", "dev8", "dev9", "dev10", "dev11",
          "dev10+dev11", "dev+dev2",
          "dev+dev2+test+dev3+dev4", "dev+dev2+test+dev3+dev4+dev6",
          "dev+dev2+test+dev3+dev4+dev6+dev7", "dev+dev2+test+dev3+dev4+dev6+dev7+dev8", "test",
          "test2", "test3")
"""What ``--split`` accepts: a file of ``DATA``, or development files together."""
HELD_OUT = ("test2", "test3")
"""Report-only splits: never tune on them, never list their errors."""


def load(split: str) -> list[Line]:
    """The lines of one split (``a+b``: the lines of both)."""
    rows = []
    for name in split.split("+"):
        with (DATA / f"{name}.jsonl").open(encoding="utf-8") as handle:
            rows += [json.loads(line) for line in handle if line.strip()]
    return [Line(row["id"], row["text"], row["stance"]) for row in rows]


FRAMINGS = 3
"""How many framed copies of each line ``--framed`` makes."""


def framed(lines: Sequence[Line], asks_from: str) -> list[Line]:
    """Each line joined to a plain ask (see the module), :data:`FRAMINGS` times."""
    if asks_from == "tau2":
        from tests.support.tau2_phrases import ASKS

        fill = {"bill": "B1234321", "cid": "C1001", "date": "2024-05-20",
                "destination": "SFO", "detail": "the seat", "gb": "2", "last4": "2002",
                "lid": "L1002", "name": "Mia Li", "origin": "JFK", "phone": "555-123-2002",
                "rid": "8JX2WO", "summary": "my data is slow", "uid": "mia_li_3668",
                "value": "2"}
        asks = [ask.format_map(fill) for options in ASKS.values() for ask in options]
    else:
        asks = [line.text for line in lines if line.stance == "ordinary"]
    rng = random.Random(0)
    out = []
    for line in lines:
        for number in range(FRAMINGS):
            ask = rng.choice(asks)
            text = f"{ask} {line.text}" if rng.random() < 0.4 else f"{line.text} {ask}"
            out.append(Line(f"{line.id}/{number}", text, line.stance))
    return out


def measure(name: str, classify: Callable[[str], str], lines: Sequence[Line]) -> Scores:
    """Confusion matrix and scores of ``classify`` on ``lines``."""
    predicted = [classify(line.text) for line in lines]
    timings = []
    for attempt in range(5):  # CPU time: the machine may be shared
        started = time.process_time()
        for line in lines:
            classify(line.text + " " * (attempt + 1))  # a new string: no memo
        timings.append((time.process_time() - started) / max(1, len(lines)) * 1e6)
    return score(name, lines, predicted, statistics.median(timings))


def score(name: str, lines: Sequence[Line], predicted: Sequence[str],
          microseconds: float) -> Scores:
    """Confusion matrix and scores of ``predicted`` against the gold labels."""
    matrix = {gold: dict.fromkeys(LABELS, 0) for gold in LABELS}
    for line, guess in zip(lines, predicted, strict=True):
        matrix[line.stance][guess] += 1
    precision, recall, f1 = {}, {}, {}
    for label in LABELS:
        hits = matrix[label][label]
        said = sum(matrix[gold][label] for gold in LABELS)
        real = sum(matrix[label].values())
        precision[label] = hits / said if said else 0.0
        recall[label] = hits / real if real else 0.0
        both = precision[label] + recall[label]
        f1[label] = 2 * precision[label] * recall[label] / both if both else 0.0
    right = sum(matrix[label][label] for label in LABELS)
    return Scores(name, matrix, precision, recall, f1, statistics.fmean(f1.values()),
                  right / max(1, len(lines)), microseconds)


def measure_model(spec: str, lines: Sequence[Line], environ: dict[str, str]) -> Scores:
    """The model classifier's scores (unparseable or missing answers: the patterns')."""
    started = time.perf_counter()
    answers, error = label_asks(spec, environ, [line.text for line in lines])
    seconds = time.perf_counter() - started
    predicted = [answer[0] if answer is not None and answer[0] is not None
                 else classify_stance(line.text) for line, answer in zip(lines, answers,
                                                                         strict=True)]
    unparseable = sum(1 for answer in answers if answer is not None and answer[0] is None)
    missing = sum(1 for answer in answers if answer is None)
    print(f"model {spec}: {len(lines) - missing} answered, {unparseable} unparseable, "
          f"{missing} not answered" + (f" (DEGRADED: {error})" if error else ""))
    return score(f"model {spec} (patterns where it gave no label)", lines, predicted,
                 seconds / max(1, len(lines)) * 1e6)


def measure_builtin(lines: Sequence[Line]) -> tuple[Scores, Scores] | None:
    """The built-in model's scores as processing uses it, and the head's alone (None, with
    the reason printed, when the ``embed`` extra is missing)."""
    started = time.perf_counter()
    model, why = load_builtin_model()
    loaded = time.perf_counter() - started
    if model is None:
        print(f"model {BUILTIN}: DEGRADED, not measured: {why}")
        return None
    texts = [line.text for line in lines]
    model.label(texts[:8])  # warm up (first-call allocations)
    started, cpu = time.perf_counter(), time.process_time()
    found = model.label(texts)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"model {BUILTIN}: {model.head.embedder}, head min_probability "
          f"{model.head.min_probability}; loaded in {loaded:.1f} s; labelled {len(texts)} asks "
          f"in {seconds:.1f} s wall ({len(texts) / max(seconds, 1e-9):.0f} asks/s; "
          f"{cpu:.1f} s CPU, {os.cpu_count()} cores)")
    per_ask = seconds / max(1, len(lines)) * 1e6
    return (score(f"model {BUILTIN} (patterns unless ordinary, then the head)", lines,
                  [label.label for label in found], per_ask),
            score(f"model {BUILTIN}: head alone", lines, [label.head for label in found],
                  per_ask))


def render(scores: Scores, lines: int) -> str:
    """The matrix and the per-class table as text."""
    short = {label: label[:5] for label in LABELS}
    out = [f"== {scores.name}: {lines} lines, accuracy {scores.accuracy:.3f}, "
           f"macro F1 {scores.macro_f1:.3f}, {scores.microseconds:.1f} µs/ask",
           "gold \\ predicted " + " ".join(f"{short[label]:>6}" for label in LABELS)]
    for gold in LABELS:
        out.append(f"{gold:<17}" + " ".join(f"{scores.matrix[gold][label]:>6}"
                                            for label in LABELS))
    out.append(f"{'':<17}{'prec':>7}{'recall':>8}{'F1':>7}{'support':>9}")
    for label in LABELS:
        out.append(f"{label:<17}{scores.precision[label]:>7.3f}{scores.recall[label]:>8.3f}"
                   f"{scores.f1[label]:>7.3f}{sum(scores.matrix[label].values()):>9}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=SPLITS, default="dev",
                        help="Which split (develop on dev to dev8 and test; "
                             "report on test2 and test3).")
    parser.add_argument("--show-errors", action="store_true",
                        help="List the misclassified lines (development splits only).")
    parser.add_argument("--model", metavar="SPEC",
                        help="Also measure a model classifier (builtin: the offline "
                             "MiniLM + linear head of the embed extra; openai:gpt-4o-mini, "
                             "ollama:MODEL, vllm:MODEL@URL; keys from the environment).")
    parser.add_argument("--framed", choices=("tau2", "ordinary"),
                        help="Join each line to a plain ask (tau2: the stream's ask templates; "
                             "ordinary: the split's own ordinary lines) and also measure the "
                             "reader without its span readings.")
    parser.add_argument("--save-confusion", action="store_true",
                        help="Write the default reader's confusion counts on this split to "
                             f"{CONFUSION_FILE.relative_to(ROOT)} (a development split the "
                             "reader was not trained on, with --framed).")
    parser.add_argument("--span-probability", type=float, metavar="P",
                        help="The reader's span threshold for this run (default: "
                             f"{stance_learned.SPAN_PROBABILITY}).")
    args = parser.parse_args(argv)
    print("$ python bench/stance_confusion.py "
          + " ".join(shlex.quote(arg) for arg in (argv if argv is not None else sys.argv[1:])))
    if args.show_errors and set(args.split.split("+")) & set(HELD_OUT):
        parser.error("--show-errors reads the texts: use it on the development splits only "
                     "(--split dev to dev8, test or a + of them)")
    if args.save_confusion:
        from train_stance_reader import TRAIN

        trained = set(args.split.split("+")) & {*TRAIN, *HELD_OUT}
        if trained or not args.framed or args.span_probability is not None:
            parser.error("--save-confusion needs --framed, the shipped span threshold and "
                         "development splits the reader was not trained on (not "
                         f"{', '.join(sorted({*TRAIN, *HELD_OUT}))}); e.g. --split dev8 "
                         "--framed tau2")
    lines = load(args.split)
    if args.span_probability is not None:
        stance_learned.SPAN_PROBABILITY = args.span_probability
    if args.framed:
        lines = framed(lines, args.framed)
        reader = stance_learned.load_reader()
        whole = measure("reader reading the whole ask only (no spans)",
                        lambda text: reader.read(text, spans=False),
                        lines)
        print(render(whole, len(lines)))
        print()
    current = measure("reader (processor.stance: learned + patterns)", classify_stance, lines)
    patterns = measure("patterns alone (processor.stance.pattern_stance)", pattern_stance,
                       lines)
    baseline = measure("keywords (old)", old_keywords, lines)
    print(render(current, len(lines)))
    print()
    print(render(patterns, len(lines)))
    print()
    print(render(baseline, len(lines)))
    print()
    if args.model:
        models: list[tuple[str, Scores]] = []  # (summary tag, scores)
        if args.model.strip() == BUILTIN:
            builtin = measure_builtin(lines)
            if builtin:
                models = [(f"model {BUILTIN}", builtin[0]),
                          (f"model {BUILTIN} head alone", builtin[1])]
        else:
            models = [("model", measure_model(args.model, lines, dict(os.environ)))]
        for _, model in models:
            print(render(model, len(lines)))
            print()
        for tag, model in models:
            print(f"summary {args.split} {tag}: macro F1 {model.macro_f1:.3f}; "
                  f"adversarial recall {model.recall['adversarial']:.3f} precision "
                  f"{model.precision['adversarial']:.3f}; accuracy {model.accuracy:.3f}")
    print(f"summary {args.split}: macro F1 {current.macro_f1:.3f} "
          f"(patterns alone {patterns.macro_f1:.3f}, keywords {baseline.macro_f1:.3f}); "
          f"adversarial recall {current.recall['adversarial']:.3f} precision "
          f"{current.precision['adversarial']:.3f} (keywords {baseline.recall['adversarial']:.3f}"
          f" / {baseline.precision['adversarial']:.3f}); accuracy {current.accuracy:.3f} "
          f"(keywords {baseline.accuracy:.3f})")
    if args.framed:
        print(f"summary {args.split} framed ({args.framed} asks): macro F1 "
              f"{current.macro_f1:.3f}, ordinary recall {current.recall['ordinary']:.3f}; "
              f"reading the whole ask only: macro F1 {whole.macro_f1:.3f}, ordinary recall "
              f"{whole.recall['ordinary']:.3f}")
    if args.save_confusion:
        CONFUSION_FILE.write_bytes(orjson.dumps({
            "reader": stance_learned.reader_digest(), "split": args.split,
            "framed": args.framed, "lines": len(lines), "counts": current.matrix},
            option=orjson.OPT_INDENT_2) + b"\n")
        print(f"wrote {CONFUSION_FILE.relative_to(ROOT)} (reader "
              f"{stance_learned.reader_digest()}, {len(lines)} framed lines of {args.split})")
    if args.show_errors:
        print()
        for line in lines:
            guess = classify_stance(line.text)
            if guess != line.stance:
                why = ", ".join(f"{name}:{weight:g}" for _, name, weight in
                                stance_evidence(line.text))
                print(f"{line.id} gold={line.stance} got={guess} "
                      f"patterns={pattern_stance(line.text)} [{why}] {line.text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
