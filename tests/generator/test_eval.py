"""``tracemill eval``: the held-out set run again against one agent or two.

The statistics are checked against brute force; the command runs a real offline
``generate`` + ``split`` on its own copy of the production store and evaluates real
offline agents that differ only in how many mistakes they plant.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.checks import CHECKS_STAMP
from generator.eval_stats import TaskResult, bootstrap, compare, pass_at_k, pass_hat_k
from tests.generator.conftest import RunCli, StoreCopy
from tests.support import staging_world
from tracemill.store import open_store


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_and_pass_hat_k_match_enumeration(case: tuple[int, int, int]) -> None:
    n, c, k = case
    samples = [True] * c + [False] * (n - c)
    subsets = list(combinations(samples, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_bootstrap_is_over_tasks_and_covers_the_mean() -> None:
    values = [0.0, 0.25, 1.0, 0.5, 0.75, 1.0, 0.0, 0.5]
    estimate = bootstrap(values, seed=1)
    assert estimate.n == len(values)
    assert estimate.value == pytest.approx(sum(values) / 8)
    assert estimate.low < estimate.value < estimate.high
    assert bootstrap([0.5] * 5).low == bootstrap([0.5] * 5).high == 0.5


def test_compare_refuses_what_is_not_comparable() -> None:
    a = [TaskResult("t1", "s", "tool", 4, 2), TaskResult("t2", "s", "tool", 4, 1)]
    b = [TaskResult("t1", "s", "tool", 4, 2)]
    assert compare(a, b).verdict == "not comparable"
    moved = [TaskResult("t1", "other", "tool", 4, 2), TaskResult("t2", "s", "tool", 4, 1)]
    assert compare(a, moved).verdict == "not comparable"
    assert compare(a, a, stamps=("checks", "checks + judge")).verdict == "not comparable"
    same = compare(a, a)
    assert same.verdict == "no difference" and same.difference.value == 0


def _store(run_cli: RunCli, store_copy: StoreCopy) -> Path:
    db = store_copy("eval.duckdb")
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json",
                      "--agent", "offline:0.3", "--budget", "60", "--seed", "3"])
    assert result.code == 0, result.err
    split = run_cli(["split", "--db", str(db), "--held-out", "0.3"])
    assert split.code == 0, split.err
    return db


@pytest.mark.integration
def test_eval_compares_two_agents_task_by_task(run_cli: RunCli, store_copy: StoreCopy) -> None:
    db = _store(run_cli, store_copy)
    store = open_store(db, read_only=True)
    try:
        (held,) = store.query(
            "SELECT count(*) FROM rollouts r JOIN rollout_situations s USING (rollout_id) "
            "JOIN splits p USING (situation_key) WHERE p.side = 'held_out' AND r.graded "
            "AND r.mutation_fired IS DISTINCT FROM false")[0]
    finally:
        store.close()
    worse = run_cli(["eval", "--db", str(db), "--agent", "offline:0.7", "--against",
                     "offline", "--k", "3", "--json"])
    assert worse.code == 0, worse.err
    report: dict[str, Any] = worse.json()
    before, after = report["agents"]
    assert (before["agent"], after["agent"]) == ("offline", "offline:0.7")
    for agent in (before, after):
        assert len(agent["tasks"]) == held == agent["pass@1"]["n"]
        assert all(t["n"] == 3 and 0 <= t["c"] <= 3 for t in agent["tasks"])
        assert agent["pass@1"]["value"] == pytest.approx(
            sum(t["c"] / 3 for t in agent["tasks"]) / held)
        for name in ("pass@1", "pass@k", "pass^k"):
            figure = agent[name]
            assert figure["low"] <= figure["value"] <= figure["high"]
        assert agent["pass^k"]["value"] <= agent["pass@1"]["value"] <= agent["pass@k"]["value"]
        assert sum(f["n"] for f in agent["per_tool"].values()) == held
    comparison = report["comparison"]
    assert comparison["verdict"] == "worse"
    assert comparison["difference"]["high"] < 0 and comparison["p_value"] < 0.05
    gate = run_cli(["eval", "--db", str(db), "--agent", "offline:0.7", "--against", "offline",
                    "--k", "3", "--fail-on", "worse"])
    assert gate.code == 1 and "WORSE" in gate.out and "worse" in gate.err
    text = run_cli(["eval", "--db", str(db), "--agent", "offline", "--against", "offline",
                    "--k", "2", "--fail-on", "worse"])
    assert text.code == 0 and "NO DIFFERENCE" in text.out
    assert f"n={held}" in text.out


@pytest.mark.integration
def test_eval_refuses_without_a_split(run_cli: RunCli, store_copy: StoreCopy) -> None:
    db = store_copy("nosplit.duckdb")
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json",
                      "--agent", "offline", "--budget", "10"])
    assert result.code == 0, result.err
    refused = run_cli(["eval", "--db", str(db), "--agent", "offline"])
    assert refused.code == 2 and refused.out == ""
    (line,) = refused.err.strip().splitlines()
    assert "tracemill split" in line


STAGING = "python:tests.support.staging_world:answer"
STRICT = "python:tests.generator.test_eval:strict_grader"


def strict_grader(rollout: dict[str, Any]) -> dict[str, Any]:
    """A grader (``--grader python:...``) that passes nothing: whoever it grades fails."""
    return {"reward": 0.0, "reason": f"strict: {len(rollout)} fields read, nothing passes"}


@pytest.mark.integration
def test_eval_answers_and_grades_as_the_run_did(run_cli: RunCli, store_copy: StoreCopy,
                                                tmp_path: Path) -> None:
    db = store_copy("evalworld.duckdb")
    staging_world.reset()
    generated = run_cli(["generate", "--db", str(db), "--no-progress", "--json", "--agent",
                         "offline", "--budget", "40", "--seed", "3", "--world", STAGING,
                         "--grader", STRICT])
    assert generated.code == 0, generated.err
    assert run_cli(["split", "--db", str(db), "--held-out", "0.3"]).code == 0
    staging_world.reset()
    same = run_cli(["eval", "--db", str(db), "--agent", "offline", "--k", "2", "--json"])
    assert same.code == 0, same.err
    report = same.json()["agents"][0]
    assert report["world"] == STAGING
    assert report["graded_by"].startswith(f"{CHECKS_STAMP} + {STRICT}@sha256:")
    assert report["pass@1"]["value"] == 0.0  # the run's grader decides, as in generate
    calls = list(staging_world.CALLS)
    assert calls and all(rollout.startswith("eval-") for rollout, _, _ in calls)
    # overridden: tracemill's simulated world and the conduct checks alone
    staging_world.reset()
    checks = run_cli(["eval", "--db", str(db), "--agent", "offline", "--k", "2", "--json",
                      "--world", "simulated", "--grader", "checks"])
    assert checks.code == 0, checks.err
    alone = checks.json()["agents"][0]
    assert alone["world"] == "simulated" and alone["graded_by"] == CHECKS_STAMP
    assert not staging_world.CALLS and alone["pass@1"]["value"] > 0
    # an earlier report as the baseline: comparable only when graded and answered alike
    saved = tmp_path / "before.json"
    saved.write_text(same.out)
    otherwise = run_cli(["eval", "--db", str(db), "--agent", "offline", "--k", "2", "--json",
                         "--grader", "checks", "--baseline", str(saved)])
    assert otherwise.code == 0, otherwise.err
    verdict = otherwise.json()["comparison"]
    assert verdict["verdict"] == "not comparable" and "graded differently" in verdict["reason"]
    alike = run_cli(["eval", "--db", str(db), "--agent", "offline", "--k", "2", "--json",
                     "--baseline", str(saved), "--fail-on", "worse"])
    assert alike.code == 0, alike.err
    assert alike.json()["comparison"]["verdict"] == "no difference"
    bad = tmp_path / "bad.json"
    bad.write_text('{"agents": []}')
    broken = run_cli(["eval", "--db", str(db), "--agent", "offline", "--baseline", str(bad)])
    assert broken.code == 2 and "not a `tracemill eval --json` report" in broken.err
    # a second run graded otherwise: its held-out tasks cannot be evaluated one way ...
    again = run_cli(["generate", "--db", str(db), "--no-progress", "--json", "--fresh",
                     "--agent", "offline", "--budget", "40", "--seed", "3"])
    assert again.code == 0, again.err
    assert run_cli(["split", "--db", str(db)]).code == 0
    refused = run_cli(["eval", "--db", str(db), "--agent", "offline", "--k", "1"])
    assert refused.code == 2 and refused.out == ""
    (line,) = refused.err.strip().splitlines()
    assert "graded differently" in line and "--grader" in line and STAGING in line
    # ... unless the flags make them one
    one = run_cli(["eval", "--db", str(db), "--agent", "offline", "--k", "1", "--json",
                   "--world", "simulated", "--grader", "checks"])
    assert one.code == 0, one.err
    staging_world.reset()
