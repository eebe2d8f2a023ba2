"""Benchmark: does the failure map find the planted situations, and only them?

Two corpora:

``--corpus tau2`` (default)
    A production-shaped stream built from tau2-bench's airline and telecom worlds
    (tests/support/tau2_stream.py: real tool results replayed against the real tau2
    environments, failures reported in result bodies on OK spans, timeouts and permission
    errors on failed spans, retries, stance openings from ``--openings`` (default the
    held-out ``bench/data/stance/test.jsonl``; ``dev+dev2`` while tuning so that
    tuning never reads held-out sentences; ``test2`` for reports), background failures
    of 5-12% everywhere, two instrumentation layouts through the real OpenTelemetry SDK,
    two model versions).
    Five situations are planted per seed (at least one new, one persistent, one fixed).
    Each stream is stored through the collector's real pipeline, ``process()`` runs, and
    the ``situations`` / ``situation_members`` tables are compared with the planted truth.

``--corpus synthetic``
    The project's own synthetic stream (tests/support/synthetic.py, six planted pair
    cells), compared cell by cell with the ``failure_map`` table as before.

**Matching rule (tau2).** Every planted situation has a *deciding period*: the latest
model version for new and persistent, the previous one for fixed (where its failures
are). A reported situation *matches* a planted one when their failing members in that
period overlap with Jaccard >= 0.5 (the reported side's failing members are its own
``situation_members`` rows of that period with ``failed``: ``own``, outside the situations
it was judged without; ``--members all`` scores every row, as reports did before). A
match is *correct* when the reported status equals the planted status. Then, per status s:

* recall(s): planted situations of status s with a correct match;
* precision(s): reported situations of status s that correctly match a planted one
  (every reported situation of status s that does not is a false alarm; a second report
  of the same planted situation counts as correct here and shows in "exactly one");
* exactly one: planted situations matched by exactly one reported situation of status
  new, persistent or fixed (uncertain ones are not counted as reports). The total says how
  many of the others were matched by none (missed) and how many by two or more (one
  situation reported as several rows, what the issue's "exactly one" is about);
* flagged supersets: reported situations of status new, persistent or fixed that are not
  a correct match of any planted situation and whose own members (all periods) hold at least
  90% of a planted situation's members and at least 1.5 times as many conversations;
* missed but named exactly (a diagnostic, not a target): planted situations without a
  correct match that a report names by exactly their coordinates, with their status, yet
  whose failing members overlap it less than 0.5: mostly a stance group read right for
  about half of its members (the seed's lines show each as "not reported" and the report
  as "unmatched");
* named as planted (a diagnostic, not a target): correct matches whose report is named by
  exactly the planted coordinates; the generator aims at a situation's coordinates, so a
  name by a coordinate that states nothing (``world_state=unknown``) aims at nothing;
* target budget on planted: a generation plan of ``--rollouts`` is made from the store
  with the real planner (``generator.plan.load_plan_inputs`` + ``build_plan``, nothing
  simulated); the share of its *target* rollouts whose source conversations include a
  member of a planted new or persistent situation.

Printed per seed and micro-averaged over seeds, after the exact command line. Each seed
also prints, per axis, how many conversations the processor reads as they were built
(the focal tool, the tool condition, world state and stance the corpus fixed): a
diagnostic of where a miss comes from, not a target.

    python bench/processor_precision.py --corpus tau2 --seeds 0,1,2,3,4        # dev seeds
    python bench/processor_precision.py --corpus tau2 --seeds 100,101,102,103,104  # report
    python bench/processor_precision.py --corpus synthetic --seeds 0-9 --per-version 400

Seeds 0-99 are for tuning; report figures come from seeds 100+ that nobody tuned on.
``--stance-model SPEC`` (``builtin``, ``openai:MODEL``, ...) is handed to ``process()``
(keys from the environment); default: the pattern stance only.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from processor.run import ProcessOptions, process
from tests.support.pipeline import store_requests
from tracemill.store import Store, open_store

if TYPE_CHECKING:
    from tests.support.tau2_stream import Expected, PlantedSituation

STATUSES = ("new", "persistent", "fixed")
JACCARD = 0.5
SUPERSET_COVER = 0.9
SUPERSET_GROWTH = 1.5


# --------------------------------------------------------------------------- tau2 corpus


@dataclass(frozen=True)
class _Reported:
    situation_id: str
    label: str
    status: str
    members: frozenset[str]
    failing: dict[str, frozenset[str]]  # period -> failing members


@dataclass
class Tally:
    """Counts of one seed (or summed over seeds)."""

    hits: Counter[str] = field(default_factory=Counter)
    """Planted situations of each status with a correct match."""
    planted: Counter[str] = field(default_factory=Counter)
    """Planted situations per status."""
    correct_reports: Counter[str] = field(default_factory=Counter)
    """Reported situations of each status that correctly match a planted one."""
    reported: Counter[str] = field(default_factory=Counter)
    """Reported situations per status (uncertain included)."""
    exactly_one: int = 0
    """Planted situations matched by exactly one flagged report."""
    several: int = 0
    """Planted situations matched by two or more flagged reports (one situation reported
    as several: what "exactly one" guards against; the others that miss it have none)."""
    supersets: int = 0
    """Flagged reports that are supersets of a planted situation."""
    named_as_planted: int = 0
    """Planted situations with a correct match named by exactly their coordinates (a
    diagnostic: the generator aims at a situation's coordinates)."""
    named_only: int = 0
    """Planted situations without a correct match reported under exactly their coordinates
    with their status (a diagnostic, not a target: mostly stance groups whose members were
    too often read as another stance)."""
    target_rollouts: int = 0
    """Target rollouts of the plan."""
    target_on_planted: int = 0
    """Those whose sources hold a planted new/persistent member."""
    notes: list[str] = field(default_factory=list)
    """What went wrong (a plan that could not be made, ...)."""

    def add(self, other: Tally) -> None:
        self.hits.update(other.hits)
        self.planted.update(other.planted)
        self.correct_reports.update(other.correct_reports)
        self.reported.update(other.reported)
        self.exactly_one += other.exactly_one
        self.several += other.several
        self.supersets += other.supersets
        self.named_only += other.named_only
        self.named_as_planted += other.named_as_planted
        self.target_rollouts += other.target_rollouts
        self.target_on_planted += other.target_on_planted


def _remove_store(db: Path) -> None:
    """Remove a store kept by an earlier run (its WAL and spool too)."""
    for stale in (db, db.with_name(db.name + ".wal")):
        stale.unlink(missing_ok=True)
    shutil.rmtree(db.with_name(db.name + ".spool"), ignore_errors=True)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _deciding(planted: PlantedSituation,
              versions: tuple[str, str]) -> tuple[str, frozenset[str]]:
    """The planted situation's deciding period and its failing members in it."""
    period = "previous" if planted.status == "fixed" else "latest"
    version = versions[0] if period == "previous" else versions[1]
    failed = set(planted.failed)
    return period, frozenset(c for c in planted.members_by_version[version] if c in failed)


def _same_name(label: str, other: str) -> bool:
    return set(label.split(" & ")) == set(other.split(" & "))


def _superset(members: frozenset[str], planted: Sequence[str]) -> bool:
    inside = frozenset(planted)
    return len(members & inside) >= SUPERSET_COVER * len(inside) and \
        len(members) >= SUPERSET_GROWTH * len(inside)


def _reported(store: Store, members_of: str = "own") -> list[_Reported]:
    """The stored situations with their own members (``members_of="all"``: every member)."""
    rows = store.query("SELECT situation_id, label, status FROM situations ORDER BY priority DESC")
    members: dict[str, set[str]] = {}
    failing: dict[str, dict[str, set[str]]] = {}
    for situation_id, conversation_id, period, failed in store.query(
            "SELECT situation_id, conversation_id, period, failed FROM situation_members "
            "WHERE ? OR coalesce(own, true)", [members_of == "all"]):
        members.setdefault(situation_id, set()).add(conversation_id)
        if failed and period is not None:
            failing.setdefault(situation_id, {}).setdefault(period, set()).add(conversation_id)
    return [_Reported(sid, label, status, frozenset(members.get(sid, ())),
                      {p: frozenset(ids) for p, ids in failing.get(sid, {}).items()})
            for sid, label, status in rows]


def _readings(store: Store, expected: Mapping[str, Expected]) -> dict[str, tuple[int, int]]:
    """Per axis: conversations whose stored value is the one built in, of those that
    state one (a diagnostic: where the processor's reading and the corpus disagree)."""
    columns = ("tool", "tool_condition", "world_state", "user_stance")
    stored = {row[0]: dict(zip(columns, row[1:], strict=True)) for row in store.query(
        "SELECT conversation_id, tool, tool_condition, world_state, user_stance "
        "FROM conversations")}
    counts = {axis: [0, 0] for axis in columns}
    for conversation_id, built in expected.items():
        got = stored.get(conversation_id, {})
        for axis, value in built.coordinates.items():
            counts[axis][1] += 1
            counts[axis][0] += got.get(axis) == value
    return {axis: (good, seen) for axis, (good, seen) in counts.items()}


def _plan_share(store: Store, planted_members: frozenset[str], rollouts: int,
                tally: Tally) -> None:
    from generator.errors import NothingToPlan
    from generator.plan import PlanOptions, build_plan, load_plan_inputs

    try:
        with store.transaction() as cursor:
            inputs = load_plan_inputs(cursor)
        plan = build_plan(inputs, rollouts, PlanOptions(seed=0))
    except NothingToPlan as error:
        tally.notes.append(f"no plan: {error}")
        return
    for item in plan.items:
        if item.purpose != "target":
            continue
        tally.target_rollouts += 1
        if planted_members.intersection(item.source_conversations):
            tally.target_on_planted += 1


def measure_tau2(seed: int, conversations: int, rollouts: int, work: Path,
                 verbose: bool, options: ProcessOptions | None = None,
                 openings: str = "test", members_of: str = "own") -> Tally:
    """Build, store and process one tau2 stream; compare its situations with the truth."""
    from tests.support.tau2_stream import STANCE_DATA, tau2_stream

    started = time.perf_counter()
    files = [STANCE_DATA / f"{name}.jsonl" for name in openings.split("+")]
    stream = tau2_stream(seed, conversations, stance_file=files)
    built = time.perf_counter() - started
    db = work / f"tau2-{seed}.duckdb"
    _remove_store(db)
    store_requests(db, stream.requests, source="bench")
    stored = time.perf_counter() - started - built
    store = open_store(db)
    tally = Tally()
    try:
        process(store, options or ProcessOptions(), credentials=dict(os.environ))
        processed = time.perf_counter() - started - built - stored
        reported = _reported(store, members_of)
        readings = _readings(store, stream.expected)
        flagged = [r for r in reported if r.status in STATUSES]
        tally.reported.update(r.status for r in reported)
        matched_reports: set[str] = set()
        lines = []
        for planted in stream.truth:
            tally.planted[planted.status] += 1
            period, failing = _deciding(planted, stream.versions)
            matches = [r for r in reported
                       if _jaccard(r.failing.get(period, frozenset()), failing) >= JACCARD]
            correct = [r for r in matches if r.status == planted.status]
            if correct:
                tally.hits[planted.status] += 1
                tally.named_as_planted += any(_same_name(r.label, planted.label)
                                              for r in correct)
            elif any(r.status == planted.status and _same_name(r.label, planted.label)
                     for r in reported):
                tally.named_only += 1
            matched_reports.update(r.situation_id for r in correct)
            flagged_matches = len([r for r in matches if r.status in STATUSES])
            tally.exactly_one += flagged_matches == 1
            tally.several += flagged_matches > 1
            shown = ", ".join(f"{r.status} {r.label}" for r in matches) or "not reported"
            lines.append(f"    planted {planted.status:<10} {planted.label}  "
                         f"({len(planted.members)} members, {len(failing)} failing in {period})"
                         f" -> {shown}")
        tally.correct_reports.update(r.status for r in reported
                                     if r.situation_id in matched_reports)
        for r in flagged:
            if r.situation_id in matched_reports:
                continue
            holds = next((p for p in stream.truth if _superset(r.members, p.members)), None)
            if holds is not None:
                tally.supersets += 1
                lines.append(f"    superset   {r.status:<10} {r.label} "
                             f"({len(r.members)} members) holds {holds.label}")
            elif verbose:
                lines.append(f"    unmatched  {r.status:<10} {r.label} "
                             f"({len(r.members)} members)")
        planted_members = frozenset(cid for p in stream.truth if p.status in ("new", "persistent")
                                    for cid in p.members)
        _plan_share(store, planted_members, rollouts, tally)
    finally:
        store.close()
    print(f"seed {seed}: {stream.conversations} conversations, {stream.spans} spans "
          f"(built {built:.1f} s, {stream.replays} tau2 replays; stored {stored:.1f} s; "
          f"processed {processed:.1f} s); stance openings from {stream.stance_source}")
    print("    conversations reading as built: " + ", ".join(
        f"{axis} {_ratio(good, seen)}" for axis, (good, seen) in readings.items()))
    print("\n".join(lines))
    print("    " + _summary(tally), flush=True)
    for note in [*stream.notes, *tally.notes]:
        print(f"    note: {note}")
    return tally


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f} ({a}/{b})" if b else "n/a"


