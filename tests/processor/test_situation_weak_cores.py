"""A stance group whose core keeps less than a quarter of its cell's excess, beside one
that keeps more (*Read-axis cores* in :mod:`processor.situations`), on real DuckDB stores
built row by row.

The stance is read from free text and right for only part of a group's members; the
misread ones fail in the rest of the cell. Of two groups in one world state, the weaker
one's core can keep less than ``NAMING_SHARE`` of the cell's excess: counted as leak, its
failures kept the broad cell reported in place of both groups (tau2 development seed 108:
``user_stance=frustrated & world_state=missing`` at 24% of the excess). A further core
keeping ``CORE_SHARE`` is taken with the first when the rest fails more than the cores
leaked; only as many as that takes, so a stance where misread members land is not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from processor._narrowing import CORE_SHARE
from tests.processor.test_situations import Row, Scenario, _members, _run
from tracemill.store import Store, open_store

_STANCES = ("ordinary",) * 6 + ("hurried", "unsure", "frustrated", "conflicting", "mistaken",
                                "adversarial")
"""Stances of the background: half ordinary, the rest ~8% each (as in the tau2 stream)."""
_TOOLS = ("lookup", "refund", "update", "pay")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path / "weak.duckdb")
    yield opened
    opened.close()


def _group(scenario: Scenario, version: str, failed: int, stance: str, read_right: int,
           **coordinates: str) -> None:
    """A group of 38 members on every tool, ``failed`` of them failing, whose stance reads
    right for ``read_right`` of them; of the others two thirds are read ordinary and one
    third hurried, failing alike."""
    misread = 38 - read_right
    reads = [stance] * read_right + ["ordinary"] * (misread - misread // 3) + \
        ["hurried"] * (misread // 3)
    for index, read in enumerate(reads):
        outcome = "fail" if index * failed // len(reads) < (index + 1) * failed // len(reads) \
            else "pass"
        scenario.rows.append(Row(version, outcome, {
            **coordinates, "user_stance": read, "tool": _TOOLS[index % len(_TOOLS)]}))


def _two_groups(seed: int, weak_failed: int, weak_read: int) -> Scenario:
    """Background everywhere at ~10%, 120 conversations per version in
    ``world_state=missing`` failing alike, and in that cell two groups fixed in v2: a
    conflicting one (26 of 38 failing in v1, read right for 24) and a frustrated one
    (``weak_failed`` of 38 failing in v1, read right for ``weak_read``)."""
    scenario = Scenario()
    for version, offset in (("v1", 0), ("v2", 1)):
        scenario.background(version, 1300, 0.1, seed + offset,
                            tool=(*_TOOLS, "enable_roaming"), user_stance=_STANCES)
        scenario.background(version, 120, 0.1, seed + offset + 10, tool=_TOOLS,
                            world_state=("missing",), user_stance=_STANCES)
    for version, strong, weak in (("v1", 26, weak_failed), ("v2", 2, 2)):
        _group(scenario, version, strong, "conflicting", 24, world_state="missing")
        _group(scenario, version, weak, "frustrated", weak_read, world_state="missing")
    return scenario


def _excess_share(scenario: Scenario, stance: str) -> float:
    """The share of ``world_state=missing``'s excess in v1 (over v1's rate outside it)
    that its members read as ``stance`` keep."""
    v1 = [row for row in scenario.rows if row.version == "v1"]
    inside = [row for row in v1 if row.coordinates.get("world_state") == "missing"]
    outside = [row for row in v1 if row.coordinates.get("world_state") != "missing"]
    rate = sum(row.outcome == "fail" for row in outside) / len(outside)

    def excess(rows: list[Row]) -> float:
        return sum(row.outcome == "fail" for row in rows) - len(rows) * rate

    return excess([row for row in inside if row.coordinates.get("user_stance") == stance]) \
        / excess(inside)


@pytest.mark.parametrize("seed", [51, 59, 63])
def test_a_stance_group_keeping_under_a_quarter_of_the_excess_is_still_reported(
        store: Store, seed: int) -> None:
    # world_state=missing holds two groups fixed in v2, conflicting and frustrated users;
    # the frustrated one fails less and is read right less often, so its core keeps
    # under a quarter of the cell's excess. Both groups are reported, each fixed, and
    # the broad cell, whose excess they explain, is not
    scenario = _two_groups(seed, weak_failed=18, weak_read=22)
    assert CORE_SHARE <= _excess_share(scenario, "frustrated") < 0.25
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert {label: status for label, status in flagged.items()
            if "world_state=missing" in label} == {
        "user_stance=conflicting & world_state=missing": "fixed",
        "user_stance=frustrated & world_state=missing": "fixed"}
    # hurried, where a third of both groups' misread members land and fail, is no group
    found = situations["user_stance=frustrated & world_state=missing"]
    expected = sum(1 for row in scenario.rows
                   if row.coordinates.get("world_state") == "missing"
                   and row.coordinates.get("user_stance") == "frustrated")
    assert len(_members(store, found.situation_id)) == expected


def test_a_cell_failing_beyond_its_stance_groups_is_still_reported(store: Store) -> None:
    # the same two groups, but the whole cell also fails at ~35% in v1: the rest fails
    # far more than both groups leaked, so the broad cell stays reported, fixed
    scenario = _two_groups(51, weak_failed=18, weak_read=22)
    rows = scenario.rows
    for index, row in enumerate(rows):
        if row.version == "v1" and row.coordinates.get("world_state") == "missing" and \
                row.coordinates.get("user_stance") not in ("conflicting", "frustrated") and \
                row.outcome == "pass" and index % 3 == 0:
            rows[index] = Row(row.version, "fail", row.coordinates)
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged.get("world_state=missing") == "fixed"
