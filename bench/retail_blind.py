"""Blind benchmark of the failure map on tau2-bench's held-out retail domain (issue 8).

For each seed: build the stream of ``tests/support/retail_blind.py`` (3,000 conversations,
two model versions, six planted situations, a background failure rate everywhere), write
it as OTLP protobuf through the real OpenTelemetry SDK, then use tracemill only as a user
would: ``tracemill ingest``, ``tracemill process``, ``tracemill map --json``. The map is
scored against the ground truth the generator kept aside.

Matching (member overlap, on failing conversations of both versions):

* ``F_P``: failing conversations of planted situation P; ``F_R``: failing members of
  reported situation R (its ``own_member_ids`` that failed: outside the situations it was
  judged without; ``--members all``: its ``member_ids``, every conversation matching it).
* R *overlaps* P when ``jaccard(F_R, F_P) >= 0.5`` or ``|F_R & F_P| >= 0.5 |F_P|``, and
  ``|F_R & F_P| >= 0.5 |F_R|`` (R is mostly P, not background noise or other situations).
* R *matches* P when it overlaps P and has P's status.
* A flagged (new/persistent/fixed) R that holds >= 50% of P's failures while P makes up
  less than half of R's failures is a *superset*; a flagged R that matches nothing is a
  false positive (``noise`` when most of its failures are background, ``part`` when it is
  a real but too small piece of a planted situation, below both 50% thresholds, or has
  the wrong status).
* precision(status) = flagged R of that status matching a planted P of that status / all
  flagged R of that status; recall(status) = planted P of that status matched / planted.
* target budget on planted: over flagged new/persistent R, the budget share weighted by the
  fraction of R's members that are conversations of planted new/persistent situations,
  divided by those R's total share.

Run (about a minute per seed; the retail replay is done once per process)::

    .venv/bin/python bench/retail_blind.py --seeds 1 2 3 4 5
    .venv/bin/python bench/retail_blind.py --seeds 1 2 3 4 5 --stance-model builtin

``--stance-model SPEC`` is handed to every command that processes (``process``, ``map``,
``conversations``), as a user would pass it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.retail_blind import (  # noqa: E402
    PLANTED,
    Conversation,
    build_stream,
    write_otlp,
)

STATUSES = ("new", "persistent", "fixed")
_TRIGGER = {  # words a label naming the planted trigger would contain
    "cancel_already_cancelled": ("already", "acted"),
    "return_timeout": ("timeout",),
    "mistyped_order_id": ("missing", "not_found"),
    "adversarial_exchange": ("adversarial",),
    "hurried_modify_items": ("hurried",),
    "address_forbidden": ("permission", "forbidden", "denied"),
}


@dataclass
class SeedResult:
    """Scores of one seed."""

    seed: int
    rows: list[dict[str, Any]]
    flagged: list[dict[str, Any]]
    precision: dict[str, tuple[int, int]]
    recall: dict[str, tuple[int, int]]
    exactly_one: int
    supersets: list[str]
    false_positives: list[str]
    target_budget: float | None
    seconds: dict[str, float]
    diagnostics: dict[str, Any] = field(default_factory=dict)


def diagnose(conversations: Sequence[Conversation],
             records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How tracemill read the stream: outcomes per layout, stance per written stance, the
    coordinates it gave each planted situation's conversations."""
    seen = {r["conversation_id"]: r for r in records}
    outcome: Counter[tuple[str, str]] = Counter()
    stance: Counter[tuple[str, str]] = Counter()
    coords: dict[str, Counter[str]] = {}
    for c in conversations:
        r = seen.get(c.conversation_id)
        if r is None:
            outcome[(c.layout, "missing")] += 1
            continue
        truth = "pass" if c.passed else "fail"
        outcome[(c.layout, "agree" if r.get("outcome") == truth else
                 f"{truth}->{r.get('outcome')}")] += 1
        if r.get("model_version") != c.version:
            outcome[(c.layout, f"version {c.version}->{r.get('model_version')}")] += 1
        stance[(c.stance, str(r.get("user_stance")))] += 1
        if c.planted:
            coords.setdefault(c.planted, Counter())[
                f"{r.get('tool')} | {r.get('tool_condition')} | {r.get('world_state')}"] += 1
    return {"outcome": outcome, "stance": stance, "coords": coords}