def _summary(t: Tally) -> str:
    parts = [f"{s}: recall {_ratio(t.hits[s], t.planted[s])} precision "
             f"{_ratio(t.correct_reports[s], t.reported[s])}" for s in STATUSES]
    planted = sum(t.planted.values())
    parts.append(f"exactly one {_ratio(t.exactly_one, planted)} (two or more {t.several})")
    parts.append(f"flagged supersets {t.supersets}")
    parts.append(f"missed but named exactly {t.named_only}")
    parts.append(f"matched and named as planted {_ratio(t.named_as_planted, sum(t.hits.values()))}")
    parts.append(f"target budget on planted new/persistent "
                 f"{_ratio(t.target_on_planted, t.target_rollouts)}")
    return "; ".join(parts)


def _print_total(total: Tally, seeds: Sequence[int], conversations: int) -> None:
    print(f"\nover seeds {','.join(map(str, seeds))} ({conversations} conversations each), "
          "micro-averaged")
    print(f"  {'status':<11}{'recall':>16}{'precision':>16}")
    for status in STATUSES:
        print(f"  {status:<11}{_ratio(total.hits[status], total.planted[status]):>16}"
              f"{_ratio(total.correct_reports[status], total.reported[status]):>16}")
    planted = sum(total.planted.values())
    print(f"  planted situations reported as exactly one situation: "
          f"{_ratio(total.exactly_one, planted)}; by none: "
          f"{planted - total.exactly_one - total.several}, by two or more: {total.several}")
    print(f"  flagged supersets: {total.supersets}")
    print(f"  missed, yet reported under exactly their coordinates and status (members "
          f"overlap < 0.5): {total.named_only}")
    print(f"  correct matches named by exactly the planted coordinates: "
          f"{_ratio(total.named_as_planted, sum(total.hits.values()))}")
    print(f"  uncertain situations reported: {total.reported['uncertain']}")
    print(f"  target budget on planted new/persistent conversations: "
          f"{_ratio(total.target_on_planted, total.target_rollouts)}")


