"""Judges measured against human labels: kappa on known values, the bar, and the report
read from a real DuckDB store."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from generator.judges import (
    MIN_LABELS,
    cohen_kappa,
    judge_report,
    measure,
    render_judge_report,
)
from tracemill.store import Store, open_store


def table(both: int, judge_only: int, human_only: int, neither: int) -> list[tuple[bool, bool]]:
    """Pairs (judge passed, human passed) from the cells of a 2x2 table."""
    return ([(True, True)] * both + [(True, False)] * judge_only
            + [(False, True)] * human_only + [(False, False)] * neither)


def test_kappa_textbook_values() -> None:
    # Wikipedia, "Cohen's kappa": 20/5/10/15 → 0.40; the two tables with the same
    # agreement (60%) but different margins → 0.1304 and 0.2593
    for cells, expected in [((20, 5, 10, 15), 0.4), ((45, 15, 25, 15), 0.1304),
                            ((25, 35, 5, 35), 0.2593)]:
        kappa = cohen_kappa(table(*cells))
        assert kappa is not None and math.isclose(kappa[0], expected, abs_tol=5e-5)


def test_kappa_standard_error_matches_published_software() -> None:
    # Stata `kapci` on a 1,932-subject table: kappa 0.3412, SE 0.02629, CI 0.2897-0.3927
    found = cohen_kappa(table(158, 261, 118, 1395))
    assert found is not None
    assert math.isclose(found[0], 0.3411969, abs_tol=1e-6)
    assert math.isclose(found[1], 0.0262914, abs_tol=1e-6)
    # R statpsych::ci.kappa(.05, 31, 12, 4, 58): 0.6756757, SE 0.07344761, CI 0.5317-0.8196
    measured = measure(table(58, 4, 12, 31))
    assert measured.kappa is not None and measured.kappa_interval is not None
    assert math.isclose(measured.kappa, 0.6756757, abs_tol=1e-6)
    low, high = measured.kappa_interval
    assert math.isclose(low, 0.5317210, abs_tol=1e-5) and math.isclose(high, 0.8196303,
                                                                        abs_tol=1e-5)


def test_perfect_chance_and_degenerate_agreement() -> None:
    perfect = measure(table(20, 0, 0, 20))
    assert perfect.kappa == 1.0 and perfect.kappa_interval == (1.0, 1.0)
    assert perfect.agreement == 1.0 and not perfect.flagged
    assert "meets the bar" in perfect.why
    chance = measure(table(10, 10, 10, 10))  # the judge's verdict tells nothing
    assert chance.kappa is not None and math.isclose(chance.kappa, 0.0, abs_tol=1e-12)
    assert chance.flagged and "kappa 0.00 < 0.6" in chance.why
    opposite = cohen_kappa(table(0, 10, 10, 0))
    assert opposite is not None and math.isclose(opposite[0], -1.0)
    # everyone passed everything: chance agreement is 1 and kappa 0/0 — undefined, flagged
    degenerate = measure(table(30, 0, 0, 0))
    assert degenerate.kappa is None and degenerate.kappa_interval is None
    assert degenerate.flagged and "undefined" in degenerate.why
    assert degenerate.pass_when_gold_fails is None and "no human-failed" in degenerate.why
    empty = measure([])
    assert (empty.n, empty.agreement, empty.kappa) == (0, None, None) and empty.flagged


def test_the_bar() -> None:
    few = measure(table(9, 0, 0, 9))
    assert few.flagged and f"too few human labels to trust (18 < {MIN_LABELS})" in few.why
    # high kappa, but 2 of 16 failures passed: the upper bound is far above 20%
    lenient = measure(table(40, 2, 0, 14))
    assert lenient.kappa is not None and lenient.kappa > 0.85
    assert lenient.pass_when_gold_fails == 2 / 16
    assert lenient.flagged and "may pass up to" in lenient.why and "(2/16" in lenient.why
    # no judge pass among 16 human failures: Wilson's upper bound 0.194 < 0.2
    strict = measure(table(30, 0, 0, 16))
    assert not strict.flagged and strict.pass_when_gold_fails_interval[1] < 0.2
    assert not measure(table(30, 0, 3, 16)).flagged  # failing good work is cheaper


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_measure_invariants(a: int, b: int, c: int, d: int) -> None:
    pairs = table(a, b, c, d)
    result = measure(pairs)
    swapped = cohen_kappa([(human, judge) for judge, human in pairs])
    assert result.n == len(pairs) and result.human_failed == b + d
    if result.agreement is not None:
        low, high = result.agreement_interval
        assert low - 1e-12 <= result.agreement <= high + 1e-12
    if result.kappa is None:
        assert swapped is None
    else:
        assert result.kappa_interval is not None and swapped is not None
        low, high = result.kappa_interval
        assert -1.0 <= low <= result.kappa + 1e-9 and result.kappa - 1e-9 <= high <= 1.0
        assert math.isclose(result.kappa, swapped[0], abs_tol=1e-9)
        assert math.isclose(cohen_kappa(pairs)[1], swapped[1], abs_tol=1e-6)  # type: ignore[index]
    assert result.flagged == (result.why != "" and not result.why.startswith("meets"))


# --------------------------------------------------------------------------- the store

_ROLLOUT = """
INSERT INTO rollouts (rollout_id, run_id, idx, purpose, situation, seed, lineage, persona,
    goal, messages, events, ended_by, planted, agent, input_tokens, output_tokens, cost_usd,
    model_calls, graded, passed, labeled_by, markers, checks, duration_s, created_unix_nano)