def _tracemill(db: Path, *args: str) -> str:
    """Run the command line of the checkout this script is in (first on PYTHONPATH: an
    installed tracemill, such as another checkout's editable install, is not measured)."""
    path = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    done = subprocess.run([sys.executable, "-m", "tracemill", *args, "--db", str(db)],
                          capture_output=True, text=True, cwd=db.parent,
                          env={**os.environ, "PYTHONPATH": path})
    if done.returncode != 0:
        raise SystemExit(f"tracemill {' '.join(args)} failed ({done.returncode}):\n"
                         f"{done.stderr[-2000:]}")
    return done.stdout


def score(conversations: Sequence[Conversation], situations: Sequence[dict[str, Any]],
          seed: int, seconds: dict[str, float], members_of: str = "own") -> SeedResult:
    """Score one map against the ground truth (``members_of``: ``own`` or ``all``)."""
    failing = {c.conversation_id for c in conversations if not c.passed}
    planted_of = {c.conversation_id: c.planted for c in conversations}
    status_of = {p.key: p.status for p in PLANTED}
    fails = {p.key: {c.conversation_id for c in conversations
                     if c.planted == p.key and not c.passed} for p in PLANTED}
    info: list[dict[str, Any]] = []
    for s in situations:
        members = set(s.get("own_member_ids" if members_of == "own" else "member_ids") or [])
        f_r = members & failing
        best: tuple[float, str | None] = (0.0, None)
        overlaps: list[str] = []
        covers: list[str] = []
        for key, f_p in fails.items():
            both = len(f_r & f_p)
            jac = both / len(f_r | f_p) if f_r | f_p else 0.0
            cov = both / len(f_p) if f_p else 0.0
            purity = both / len(f_r) if f_r else 0.0
            if cov >= 0.5:
                covers.append(key)
            if (jac >= 0.5 or cov >= 0.5) and purity >= 0.5:
                overlaps.append(key)
            best = max(best, (jac, key), key=lambda x: x[0])
        noise = sum(1 for m in f_r if planted_of.get(m) is None)
        info.append({"id": s["situation_id"], "label": s.get("label", ""),
                     "status": s.get("status"), "members": len(members),
                     "failing": len(f_r), "overlaps": overlaps, "covers": covers,
                     "best_jaccard": round(best[0], 2), "best": best[1],
                     "noise_share": noise / len(f_r) if f_r else 1.0,
                     "budget_share": s.get("budget_share"),
                     "planted_np_share": (sum(1 for m in members if status_of.get(
                         planted_of.get(m) or "") in ("new", "persistent")) / len(members))
                     if members else 0.0,
                     "low_support": s.get("low_support")})
    rows = []
    for p in PLANTED:
        over = [i for i in info if p.key in i["overlaps"]]
        right = [i for i in over if i["status"] == p.status]
        label = " ".join(i["label"] for i in right)
        rows.append({"names": ("tool" if p.tool in label else "-") + "/" + (
                         "trigger" if any(w in label for w in _TRIGGER[p.key]) else "-"),
                     "planted": p.key, "status": p.status, "fails": len(fails[p.key]),
                     "overlapping": len(over),
                     "reported_as": "; ".join(f"{i['status']}: {i['label']}" for i in over)
                     or "-",
                     "matched": bool(right), "exactly_one": len(over) == 1 and bool(right),
                     "jaccard": max((i["best_jaccard"] for i in right), default=0.0)})
    precision: dict[str, tuple[int, int]] = {}
    recall: dict[str, tuple[int, int]] = {}
    flagged_info = [i for i in info if i["status"] in STATUSES]
    for status in STATUSES:
        mine = [i for i in flagged_info if i["status"] == status]
        good = [i for i in mine if any(status_of[k] == status for k in i["overlaps"])]
        precision[status] = (len(good), len(mine))
        planted = [r for r in rows if r["status"] == status]
        recall[status] = (sum(1 for r in planted if r["matched"]), len(planted))
    supersets = [f"{i['status']}: {i['label']} (holds >=50% of {', '.join(i['covers'])})"
                 for i in flagged_info
                 if any(k not in i["overlaps"] for k in i["covers"])]
    false_pos = [("noise " if i["noise_share"] > 0.5 else "part  " if i["best_jaccard"] > 0
                  and i["noise_share"] <= 0.5 else "other ")
                 + f"{i['status']}: {i['label']} ({i['failing']} failing members, "
                 f"{i['noise_share']:.0%} background"
                 + (f"; best jaccard {i['best_jaccard']} with {i['best']}" if i["best"] else "")
                 + ")"
                 for i in flagged_info
                 if not any(status_of[k] == i["status"] for k in i["overlaps"])]
    targets = [i for i in flagged_info if i["status"] in ("new", "persistent")
               and i["budget_share"] is not None]
    total = sum(float(i["budget_share"]) for i in targets)
    target_budget = (sum(float(i["budget_share"]) * i["planted_np_share"] for i in targets)
                     / total) if total else None
    return SeedResult(seed, rows, flagged_info, precision, recall,
                      sum(1 for r in rows if r["exactly_one"]), supersets, false_pos,
                      target_budget, seconds)