# --------------------------------------------------------------------------- synthetic corpus


def measure_synthetic(seed: int, per_version: int, work: Path,
                      options: ProcessOptions | None = None,
                      ) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """(true positives, flagged, planted) per status for one seed (pair cells)."""
    from tests.support.synthetic import production_stream

    stream = production_stream(seed=seed, conversations_per_version=per_version)
    db = work / f"synthetic-{seed}.duckdb"
    _remove_store(db)
    store_requests(db, stream.requests, source="bench")
    store = open_store(db)
    try:
        process(store, options or ProcessOptions(), credentials=dict(os.environ))
        rows = store.query("SELECT axis_a, value_a, axis_b, value_b, status FROM failure_map "
                           "WHERE axis_b <> '*'")
    finally:
        store.close()
    found = {((a, va), (b, vb)): status for a, va, b, vb, status in rows}
    hits: Counter[str] = Counter()
    flagged: Counter[str] = Counter(s for s in found.values() if s in STATUSES)
    planted: Counter[str] = Counter(stream.truth.values())
    for cell, status in stream.truth.items():
        if found.get(cell) == status:
            hits[status] += 1
    return hits, flagged, planted


def _run_synthetic(seeds: Sequence[int], per_version: int, work: Path,
                   options: ProcessOptions | None = None) -> None:
    hits: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    planted: Counter[str] = Counter()
    for seed in seeds:
        h, f, p = measure_synthetic(seed, per_version, work, options)
        hits.update(h)
        flagged.update(f)
        planted.update(p)
        print(f"seed {seed}: " + "; ".join(
            f"{s} recall {_ratio(h[s], p[s])} precision {_ratio(h[s], f[s])}"
            for s in STATUSES), flush=True)
    print(f"\nover seeds {','.join(map(str, seeds))}, {per_version} conversations per version "
          "(pair cells; single coordinates not counted)")
    print(f"  {'status':<11}{'recall':>18}{'precision':>18}")
    for status in STATUSES:
        print(f"  {status:<11}{_ratio(hits[status], planted[status]):>18}"
              f"{_ratio(hits[status], flagged[status]):>18}")


