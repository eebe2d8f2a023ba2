"""Naming a situation by the tool where it fails (*Where it fails* in
:mod:`processor.situations`), on real DuckDB stores built row by row.

Every tool a situation holds with the members to hold most of its failures is a candidate
name, and the one holding them is picked after looking: with several such tools one of
them collects most failures by chance now and then. A tool is named only when its test
survives Holm's correction over those tools.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processor.test_situations import Scenario, _run
from tracemill.store import Store, open_store

_TOOLS = tuple(f"tool_{index:02d}" for index in range(12))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path / "where.duckdb")
    yield opened
    opened.close()


def _stale(store: Store, failed: int, graded: int, others: int) -> dict[str, str]:
    """The flagged situations of a store with a background on 12 tools failing at ~3% in
    both versions and, in v2 only, ``world_state=stale``: ``graded`` conversations on
    tool_00 of which ``failed`` fail, and ``others`` on each of tool_01..tool_05, one of
    those 5 x ``others`` failing."""
    scenario = Scenario()
    for version, offset in (("v1", 0), ("v2", 1)):
        scenario.background(version, 1300, 0.03, 81 + offset, tool=_TOOLS)
    scenario.add("v2", failed, graded - failed, tool="tool_00", world_state="stale")
    for index, tool in enumerate(_TOOLS[1:6]):
        scenario.add("v2", int(index == 0), others - int(index == 0), tool=tool,
                     world_state="stale")
    return {label: s.status for label, s in _run(store, scenario).items()
            if s.status != "uncertain"}


def test_a_chance_winner_among_many_tools_is_not_named(store: Store) -> None:
    # stale fails in v2, 5 of 35 (14% against 3%): a new situation. 4 of the 5 failures
    # are on tool_00 (4/10 against 1/25 for the rest: Fisher p = 0.017). Any of the six
    # tools (5 members or more) could have held 4 of 5 failures: Holm over six asks
    # p < 0.05 / 6, so the situation keeps the cell's name
    assert _stale(store, 4, 10, others=5) == {"world_state=stale": "new"}


def test_tools_too_small_to_hold_the_failures_are_not_counted(store: Store) -> None:
    # 5 of tool_00's 12 fail and 1 of the 20 others (5/12 against 1/20: p = 0.019). The
    # other tools have 4 members each, fewer than 80% of the 6 failures: none of them
    # could have been named, so tool_00's is the only test and it names the situation
    assert _stale(store, 5, 12, others=4) == {"tool=tool_00 & world_state=stale": "new"}