def run_seed(seed: int, total: int, keep: Path | None,
             planted_per_version: int | None = None,
             stance_model: str | None = None, members_of: str = "own") -> SeedResult:
    """Generate, ingest, process, map and score one seed (``stance_model``: the
    ``--stance-model`` of every command that processes; None: patterns only)."""
    model = ("--stance-model", stance_model) if stance_model else ()
    with tempfile.TemporaryDirectory(prefix=f"retail-blind-{seed}-") as tmp:
        work = keep / f"seed-{seed}" if keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        db = work / "tracemill.duckdb"
        for stale in (db, work / "tracemill.duckdb.wal"):
            stale.unlink(missing_ok=True)
        seconds: dict[str, float] = {}
        t = time.perf_counter()
        conversations = build_stream(seed, total, planted_per_version)
        files = write_otlp(conversations, work / "otlp")
        seconds["generate"] = time.perf_counter() - t
        t = time.perf_counter()
        _tracemill(db, "ingest", *map(str, files))
        seconds["ingest"] = time.perf_counter() - t
        t = time.perf_counter()
        _tracemill(db, "process", *model)
        seconds["process"] = time.perf_counter() - t
        t = time.perf_counter()
        situations = json.loads(_tracemill(db, "map", "--json", *model))
        seconds["map"] = time.perf_counter() - t
        records = [json.loads(line) for line in _tracemill(
            db, "conversations", "--json", "--limit", str(10 * total), *model).splitlines()
            if line.strip()]
        if keep:
            (work / "map.json").write_text(json.dumps(situations, indent=1))
            (work / "truth.json").write_text(json.dumps(
                [{"id": c.conversation_id, "version": c.version, "planted": c.planted,
                  "passed": c.passed, "stance": c.stance, "layout": c.layout,
                  "opening": c.opening} for c in conversations], indent=0))
        result = score(conversations, situations, seed, seconds, members_of)
        result.diagnostics = diagnose(conversations, records)
        return result


def _fmt(pair: tuple[int, int]) -> str:
    good, all_ = pair
    return f"{good}/{all_} = {good / all_:.2f}" if all_ else "0/0 = n/a"


