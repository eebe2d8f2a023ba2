"""``tracemill split``: held-out sets by situation, stored and stable, with a power note.

Every test runs a real offline ``generate`` on its own copy of the production store (see
conftest.py) and drives the real command line.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from generator.split import power_needed
from tests.generator.conftest import ReadRollouts, RunCli, StoreCopy
from tracemill.store import open_store

pytestmark = pytest.mark.integration


def _generate(run_cli: RunCli, db: Path, *args: str) -> None:
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json",
                      "--agent", "offline:0.3", *args])
    assert result.code == 0, result.err


def _situation(row: dict[str, Any]) -> tuple[Any, ...]:
    """A rollout's situation as a reader derives it from the stored row, not the view."""
    mutation = json.loads(row["lineage"])["mutation"]
    faults = sorted({(f["tool"], f["condition"]) for f in mutation.get("faults") or ()})
    where = row["cell"] or json.dumps(json.loads(row["situation"]), sort_keys=True)
    return where, mutation["kind"], mutation.get("world_state"), tuple(faults)


def _sides(db: Path) -> dict[str, str]:
    store = open_store(db, read_only=True)
    try:
        return dict(store.query("SELECT s.rollout_id, p.side FROM rollout_situations AS s "
                                "JOIN splits AS p USING (situation_key)"))
    finally:
        store.close()


def test_split_is_by_situation_and_paraphrases_stay_on_one_side(
        run_cli: RunCli, store_copy: StoreCopy, read_rollouts: ReadRollouts) -> None:
    db = store_copy("split.duckdb")
    _generate(run_cli, db, "--budget", "80", "--seed", "3")
    result = run_cli(["split", "--db", str(db), "--held-out", "0.25", "--json"])
    assert result.code == 0, result.err
    report = result.json()
    rows = read_rollouts(db)
    sides = _sides(db)
    assert set(sides) == {row["rollout_id"] for row in rows}
    by_situation: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    by_cell_side: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        by_situation[_situation(row)].add(sides[row["rollout_id"]])
        by_cell_side[row["cell"] or "explore"].add(sides[row["rollout_id"]])
    # paraphrases (other persona, other words) of one situation never straddle the split
    assert all(len(s) == 1 for s in by_situation.values())
    assert len(by_situation) == report["situations"]
    held = sum(1 for s in by_situation.values() if s == {"held_out"})
    assert held == report["held_out"] == round(0.25 * len(by_situation))
    # reperson rollouts of one cell share their world signature: same side
    paraphrases = [r for r in rows if json.loads(r["lineage"])["mutation"]["kind"]
                   == "reperson"]
    assert len(paraphrases) >= 4
    # the text printed names the power needed at the observed pass rate
    graded = [r for r in rows if r["graded"] and r["mutation_fired"] is not False]
    rate = sum(1 for r in graded if r["passed"]) / len(graded)
    assert report["tasks_needed"] == power_needed(rate)
    assert report["held_out_tasks"] < report["tasks_needed"]
    assert any("needs" in w and "5-point" in w for w in report["warnings"])
    text = run_cli(["split", "--db", str(db)])
    assert text.code == 0 and "WARNING" in text.out and "80% power" in text.out


def test_signatures_go_to_held_out_first(run_cli: RunCli, store_copy: StoreCopy) -> None:
    db = store_copy("signatures.duckdb")
    _generate(run_cli, db, "--budget", "80", "--seed", "5")
    result = run_cli(["split", "--db", str(db), "--held-out", "0.5", "--json"])
    assert result.code == 0, result.err
    store = open_store(db, read_only=True)
    try:
        sigs = {key: tuple(found or ()) for key, found in store.query(
            "SELECT s.situation_key, list_distinct(list(s.fault || ' / ' || s.behaviour) "
            "FILTER (WHERE r.mutation_fired IS DISTINCT FROM false)) "
            "FROM rollout_situations AS s JOIN rollouts AS r USING (rollout_id) GROUP BY 1")}
        placed = store.query("SELECT situation_key, side, reason FROM splits")
    finally:
        store.close()
    all_sigs = {s for ss in sigs.values() for s in ss}
    held_sigs = {s for key, side, _ in placed if side == "held_out" for s in sigs[key]}
    signature_first = [key for key, side, reason in placed if reason == "signature"]
    assert signature_first
    # with half the situations held out, every signature is shown on the held-out side
    assert held_sigs == all_sigs
    assert result.json()["signatures_held_out"] == len(all_sigs)


def test_split_is_stored_and_new_rollouts_join_their_situation(
        run_cli: RunCli, store_copy: StoreCopy, read_rollouts: ReadRollouts) -> None:
    db = store_copy("stable.duckdb")
    _generate(run_cli, db, "--budget", "60", "--seed", "3")
    first = run_cli(["split", "--db", str(db), "--json"])
    assert first.code == 0, first.err
    before = _sides(db)
    _generate(run_cli, db, "--budget", "60", "--seed", "4", "--fresh")
    # a different seed asked later does not move anything: the stored split is kept
    again = run_cli(["split", "--db", str(db), "--seed", "9", "--json"])
    assert again.code == 0, again.err
    report = again.json()
    assert report["kept"] == first.json()["situations"]
    assert any("--reset" in w for w in report["warnings"])
    after = _sides(db)
    assert all(after[rid] == side for rid, side in before.items())
    rows = read_rollouts(db)
    assert set(after) == {row["rollout_id"] for row in rows}
    old_situations = {_situation(r): before[r["rollout_id"]] for r in rows
                      if r["rollout_id"] in before}
    joined = [r for r in rows if r["rollout_id"] not in before
              and _situation(r) in old_situations]
    assert joined, "the second run should revisit some situations of the first"
    for row in joined:
        assert after[row["rollout_id"]] == old_situations[_situation(row)]
    # --reset draws anew
    reset = run_cli(["split", "--db", str(db), "--reset", "--json"])
    assert reset.code == 0 and reset.json()["kept"] == 0


def test_power_matches_the_two_proportion_formula() -> None:
    # textbook value: 50% -> 55% at alpha 0.05 two-sided, 80% power: 1565 per arm
    assert power_needed(0.5) == 1565
    # near a bound the change is taken inward and needs fewer tasks
    assert power_needed(0.98) < power_needed(0.5)
    assert power_needed(0.3) < power_needed(0.5)


def test_split_refuses_an_empty_store_and_a_bad_share(run_cli: RunCli, tmp_path: Path,
                                                      store_copy: StoreCopy) -> None:
    assert run_cli(["migrate", "--db", str(tmp_path / "empty.duckdb")]).code == 0
    empty = run_cli(["split", "--db", str(tmp_path / "empty.duckdb")])
    assert empty.code == 2 and empty.out == ""
    (line,) = empty.err.strip().splitlines()
    assert "no rollouts" in line and "tracemill generate" in line
    db = store_copy("share.duckdb")
    _generate(run_cli, db, "--budget", "10")
    bad = run_cli(["split", "--db", str(db), "--held-out", "1.5"])
    assert bad.code == 2
    (line,) = bad.err.strip().splitlines()
    assert "--held-out" in line and "0.2" in line