VALUES (?, 'run1', ?, 'explore', '{}', 1, '{}', '{}', '{}', '[]', '[]', 'user_done', [],
    'offline', 0, 0, 0, 1, ?, ?, ?, [], '[]', 0.1, 1)
"""
_LABEL = """
INSERT INTO labels (target, passed, reward, kind, labeled_by, created_unix_nano)
VALUES (?, ?, ?, ?, ?, ?)
"""
JUDGE = "conduct-checks/1 + judge:openai:gpt-4o-mini rubric=sha256:1a2b3c4d5e6f temperature=0"
CHECKS_ONLY = "conduct-checks/1"


def _fill(store: Store) -> None:
    with store.transaction() as cursor:
        index = 0

        def rollout(judged: bool | None, by: str | None, graded: bool = True) -> str:
            nonlocal index
            index += 1
            cursor.execute(_ROLLOUT, [f"run1:{index}", index, graded, judged, by])
            return f"run1:{index}"

        def label(target: str, passed: bool | None, reward: float | None = None,
                  kind: str = "human", at: int = 1) -> None:
            cursor.execute(_LABEL, [target, passed, reward, kind, "ana", at])

        # the judge: 22 human passes it passed, 1 human failure it passed, 2 it failed
        for _ in range(22):
            label(rollout(True, JUDGE), True)
        label(rollout(True, JUDGE), False)
        label(rollout(False, JUDGE), None, reward=0.2)  # reward below 0.5 → human failed
        changed = rollout(False, JUDGE)
        label(changed, True, at=1)
        label(changed, False, at=2)  # the newer label wins
        # conduct checks only: 3 labeled rollouts
        for judged, human in [(True, True), (False, False), (False, True)]:
            label(rollout(judged, CHECKS_ONLY), human)
        # left out: no label, a model label, an ungraded rollout, a label with no verdict
        rollout(True, JUDGE)
        label(rollout(True, JUDGE), False, kind="model")
        label(rollout(None, None, graded=False), True)
        label("run1:unknown", False)


def test_judge_report_from_a_real_store(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.duckdb")
    try:
        _fill(store)
        cursor = store.cursor()
        reports = judge_report(cursor)
        cursor.close()
    finally:
        store.close()
    assert [r.labeled_by for r in reports] == [CHECKS_ONLY, JUDGE]
    checks_only, judge = (r.agreement for r in reports)
    assert (checks_only.n, checks_only.agreement) == (3, 2 / 3) and checks_only.flagged
    assert (judge.n, judge.human_failed, judge.pass_when_gold_fails) == (25, 3, 1 / 3)
    assert judge.agreement == 24 / 25 and judge.flagged
    assert "may pass up to" in judge.why and "(1/3" in judge.why
    text = render_judge_report(reports)
    lines = text.splitlines()
    assert lines[0].split() == ["grader", "n", "agreement", "kappa", "pass-when-gold-fails",
                                "verdict"]
    assert any(line.startswith(JUDGE) and line.rstrip().endswith("FLAGGED") for line in lines)
    assert f"{JUDGE}: FLAGGED — " in text and "0.33 [" in text


def test_the_reward_threshold_decides_reward_only_labels(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.duckdb")
    try:
        with store.transaction() as cursor:
            cursor.execute(_ROLLOUT, ["run1:1", 1, True, True, JUDGE])
            cursor.execute(_LABEL, ["run1:1", None, 0.6, "human", "ana", 1])
        cursor = store.cursor()
        lenient = judge_report(cursor)[0].agreement
        strict = judge_report(cursor, threshold=0.7)[0].agreement
        cursor.close()
    finally:
        store.close()
    assert (lenient.agreement, lenient.human_failed) == (1.0, 0)
    assert (strict.agreement, strict.pass_when_gold_fails) == (0.0, 1.0)


def test_an_empty_report_says_how_to_label() -> None:
    assert "tracemill label" in render_judge_report([])