def print_seed(r: SeedResult) -> None:
    """The per-seed table."""
    print(f"\n== seed {r.seed}  ({', '.join(f'{k} {v:.0f}s' for k, v in r.seconds.items())})")
    print(f"{'planted':26} {'status':10} {'fails':>5} {'#over':>5} {'match':>5} {'one':>4} "
          f"{'jacc':>5} {'label names':12} reported as")
    for row in r.rows:
        print(f"{row['planted']:26} {row['status']:10} {row['fails']:>5} "
              f"{row['overlapping']:>5} {'yes' if row['matched'] else 'NO':>5} "
              f"{'yes' if row['exactly_one'] else 'NO':>4} {row['jaccard']:>5.2f} "
              f"{row['names']:12} "
              f"{row['reported_as']}")
    print("flagged situations:")
    for i in r.flagged:
        print(f"  {i['status']:10} {i['label']:70} members {i['members']:>4} failing "
              f"{i['failing']:>4} background {i['noise_share']:.0%} budget "
              f"{i['budget_share']}")
    for status in STATUSES:
        print(f"  {status:10} precision {_fmt(r.precision[status]):14} recall "
              f"{_fmt(r.recall[status])}")
    budget = "n/a" if r.target_budget is None else f"{r.target_budget:.0%}"
    print(f"  exactly one: {r.exactly_one}/{len(r.rows)}; supersets: {len(r.supersets)}; "
          f"false positives: {len(r.false_positives)}; target budget on planted "
          f"new/persistent: {budget}")
    for line in r.supersets:
        print(f"    superset  {line}")
    for line in r.false_positives:
        print(f"    false pos {line}")
    d = r.diagnostics
    if d:
        print("  outcomes read (layout: agree / disagreements): " + "; ".join(
            f"{k[0]} {k[1]} {v}" for k, v in sorted(d["outcome"].items())))
        print("  planted conversations' coordinates (tool | tool_condition | world_state):")
        for key, counts in d["coords"].items():
            top = ", ".join(f"{k} x{v}" for k, v in counts.most_common(3))
            print(f"    {key:26} {top}")


def print_aggregate(results: Sequence[SeedResult]) -> None:
    """Totals over seeds."""
    print(f"\n== aggregate over seeds {', '.join(str(r.seed) for r in results)}")
    for status in STATUSES:
        p = tuple(map(sum, zip(*(r.precision[status] for r in results), strict=True)))
        c = tuple(map(sum, zip(*(r.recall[status] for r in results), strict=True)))
        print(f"  {status:10} precision {_fmt((p[0], p[1])):16} recall {_fmt((c[0], c[1]))}")
    one = sum(r.exactly_one for r in results)
    planted = sum(len(r.rows) for r in results)
    print(f"  exactly one matching situation: {one}/{planted}")
    print(f"  flagged supersets: {sum(len(r.supersets) for r in results)}; false positives: "
          f"{sum(len(r.false_positives) for r in results)}")
    budgets = [r.target_budget for r in results if r.target_budget is not None]
    if budgets:
        print(f"  target budget on planted new/persistent: mean {sum(budgets) / len(budgets):.0%}"
              f" (min {min(budgets):.0%})")
    stance: Counter[tuple[str, str]] = Counter()
    for r in results:
        stance.update(r.diagnostics.get("stance", Counter()))
    if stance:
        print("  user stance as written -> as tracemill read it (all seeds):")
        for written in sorted({w for w, _ in stance}):
            row = {k[1]: v for k, v in stance.items() if k[0] == written}
            n = sum(row.values())
            print(f"    {written:12} n={n:5}  " + ", ".join(
                f"{k} {v / n:.0%}" for k, v in sorted(row.items(), key=lambda x: -x[1])))
    per = {p.key: sum(1 for r in results for row in r.rows
                      if row["planted"] == p.key and row["exactly_one"]) for p in PLANTED}
    print("  per planted situation, seeds with exactly one correct match: "
          + ", ".join(f"{k} {v}/{len(results)}" for k, v in per.items()))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--conversations", type=int, default=3000)
    parser.add_argument("--planted-per-version", type=int, default=None,
                        help="Conversations per planted situation and version (default 100).")
    parser.add_argument("--keep", type=Path, default=None,
                        help="Keep each seed's OTLP files, store, map and truth here.")
    parser.add_argument("--stance-model", metavar="SPEC", default=None,
                        help="Passed to tracemill process, map and conversations (builtin, "
                             "openai:MODEL, ...; default: the pattern stance only).")
    parser.add_argument("--members", choices=("own", "all"), default="own",
                        help="Score a situation by its own members (default: outside the "
                             "situations it was judged without) or by all of them.")
    args = parser.parse_args(argv)
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    results = []
    for seed in args.seeds:
        result = run_seed(seed, args.conversations, args.keep, args.planted_per_version,
                          args.stance_model, args.members)
        print_seed(result)
        results.append(result)
        sys.stdout.flush()
    print_aggregate(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