# --------------------------------------------------------------------------- command line


def parse_seeds(text: str) -> list[int]:
    """``0,1,2``, ``0-4`` or a mix (``0-2,100``)."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part[1:]:
            low, high = part.split("-", 1)
            seeds.extend(range(int(low), int(high) + 1))
        else:
            seeds.append(int(part))
    if not seeds:
        raise argparse.ArgumentTypeError(f"no seeds in {text!r}")
    return seeds


OPENINGS = ("test", "test2", "test3", "dev+dev2", "dev+dev2+dev3+dev4")
"""What ``--openings`` accepts: stance files of bench/data/stance/ (``a+b``: both)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", choices=("tau2", "synthetic"), default="tau2",
                        help="tau2: a stream built from tau2-bench's airline and telecom "
                             "worlds (default); synthetic: the project's own stream.")
    parser.add_argument("--seeds", type=parse_seeds, default=None,
                        help="Seeds, e.g. 0,1,2,3,4 or 100-104 (default: 0-4 for tau2, "
                             "0-9 for synthetic). 0-99 are for tuning, 100+ for reporting.")
    parser.add_argument("--conversations", type=int, default=3000,
                        help="tau2: conversations per stream over both versions.")
    parser.add_argument("--rollouts", type=int, default=1000,
                        help="tau2: rollouts of the generation plan made from each store.")
    parser.add_argument("--per-version", type=int, default=400,
                        help="synthetic: conversations per model version.")
    parser.add_argument("--verbose", action="store_true",
                        help="tau2: also list flagged situations that match nothing planted.")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="Keep each seed's DuckDB store in DIR (tau2-SEED.duckdb or "
                             "synthetic-SEED.duckdb, replaced if present) to inspect with "
                             "`tracemill map` / `tracemill conversations`.")
    parser.add_argument("--stance-model", metavar="SPEC", default=None,
                        help="Handed to process() (builtin, openai:MODEL, ...; keys from the "
                             "environment); default: the pattern stance only.")
    parser.add_argument("--openings", choices=OPENINGS, default="test",
                        help="tau2: which stance file the users' openings come from "
                             "(bench/data/stance/): dev+dev2(+dev3+dev4) while tuning, "
                             "test2 or test3 for reports (default test, as earlier "
                             "reports; test has leaked into tuning).")
    parser.add_argument("--members", choices=("own", "all"), default="own",
                        help="tau2: score each reported situation by its own members "
                             "(default: outside the situations it was judged without) or "
                             "by all conversations matching its coordinates.")
    args = parser.parse_args(argv)
    options = ProcessOptions(stance_model=args.stance_model)
    print("$ python " + shlex.join(sys.argv if argv is None else ["bench/processor_precision.py",
                                                                  *argv]), flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        if args.keep is not None:
            work = args.keep
            work.mkdir(parents=True, exist_ok=True)
        if args.corpus == "synthetic":
            _run_synthetic(args.seeds or list(range(10)), args.per_version, work, options)
            return 0
        seeds = args.seeds or list(range(5))
        total = Tally()
        for seed in seeds:
            total.add(measure_tau2(seed, args.conversations, args.rollouts, work, args.verbose,
                                   options, args.openings, args.members))
        _print_total(total, seeds, args.conversations)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
