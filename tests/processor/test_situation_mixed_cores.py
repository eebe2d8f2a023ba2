"""Stance groups of different statuses in one cell, each read right for only part of its
members (*Read-axis cores* in :mod:`processor.situations`), on real DuckDB stores built
row by row.

In ``world_state=missing`` hurried users fail newly in v2 while conflicting users fail in
both versions. Pooled over both versions the new group is diluted by v1, where it does
not fail, and neither group keeps the cell's status: each group must still be found (in
the period it fails in) and judged with its own status, and the broad cell, whose excess
they explain, is not reported.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processor.test_situation_cores import _flagged_in_stream
from tests.processor.test_situations import Row, Scenario, _members, _run
from tracemill.store import Store, open_store

_STANCES = ("ordinary",) * 6 + ("hurried", "unsure", "frustrated", "conflicting", "mistaken",
                                "adversarial")
"""Stances of the background: half ordinary, the rest ~8% each (as in the tau2 stream)."""
_TOOLS = ("lookup", "refund", "update", "pay")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path / "mixed.duckdb")
    yield opened
    opened.close()


def _group(scenario: Scenario, version: str, failed: int, stance: str, **coordinates: str,
           ) -> None:
    """A group of 38 members on every tool, ``failed`` of them failing, whose stance reads
    right for 60% of them (23); the others are read ordinary (11) or as one of four other
    stances (1 each), failing alike."""
    reads = [stance] * 23 + ["ordinary"] * 11 + ["unsure", "frustrated", "mistaken",
                                                  "adversarial"]
    for index, read in enumerate(reads):
        outcome = "fail" if index * failed // len(reads) < (index + 1) * failed // len(reads) \
            else "pass"
        scenario.rows.append(Row(version, outcome, {
            **coordinates, "user_stance": read, "tool": _TOOLS[index % len(_TOOLS)]}))


def _mixed(seed: int, cell_fails: float = 0.1) -> Scenario:
    """Background everywhere at ~10%, 120 conversations per version in
    ``world_state=missing`` failing at ``cell_fails``, and in that cell a hurried group
    new in v2 (4 then 25 of 38 failing) and a conflicting group persistent (25 and 25)."""
    scenario = Scenario()
    for version, offset in (("v1", 0), ("v2", 1)):
        scenario.background(version, 1300, 0.1, seed + offset,
                            tool=(*_TOOLS, "enable_roaming"), user_stance=_STANCES)
        scenario.background(version, 120, cell_fails, seed + offset + 10, tool=_TOOLS,
                            world_state=("missing",), user_stance=_STANCES)
    for version, new, persistent in (("v1", 4, 25), ("v2", 25, 25)):
        _group(scenario, version, new, "hurried", world_state="missing")
        _group(scenario, version, persistent, "conflicting", world_state="missing")
    return scenario


@pytest.mark.parametrize("seed", [51, 53])
def test_a_new_and_a_persistent_stance_group_in_one_world_state_are_both_reported(
        store: Store, seed: int) -> None:
    # seed 51: discovery finds the conflicting group, and the cell without it is judged
    # new (the hurried group and what both groups leaked); seed 53: discovery finds only
    # the broad cell, persistent. Either way the two groups are reported, each with its
    # own status, and the broad cell is not
    scenario = _mixed(seed)
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert {label: status for label, status in flagged.items()
            if "world_state=missing" in label} == {
        "user_stance=hurried & world_state=missing": "new",
        "user_stance=conflicting & world_state=missing": "persistent"}
    # its members are the cell's conversations read with that stance, in both versions
    found = situations["user_stance=hurried & world_state=missing"]
    expected = sum(1 for row in scenario.rows
                   if row.coordinates.get("world_state") == "missing"
                   and row.coordinates.get("user_stance") == "hurried")
    assert len(_members(store, found.situation_id)) == expected


def test_a_cell_failing_beyond_its_stance_groups_is_still_reported(store: Store) -> None:
    # the same groups, but the whole cell also fails at ~35% in both versions: what its
    # rest fails is far more than the groups' misread members, so the stance groups do not
    # explain it and the broad cell stays reported, persistent
    situations = _run(store, _mixed(51, cell_fails=0.35))

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged.get("world_state=missing") == "persistent"


def test_the_background_alone_flags_nothing_in_the_cell(store: Store) -> None:
    # the rule finds nothing where nothing is planted: the same background and cell, each
    # group replaced by members of its stances failing like everything else
    scenario = Scenario()
    rng = random.Random(7)
    for version, offset in (("v1", 0), ("v2", 1)):
        scenario.background(version, 1300, 0.1, 51 + offset,
                            tool=(*_TOOLS, "enable_roaming"), user_stance=_STANCES)
        scenario.background(version, 120, 0.1, 61 + offset, tool=_TOOLS,
                            world_state=("missing",), user_stance=_STANCES)
        for stance in ("hurried", "conflicting"):
            _group(scenario, version, sum(rng.random() < 0.1 for _ in range(38)), stance,
                   world_state="missing")
    situations = _run(store, scenario)

    assert not [label for label, s in situations.items()
                if "world_state=missing" in label and s.status != "uncertain"]


def test_a_persistent_group_failing_no_more_than_a_cell_a_new_one_fills_is_reported(
        store: Store) -> None:
    # a tau2 stream (seed 752 of bench/processor_precision.py --openings test3), replayed
    # whole: in world_state=already_acted_on frustrated users fail newly (read frustrated:
    # 0 of 26 in v1, 17 of 22 in v2) and hurried users in both versions (13 of 33, 19 of
    # 37). In v2 the frustrated group makes the whole cell fail 52 of 88, so the hurried
    # users are a core in v1 only; their v2 members, failing far above the rate outside,
    # are the same group. Each is reported with its own status, and the broad cell, which
    # holds both, is not
    flagged = _flagged_in_stream(store, "tau2-752-test3", "already_acted_on")

    assert flagged == {"user_stance=frustrated & world_state=already_acted_on": "new",
                       "user_stance=hurried & world_state=already_acted_on": "persistent"}
