"""Benchmark: does the history axis read an earlier contact where people say one, and only there?

Reads ``bench/data/history/*.jsonl`` (see its README: first messages to a support agent
written by two independent authors who never saw the cues, each labelled ``contact``: the
person says they were in touch with the company before about the matter). ``dev`` is for
developing the cue, ``test`` is report-only (``--show-errors`` is refused for it). For
the cue the history axis reads (:data:`processor._history_cues.REPEAT_CONTACT`) and, as the
baseline in the same run, the cue it replaced (any "again", "last time", "still not",
"second time", "already contacted": :data:`processor._history_cues.READER_CUES`), it prints:

* precision, recall and F1 of ``repeat_visit`` against the label, on the lines alone and
  framed (``--framed``, default on: each line joined to one of the tau2 stream's plain
  asks, before or after it, three times, as ``bench/stance_confusion.py --framed tau2``
  does);
* how the whole history axis (:func:`processor.axes.situate`, no other turns) reads the
  lines: an ask that says an earlier attempt failed is ``prior_failure``, read first;
* how many of the tau2 stream's plain asks (``tests/support/tau2_phrases.py``), alone,
  read as an earlier contact: none say one.

    python bench/history_cues.py --split dev --show-errors
    python bench/history_cues.py --split test
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stance_confusion import Line, framed

from processor._history_cues import READER_CUES, REPEAT_CONTACT
from processor.axes import situate

DATA = Path(__file__).resolve().parent / "data" / "history"
SPLITS = ("dev", "test")
REPORT_ONLY = ("test",)
CONTACT, NONE = "contact", "none"
OLD_REPEAT = READER_CUES[2]
"""The contact cue before this benchmark: any "again", "last time", "still not", ..."""


@dataclass(frozen=True)
class Scores:
    true_positive: int
    false_positive: int
    false_negative: int
    lines: int

    @property
    def precision(self) -> float:
        said = self.true_positive + self.false_positive
        return self.true_positive / said if said else 0.0

    @property
    def recall(self) -> float:
        real = self.true_positive + self.false_negative
        return self.true_positive / real if real else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def line(self, name: str) -> str:
        return (f"  {name:34s} precision {self.precision:.3f} "
                f"({self.true_positive}/{self.true_positive + self.false_positive})  "
                f"recall {self.recall:.3f} "
                f"({self.true_positive}/{self.true_positive + self.false_negative})  "
                f"F1 {self.f1:.3f}")


def load(split: str) -> list[Line]:
    """The labelled lines of ``split`` (``dev+test`` joins splits)."""
    lines = []
    for name in split.split("+"):
        with (DATA / f"{name}.jsonl").open(encoding="utf-8") as handle:
            for row in map(json.loads, filter(str.strip, handle)):
                lines.append(Line(row["id"], row["text"], CONTACT if row["contact"] else NONE))
    return lines


def score(lines: Sequence[Line], cue: re.Pattern[str]) -> Scores:
    said = [bool(cue.search(line.text)) for line in lines]
    real = [line.stance == CONTACT for line in lines]
    return Scores(sum(s and r for s, r in zip(said, real, strict=True)),
                  sum(s and not r for s, r in zip(said, real, strict=True)),
                  sum(r and not s for s, r in zip(said, real, strict=True)), len(lines))


def axis_reading(lines: Sequence[Line]) -> dict[str, Counter[str]]:
    """Label → how the whole history axis reads its lines."""
    out: dict[str, Counter[str]] = {CONTACT: Counter(), NONE: Counter()}
    for line in lines:
        out[line.stance][situate(first_ask=line.text, user_turns=(), steps=(),
                                    policy_rule="unspecified").history] += 1
    return out


def template_asks() -> list[str]:
    """The tau2 stream's plain asks, filled as ``bench/stance_confusion.py`` fills them."""
    from tests.support.tau2_phrases import ASKS

    fill = {"bill": "B1234321", "cid": "C1001", "date": "2024-05-20", "destination": "SFO",
            "detail": "the seat", "gb": "2", "last4": "2002", "lid": "L1002",
            "name": "Mia Li", "origin": "JFK", "phone": "555-123-2002", "rid": "8JX2WO",
            "summary": "my data is slow", "uid": "mia_li_3668", "value": "2"}
    return [ask.format_map(fill) for options in ASKS.values() for ask in options]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev",
                        help="dev (develop), test (report only), or dev+test")
    parser.add_argument("--show-errors", action="store_true",
                        help="List the lines the cue reads wrongly (development split only).")
    parser.add_argument("--no-framed", action="store_true",
                        help="Skip the framed measurement.")
    args = parser.parse_args(argv)
    names = args.split.split("+")
    if unknown := [name for name in names if name not in SPLITS]:
        parser.error(f"unknown split {', '.join(unknown)}: choose from {', '.join(SPLITS)}")
    if args.show_errors and any(name in REPORT_ONLY for name in names):
        parser.error("--show-errors reads the lines: only for the development split (dev)")
    print("$ python bench/history_cues.py " + " ".join(map(shlex.quote, argv or sys.argv[1:])))
    lines = load(args.split)
    contacts = sum(line.stance == CONTACT for line in lines)
    print(f"{args.split}: {len(lines)} lines, {contacts} say an earlier contact")
    print(score(lines, REPEAT_CONTACT).line("contact cue (history axis)"))
    print(score(lines, OLD_REPEAT).line("baseline: the earlier cue"))
    if not args.no_framed:
        joined = framed(lines, "tau2")
        print(f"framed with the tau2 stream's asks ({len(joined)} lines):")
        print(score(joined, REPEAT_CONTACT).line("contact cue (history axis)"))
        print(score(joined, OLD_REPEAT).line("baseline: the earlier cue"))
    print("the whole history axis, lines alone:")
    for label, counts in axis_reading(lines).items():
        print(f"  {label:8s} " + ", ".join(f"{value} {n}" for value, n in counts.most_common()))
    asks = template_asks()
    print(f"tau2 stream asks read as an earlier contact: "
          f"{sum(bool(REPEAT_CONTACT.search(a)) for a in asks)} of {len(asks)} "
          f"(baseline {sum(bool(OLD_REPEAT.search(a)) for a in asks)})")
    if args.show_errors:
        for line in lines:
            said = bool(REPEAT_CONTACT.search(line.text))
            if said != (line.stance == CONTACT):
                kind = "missed" if not said else "false "
                print(f"  {kind} {line.id}: {line.text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
