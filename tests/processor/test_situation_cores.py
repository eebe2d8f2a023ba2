"""Groups on the stance axis read right for only part of their members (*Read-axis
cores* in :mod:`processor.situations`), on real DuckDB stores built row by row.

The stance is read from free text and a reader gets 55-70% of a group's members right on
text it was not tuned on; the others land in other stances of the same cell, mostly the
usual one. A broad cell holding such groups must still be reported as the groups.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.plan_inputs import load_plan_inputs
from processor._misreading import Misreads
from processor.failure_map import compute_map, store_map
from processor.map_records import read_situations
from processor.summary import sentence
from tests.processor.test_situations import Row, Scenario, _members, _run
from tracemill.store import Store, open_store

_STANCES = ("ordinary",) * 6 + ("hurried", "unsure", "frustrated", "conflicting", "mistaken",
                                "adversarial")
"""Stances of the background: half ordinary, the rest ~8% each (as in the tau2 stream)."""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path / "cores.duckdb")
    yield opened
    opened.close()


def _background(scenario: Scenario, seed: int, world_state: str, size: int) -> None:
    """A production-like background: every tool and stance failing at ~10%, and ``size``
    conversations per version in ``world_state`` failing alike."""
    for version, offset in (("v1", 0), ("v2", 1)):
        scenario.background(version, 1300, 0.1, seed + offset,
                            tool=("lookup", "refund", "update", "pay", "enable_roaming"),
                            user_stance=_STANCES)
        scenario.background(version, size, 0.1, seed + offset + 10,
                            tool=("lookup", "refund", "update", "pay"),
                            world_state=(world_state,), user_stance=_STANCES)


def _store_background(scenario: Scenario, seed: int, rates: tuple[float, float],
                      tools: tuple[str, ...] = ("lookup", "refund", "update")) -> None:
    """1,300 conversations per version over ``tools`` and every stance, failing at
    ``rates`` (v1, v2), drawn with seeds ``seed`` and ``seed + 1``."""
    for version, rate, offset in (("v1", rates[0], 0), ("v2", rates[1], 1)):
        scenario.background(version, 1300, rate, seed + offset, tool=tools,
                            user_stance=_STANCES)


def _read_60_percent(scenario: Scenario, version: str, failed: int, passed: int,
                     stance: str, **coordinates: str) -> None:
    """A group of ``failed + passed`` members (38) on every tool, whose stance reads right
    for 60% of them (23), the others read ordinary (10) or hurried (5), failing alike."""
    tools = ("lookup", "refund", "update", "pay")
    total = failed + passed
    index = 0
    for read, size in ((stance, 23), ("ordinary", 10), ("hurried", 5)):
        for _ in range(size):
            outcome = "fail" if index * failed // total < (index + 1) * failed // total \
                else "pass"
            scenario.rows.append(Row(version, outcome, {
                **coordinates, "user_stance": read, "tool": tools[index % len(tools)]}))
            index += 1


def _spread(scenario: Scenario, version: str, failed: int, passed: int,
            **coordinates: str) -> None:
    """A group of ``failed + passed`` members with every stance, failing alike."""
    total = failed + passed
    for index in range(total):
        outcome = "fail" if index * failed // total < (index + 1) * failed // total else "pass"
        scenario.rows.append(Row(version, outcome, {
            **coordinates, "user_stance": _STANCES[index % len(_STANCES)]}))


def test_two_stance_groups_read_60_percent_right_are_two_situations(store: Store) -> None:
    # world_state=missing holds two groups fixed in v2, one of frustrated and one of
    # conflicting users, each read right for 60% of its members; the misread ones fail
    # in the rest of the cell, so the rest fails too. Each group is one situation,
    # named by its stance; the broad cell is not reported
    scenario = Scenario()
    _background(scenario, 51, "missing", 120)
    for stance in ("frustrated", "conflicting"):
        _read_60_percent(scenario, "v1", 25, 13, stance, world_state="missing")
        _read_60_percent(scenario, "v2", 2, 36, stance, world_state="missing")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert "world_state=missing" not in flagged
    assert flagged["user_stance=conflicting & world_state=missing"] == "fixed"
    assert flagged["user_stance=frustrated & world_state=missing"] == "fixed"
    assert sorted(label for label in flagged if "world_state=missing" in label) == [
        "user_stance=conflicting & world_state=missing",
        "user_stance=frustrated & world_state=missing"]
    # its members are the cell's conversations read with that stance, in both versions
    found = situations["user_stance=frustrated & world_state=missing"]
    expected = sum(1 for row in scenario.rows
                   if row.coordinates.get("world_state") == "missing"
                   and row.coordinates.get("user_stance") == "frustrated")
    assert len(_members(store, found.situation_id)) == expected


def test_a_tool_group_beside_a_partly_read_stance_group_is_not_the_broad_cell(
        store: Store) -> None:
    # world_state=already_acted_on holds two groups fixed in v2: one on tool=enable_roaming
    # (any stance) and one of mistaken users on other tools, read right for 60% of them.
    # The broad cell is not reported: the stance group is, and so is the tool group
    scenario = Scenario()
    _background(scenario, 61, "already_acted_on", 60)
    for version, (failed, passed) in (("v1", (25, 13)), ("v2", (2, 36))):
        _spread(scenario, version, failed, passed, tool="enable_roaming",
                world_state="already_acted_on")
        _read_60_percent(scenario, version, failed, passed, "mistaken",
                         world_state="already_acted_on")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert "world_state=already_acted_on" not in flagged
    assert flagged == {"tool=enable_roaming & world_state=already_acted_on": "fixed",
                       "user_stance=mistaken & world_state=already_acted_on": "fixed"}


def test_a_tool_group_filling_most_of_a_world_state_is_named_by_its_tool(
        store: Store) -> None:
    # already_acted_on is mostly one group fixed in v2, on tool=enable_roaming (the tool
    # also succeeds elsewhere); the cell's few other conversations (other tools answering
    # "already") fail like everything else. The tool covers more than 80% of the cell, yet
    # it is where the cell fails: the situation is named by it, not by the broad cell
    scenario = Scenario()
    _background(scenario, 71, "already_acted_on", 7)
    for version, (failed, passed) in (("v1", (25, 13)), ("v2", (2, 36))):
        _spread(scenario, version, failed, passed, tool="enable_roaming",
                world_state="already_acted_on")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged == {"tool=enable_roaming & world_state=already_acted_on": "fixed"}


def test_a_stance_group_over_several_tools_is_not_named_by_the_tool_holding_most(
        store: Store) -> None:
    # already_acted_on holds a tool group on enable_roaming failing in both versions (any
    # stance) and a group of adversarial users fixed in v2, spread over two other tools
    # (18 and 15 members in v1). Once the tool group is judged, the cell's remainder is the
    # stance group, 57% of it on disable_roaming: a tool holds all of its group's members,
    # so a tool holding 57% of the remainder does not name it. The stance group is one
    # situation, not its larger part on one tool
    scenario = Scenario()
    _background(scenario, 81, "already_acted_on", 20)
    for version in ("v1", "v2"):
        _spread(scenario, version, 24, 14, tool="enable_roaming",
                world_state="already_acted_on")
    for version, tool, failed, passed in (("v1", "disable_roaming", 12, 6),
                                          ("v1", "send_payment_request", 9, 6),
                                          ("v2", "disable_roaming", 0, 14),
                                          ("v2", "send_payment_request", 0, 17)):
        for index in range(failed + passed):
            scenario.rows.append(Row(version, "fail" if index < failed else "pass", {
                "tool": tool, "world_state": "already_acted_on",
                "user_stance": "adversarial"}))
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged == {"tool=enable_roaming & world_state=already_acted_on": "persistent",
                       "user_stance=adversarial & world_state=already_acted_on": "fixed"}


def test_a_fixed_tool_group_beside_a_persistent_stance_group_is_named_by_its_tool(
        store: Store) -> None:
    # already_acted_on holds a group of frustrated users failing in both versions on four
    # other tools, read right for 60% of them (the others read ordinary or hurried), and a
    # group on tool=enable_roaming fixed in v2, most of its users ordinary. Once the stance
    # group is judged, the cell's remainder is fixed and most of its failing members are
    # read ordinary, where misread members land: that value names no group. The tool holds
    # most of the remainder's failures but not 80% (the misread frustrated members fail
    # there too); yet in v2 the rest of the remainder still fails where the tool no longer
    # does: the change is the tool's, and the fixed situation is named by it
    scenario = Scenario()
    _background(scenario, 91, "already_acted_on", 20)
    for version, (failed, passed) in (("v1", (25, 13)), ("v2", (1, 37))):
        for index in range(failed + passed):
            scenario.rows.append(Row(version, "fail" if index < failed else "pass", {
                "tool": "enable_roaming", "world_state": "already_acted_on",
                "user_stance": "ordinary" if index % 5 else _STANCES[6 + index // 5 % 6]}))
        _read_60_percent(scenario, version, 25, 13, "frustrated",
                         world_state="already_acted_on")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged == {"tool=enable_roaming & world_state=already_acted_on": "fixed",
                       "user_stance=frustrated & world_state=already_acted_on": "persistent"}


def test_a_tool_group_beside_a_stance_group_read_in_part_is_two_situations(
        store: Store) -> None:
    # a tau2 stream (seed 868 of bench/processor_precision.py --openings test2), replayed
    # whole: in world_state=already_acted_on send_payment_request fails in both versions (22
    # of 38 each) and so do frustrated users of the other tools (14 of 25 read frustrated in
    # v1, 16 of 29 in v2). The two held 38 of the cell's 48 v2 failures, under COINCIDE:
    # the rest is mostly the stance group's misread members (6 of 11 read ordinary
    # failing). Both groups are reported, and the broad cell is not
    flagged = _flagged_in_stream(store, "tau2-868-test2", "already_acted_on")

    assert flagged == {
        "tool=send_payment_request & world_state=already_acted_on": "persistent",
        "user_stance=frustrated & world_state=already_acted_on": "persistent"}


def test_two_groups_that_go_together_less_by_chance_are_still_two(store: Store) -> None:
    # a tau2 stream (seed 901 of bench/processor_precision.py --openings test2), replayed
    # whole: in world_state=already_acted_on enable_roaming and frustrated users of the
    # other tools fail newly in v2; they hold 47 of the cell's 57 v2 failures and share
    # none. Outside the world state 4 frustrated users of enable_roaming were graded in v2
    # where independence predicts 8.5: a chance shortfall (Fisher p > 0.05), not two values
    # that exclude each other by construction. Both groups are reported, the cell is not
    flagged = _flagged_in_stream(store, "tau2-901-test2", "already_acted_on")

    assert flagged == {"tool=enable_roaming & world_state=already_acted_on": "new",
                       "user_stance=frustrated & world_state=already_acted_on": "new"}


_ALREADY_ACTED_ON = (  # (version, tool, stance read, failed, passed)
    ("v1", "disable_roaming", "adversarial", 0, 1), ("v1", "disable_roaming", "conflicting", 0, 4),
    ("v1", "disable_roaming", "frustrated", 1, 0), ("v1", "disable_roaming", "hurried", 0, 3),
    ("v1", "disable_roaming", "mistaken", 0, 7), ("v1", "disable_roaming", "ordinary", 1, 16),
    ("v1", "disable_roaming", "unsure", 1, 4), ("v1", "enable_roaming", "conflicting", 1, 1),
    ("v1", "enable_roaming", "frustrated", 3, 10), ("v1", "enable_roaming", "hurried", 1, 2),
    ("v1", "enable_roaming", "mistaken", 0, 1), ("v1", "enable_roaming", "ordinary", 1, 2),
    ("v1", "enable_roaming", "unsure", 1, 1), ("v1", "send_payment_request", "frustrated", 7, 9),
    ("v1", "send_payment_request", "hurried", 1, 0),
    ("v1", "send_payment_request", "mistaken", 0, 1),
    ("v1", "send_payment_request", "ordinary", 1, 0),
    ("v2", "disable_roaming", "adversarial", 1, 1), ("v2", "disable_roaming", "conflicting", 2, 0),
    ("v2", "disable_roaming", "frustrated", 1, 1), ("v2", "disable_roaming", "hurried", 6, 2),
    ("v2", "disable_roaming", "mistaken", 2, 0), ("v2", "disable_roaming", "ordinary", 14, 5),
    ("v2", "disable_roaming", "unsure", 2, 1), ("v2", "enable_roaming", "adversarial", 0, 1),
    ("v2", "enable_roaming", "frustrated", 7, 4), ("v2", "enable_roaming", "hurried", 3, 2),
    ("v2", "enable_roaming", "ordinary", 0, 3),
    ("v2", "send_payment_request", "conflicting", 0, 1),
    ("v2", "send_payment_request", "frustrated", 11, 5),
    ("v2", "send_payment_request", "hurried", 0, 1),
    ("v2", "send_payment_request", "ordinary", 1, 4),
    ("v2", "send_payment_request", "unsure", 1, 1))
"""``world_state=already_acted_on`` of a tau2 stream (seed 253 of
``bench/processor_precision.py --openings test3``): a group on tool=disable_roaming failing
since v2 and a group of frustrated users on enable_roaming and send_payment_request failing
in both versions, most of them read frustrated."""


def test_a_new_tool_group_beside_a_persistent_stance_group_is_two_situations(
        store: Store) -> None:
    # discovery keeps only the broad cell, persistent as a whole (the stance group fails in
    # both versions, the tool group in v2); its failing members in v2 are the two groups,
    # which seldom share a coordinate. Each group is reported with its own status, and the
    # broad cell is not (it was, before the parts of a mixture could differ in status)
    scenario = Scenario()
    tools = ("disable_roaming", "enable_roaming", "send_payment_request", "lookup", "refund")
    for version, seed in (("v1", 81), ("v2", 82)):
        scenario.background(version, 1400, 0.11, seed, tool=tools, user_stance=_STANCES)
    for version, tool, stance, failed, passed in _ALREADY_ACTED_ON:
        scenario.add(version, failed, passed, tool=tool, user_stance=stance,
                     world_state="already_acted_on",
                     tool_condition="error" if tool == "send_payment_request" else "success")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged == {"tool=disable_roaming & world_state=already_acted_on": "new",
                       "user_stance=frustrated & world_state=already_acted_on": "persistent"}


_MISSING = (  # (version, on the passengers tool, stance read, failed, passed)
    ("v1", False, "adversarial", 0, 9), ("v1", False, "conflicting", 0, 11),
    ("v1", False, "frustrated", 0, 9), ("v1", False, "hurried", 2, 18),
    ("v1", False, "mistaken", 2, 24), ("v1", False, "ordinary", 7, 66),
    ("v1", False, "unsure", 1, 9), ("v1", True, "adversarial", 0, 6),
    ("v1", True, "conflicting", 0, 2), ("v1", True, "frustrated", 0, 5),
    ("v1", True, "hurried", 0, 3), ("v1", True, "mistaken", 0, 1), ("v1", True, "ordinary", 0, 19),
    ("v1", True, "unsure", 0, 2), ("v2", False, "adversarial", 2, 5),
    ("v2", False, "conflicting", 5, 8), ("v2", False, "frustrated", 0, 7),
    ("v2", False, "hurried", 4, 19), ("v2", False, "mistaken", 12, 14),
    ("v2", False, "ordinary", 14, 69), ("v2", False, "unsure", 3, 8),
    ("v2", True, "adversarial", 2, 2), ("v2", True, "frustrated", 3, 1),
    ("v2", True, "hurried", 5, 0), ("v2", True, "ordinary", 18, 3), ("v2", True, "unsure", 3, 1))
"""``world_state=missing`` of a tau2 stream (seed 255 of ``bench/processor_precision.py
--openings test3``): a group on update_reservation_passengers failing since v2 and a group
of mistaken users on other tools failing since v2, read mistaken for about half of its
failing members (the others mostly ordinary)."""


def test_a_tool_group_failing_far_above_the_rest_of_its_cell_is_not_a_fragment(
        store: Store) -> None:
    # the tool group is inside world_state=missing with its status (new), and the rest of
    # the cell fails too (the stance group, half misread). A fragment of a group that
    # extends into the rest would fail like that rest; this one fails 82% against 24%, so
    # it is a group of its own: reported beside the stance group, and the broad cell is not
    scenario = Scenario()
    tools = ("update_reservation_passengers", "lookup", "refund", "update")
    for version, seed in (("v1", 91), ("v2", 92)):
        scenario.background(version, 1220, 0.13, seed, tool=tools, user_stance=_STANCES)
    for version, passengers, stance, failed, passed in _MISSING:
        for index in range(failed + passed):
            tool = tools[0] if passengers else tools[1 + index % 3]
            scenario.add(version, int(index < failed), int(index >= failed), tool=tool,
                         user_stance=stance, world_state="missing")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert "world_state=missing" not in flagged
    assert flagged["tool=update_reservation_passengers & world_state=missing"] == "new"
    assert flagged["user_stance=mistaken & world_state=missing"] == "new"



def test_a_new_group_over_every_stance_is_not_split_into_the_stances_it_reads_most(
        store: Store) -> None:
    # already_acted_on of the blind retail benchmark (seed 3): one group new in v2 over
    # every stance (cancelling an order already cancelled), read conflicting or unsure a
    # little more often among its failing members (77% of them fail against 66% of the
    # rest of the cell in v2). Against the rest pooled over both versions (37%: v1 passes)
    # those two stances stand out; but frustrated and hurried fail 78% in v2 too: one group
    # over every stance, reported as the cell (and by its tool: every member cancels)
    scenario = Scenario()
    _store_background(scenario, 93, (0.12, 0.12))
    for version, stance, failed, passed in (
            ("v1", "conflicting", 0, 23), ("v1", "frustrated", 1, 11), ("v1", "hurried", 0, 5),
            ("v1", "ordinary", 1, 30), ("v1", "unsure", 2, 27), ("v2", "conflicting", 24, 7),
            ("v2", "frustrated", 8, 2), ("v2", "hurried", 6, 2), ("v2", "ordinary", 21, 14),
            ("v2", "unsure", 12, 4)):
        scenario.add(version, failed, passed, tool="cancel", user_stance=stance,
                     world_state="already_acted_on")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert {label: status for label, status in flagged.items()
            if "already_acted_on" in label} == {
        "tool=cancel & world_state=already_acted_on": "new"}



_STREAM_273 = Path(__file__).parent / "data" / "tau2-273-test3-cells.csv"
"""Every conversation of a tau2 stream (seed 273 of ``bench/processor_precision.py
--openings test3``) as cell counts: (version, the six axes, failed, passed, ungraded)."""


def test_a_cell_of_two_tool_groups_is_named_by_the_one_failing_in_both_versions(
        store: Store) -> None:
    # payment requests already sent fail in both versions (each answers with an error), and
    # conflicting users changing flights fail since v2, whether the flights tool answered
    # with an error (as it often does) or not. In v2 both groups fail inside
    # tool_condition=error and neither stands out from the other there, so discovery keeps
    # the error cell, persistent, which took the payment group's members before the payment
    # tool was judged; its stances were then read as two groups. Both versions pooled, the
    # payment tool stands out from the rest of the cell, and that rest, without the flights
    # tool's members (a situation of its own), fails like the rest of the store: the cell is
    # the payment group, and the flights group is new on its own
    scenario = Scenario()
    _replay(scenario, _STREAM_273)
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert not [label for label in flagged if "tool_condition=error" in label
                and "send_payment_request" not in label]
    assert [status for label, status in flagged.items()
            if "send_payment_request" in label] == ["persistent"]
    assert flagged.get("tool=update_reservation_flights & user_stance=conflicting") == "new"


_AXES = ("tool", "tool_condition", "world_state", "history", "user_stance", "policy_rule")


def test_a_tool_condition_failing_in_both_versions_names_its_tool(store: Store) -> None:
    # get_data_usage of a tau2 stream (seed 106 of bench/processor_precision.py --openings
    # test2): its timeouts fail about 40% in both versions against 11-16% elsewhere. In
    # each version alone the timeouts do not stand out from the tool's other calls at the
    # significance discovery asks for, so the tool is kept, and as a whole it is no clear
    # status. Both versions pooled they do: the timeouts are a persistent group
    scenario = Scenario()
    _store_background(scenario, 97, (0.11, 0.16))
    for version, condition, failed, passed in (
            ("v1", "not_found", 3, 11), ("v1", "permission_denied", 0, 3),
            ("v1", "success", 9, 56), ("v1", "timeout", 14, 24),
            ("v2", "not_found", 3, 10), ("v2", "permission_denied", 0, 2),
            ("v2", "success", 11, 58), ("v2", "timeout", 16, 22)):
        scenario.add(version, failed, passed, tool="get_data_usage", tool_condition=condition,
                     world_state="missing" if condition == "not_found" else "entity_exists")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged.get("tool=get_data_usage & tool_condition=timeout") == "persistent"
    assert "tool=get_data_usage" not in flagged


def test_a_situation_whose_rest_is_background_is_named_by_the_tool_holding_its_failures(
        store: Store) -> None:
    # permission_denied of a tau2 stream (seed 280 of bench/processor_precision.py
    # --openings test2): get_flight_status fails 66% in both versions and refuel_data 47%
    # in v1 only. Without the first (a situation of its own), the cell is fixed, and
    # refuel_data holds 18 of its 23 failures in v1: not the 80% that names a group by its
    # tool, for the other tools' calls there fail at 17%, like calls elsewhere (10%, not
    # significantly less). That rest is background, so the tool names the group
    scenario = Scenario()
    tools = ("lookup", "refund", "update", "get_flight_status", "refuel_data")
    _store_background(scenario, 99, (0.115, 0.13), tools)
    for version, tool, failed, passed in (
            ("v1", "get_flight_status", 25, 13), ("v2", "get_flight_status", 25, 13),
            ("v1", "refuel_data", 18, 20), ("v2", "refuel_data", 3, 35),
            ("v1", "lookup", 2, 8), ("v1", "refund", 2, 8), ("v1", "update", 1, 8),
            ("v2", "lookup", 1, 11), ("v2", "refund", 1, 11), ("v2", "update", 0, 11)):
        scenario.add(version, failed, passed, tool=tool, tool_condition="permission_denied")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged == {
        "tool=get_flight_status & tool_condition=permission_denied": "persistent",
        "tool=refuel_data & tool_condition=permission_denied": "fixed"}


def _replay(scenario: Scenario, stream: Path) -> None:
    """Every conversation of a stream stored as cell counts (a data file of this folder)."""
    with stream.open(newline="") as rows:
        for row in csv.DictReader(rows):
            scenario.add(row["version"], int(row["failed"]), int(row["passed"]),
                         int(row["ungraded"]), **{axis: row[axis] for axis in _AXES})


def _flagged_in_stream(store: Store, name: str, holding: str) -> dict[str, str]:
    """The flagged situations (label -> status) whose label holds ``holding``, of the
    stream ``data/<name>-cells.csv`` replayed whole."""
    scenario = Scenario()
    _replay(scenario, Path(__file__).parent / "data" / f"{name}-cells.csv")
    return {label: s.status for label, s in _run(store, scenario).items()
            if s.status != "uncertain" and holding in label}


READER_CONFUSIONS = {"conflicting": {"mistaken": 0.4, "hurried": 0.27, "adversarial": 0.11,
                                     "frustrated": 0.06, "ordinary": 1.17}}
"""How the session-14 reader misread conflicting asks for each one it read right, on dev8
framed (processor/data/stance_confusion.json when the streams below were read by it)."""


def _flagged_misread(store: Store, name: str, holding: str,
                     misreads: Misreads) -> dict[str, str]:
    """As :func:`_flagged_in_stream`, the map computed knowing how the stances were
    misread (``misreads``: the readings in the data file are that reader's)."""
    scenario = Scenario()
    _replay(scenario, Path(__file__).parent / "data" / f"{name}-cells.csv")
    scenario.write(store)
    with store.transaction() as cursor:
        store_map(cursor, compute_map(cursor, misreads=misreads))
    return {label: status for label, status in store.query(
        "SELECT label, status FROM situations") if status != "uncertain" and holding in label}


def test_a_stance_core_of_misread_members_is_left_in_the_rest(store: Store) -> None:
    # enable_roaming of a tau2 stream (seed 291 of bench/processor_precision.py --openings
    # test2), replayed whole: mistaken users failed in v1 (11 of 24 read mistaken) and pass
    # in v2; the group's misread members are mostly read hurried (8 of 26 fail in v1).
    # The tool as a whole is no clear status (20% -> 11%). In v1 both stances are cores,
    # but the hurried one, judged on its own, is no status: it is what the mistaken group
    # leaked, so the mistaken core alone replaces the tool, fixed
    assert _flagged_in_stream(store, "tau2-291-test2", "enable_roaming") == {
        "tool=enable_roaming & user_stance=mistaken": "fixed"}


def test_a_stance_core_the_reader_puts_a_groups_members_in_is_part_of_that_group(
        store: Store) -> None:
    # suspend_line of a tau2 stream (seed 269 of bench/processor_precision.py --openings
    # test2), replayed whole: users whose asks contradict themselves fail in v2 (26 of the
    # tool's 35 failures there). The reader read 12 of those 26 as conflicting, 5 as
    # mistaken, 5 as hurried and 4 as plain, so the tool's cell (35/106 against 5/106) has
    # two stance cores, conflicting (12/19) and mistaken (6/14). On openings it was not
    # trained on, that reader read 0.4 conflicting asks as mistaken for each one it read
    # right (READER_CONFUSIONS): the mistaken core fails no more than
    # the conflicting core's misread members would make it, so it is not a group of its
    # own; the conflicting core alone leaves more failing in the rest than it keeps, so the
    # group is the tool's cell, new (the planted group: 26 of its 35 failures)
    assert _flagged_misread(store, "tau2-269-test2", "suspend_line",
                            READER_CONFUSIONS) == {"tool=suspend_line": "new"}


def test_a_stance_core_is_a_group_of_its_own_when_the_reader_is_unknown(
        store: Store) -> None:
    # the same stream as conversations whose stances no known reader read (written into the
    # store, not built from spans: processing them uses no confusions): nothing says how
    # they were misread, so both cores are groups
    assert _flagged_in_stream(store, "tau2-269-test2", "suspend_line") == {
        "tool=suspend_line & user_stance=conflicting": "new",
        "tool=suspend_line & user_stance=mistaken": "new"}


def test_a_misread_core_of_a_fixed_group_is_part_of_it(store: Store) -> None:
    # suspend_line of a tau2 stream (seed 261, --openings test2): conflicting users failed
    # in v1 and pass in v2 (21 failing in v1); read conflicting for 9 of them and hurried
    # for 5 of those failing in v1 (that reader read 0.27 conflicting asks as hurried per
    # one read right): the tool, fixed, not a conflicting and a hurried group
    assert _flagged_misread(store, "tau2-261-test2", "suspend_line",
                            READER_CONFUSIONS) == {"tool=suspend_line": "fixed"}


def test_a_coordinate_one_version_named_is_dropped_when_both_do_not_bear_it_out(
        store: Store) -> None:
    # cancel_reservation of a tau2 stream (seed 310 of bench/processor_precision.py
    # --openings test2), replayed whole: hurried users fail there in both versions (64% in
    # v1, 73% in v2). In v1, by chance, those without a policy rule fail 16 of 17 against
    # 7 of 19, and discovery named the group by that rule; in v2 it is the other way round
    # (9/13 against 13/17). Judged without that triple, the rest of the pair was no clear
    # status. Both versions pooled the rule does not stand out (25/30 against 20/36) and
    # the rest fails in both versions: the group is the pair, persistent
    assert _flagged_in_stream(store, "tau2-310-test2", "cancel_reservation") == {
        "tool=cancel_reservation & user_stance=hurried": "persistent"}


def test_a_round_whose_name_leaves_out_the_picked_cell_sets_aside_only_the_named_cell(
        store: Store) -> None:
    # a tau2 stream (seed 317 of bench/processor_precision.py --openings test2), replayed
    # whole. Discovery in v1 picked history=fresh & tool_condition=error and named it
    # world_state=already_acted_on: inside that world state neither picked coordinate
    # narrows anything, so the name left both out, and the cell set aside was the cell of
    # no coordinates, every conversation. v1 then had no second round, and mistaken users
    # of missing things, failing 24 of 36 in v1 and 2 of 28 in v2, were never found
    flagged = _flagged_in_stream(store, "tau2-317-test2", "")
    assert flagged["user_stance=mistaken & world_state=missing"] == "fixed"
    assert flagged["tool=send_payment_request & world_state=already_acted_on"] == "fixed"


def test_a_stance_group_beside_a_tool_group_is_not_widened_by_what_it_leaked(
        store: Store) -> None:
    # already_acted_on of a tau2 stream (seed 363 of bench/processor_precision.py
    # --openings test3), replayed whole: enable_roaming fails there in both versions, and so
    # do hurried users of the other tools, two thirds of them read hurried (the others read
    # ordinary, conflicting or adversarial, failing as often). The cell is split into the
    # two groups; the tool group's wider cell, without the stance group, still fails above
    # the rest of the store in both versions, but by less than the stance group leaked:
    # that is no evidence the tool group is wider, and both stay
    assert _flagged_in_stream(store, "tau2-363-test3", "already_acted_on") == {
        "tool=enable_roaming & world_state=already_acted_on": "persistent",
        "user_stance=hurried & world_state=already_acted_on": "persistent"}


def test_a_cell_of_two_tool_groups_failing_in_both_versions_is_named_by_both_tools(
        store: Store) -> None:
    # permission_denied of a tau2 stream (seed 370 of bench/processor_precision.py
    # --openings test3), replayed whole: update_reservation_passengers and
    # send_payment_request fail there in both versions (28% and 26%), the cell's other
    # tools like calls elsewhere. Neither tool stands out from a rest holding the other, so
    # the cell was kept whole; both versions pooled, each stands out from the part of the
    # cell neither holds, and that part fails like the rest of the store: two situations
    assert _flagged_in_stream(store, "tau2-370-test3", "permission_denied") == {
        "tool=send_payment_request & tool_condition=permission_denied": "persistent",
        "tool=update_reservation_passengers & tool_condition=permission_denied": "persistent"}



@pytest.mark.parametrize(("name", "tool"), [("tau2-392-test2", "send_certificate"),
                                            ("tau2-399-test2", "cancel_reservation")])
def test_a_tool_group_is_not_split_by_a_chance_lean_of_the_usual_stance(
        store: Store, name: str, tool: str) -> None:
    # two tau2 streams (seeds 392 and 399 of bench/processor_precision.py --openings test2),
    # replayed whole: a tool fails on missing things in v2 (28 of 38; 27 of 38). By chance,
    # the group's users read ordinary lean to one policy rule (seed 392: 11 of 12
    # conversations without an evaluation, policy_rule=unspecified, are read ordinary,
    # against 10 of 26 with one), so its failing members looked like two disjoint groups,
    # ordinary users and that rule, and were split in two. ``ordinary`` is where misread
    # members land and holds about half of any group: it names no group of its own
    assert _flagged_in_stream(store, name, tool) == {
        f"tool={tool} & world_state=missing": "new"}


def test_two_call_cells_that_tie_are_named_in_the_canonical_axis_order(store: Store) -> None:
    # a tau2 stream (seed 390 of bench/processor_precision.py --openings test2), replayed
    # whole: conflicting users fail on missing things in both versions (10 of 18, 11 of 21).
    # The stance as a whole is no clear status; both versions pooled, the group is one call
    # value narrower, and there world_state=missing and tool_condition=not_found hold the
    # same conversations. The tie goes to the world state, as in discovery (AXIS_ORDER)
    flagged = _flagged_in_stream(store, "tau2-390-test2", "conflicting")
    assert flagged == {"user_stance=conflicting & world_state=missing": "persistent"}


def test_a_name_of_the_same_conversations_reads_in_the_canonical_axis_order(
        store: Store) -> None:
    # a name made after discovery (here by two periods pooled) can hold a coordinate whose
    # conversations an earlier axis holds just as well: inside conflicting users, the
    # not_found answers are exactly the missing things. It is named by the world state, as
    # discovery names such a tie; a tool condition that narrows nothing stays as it is
    # (every member has the default tool, which names it too)
    scenario = Scenario()
    _store_background(scenario, 41, (0.12, 0.12))
    for version in ("v1", "v2"):
        scenario.add(version, 11, 9, tool_condition="not_found", world_state="missing",
                     user_stance="conflicting")
        scenario.add(version, 2, 40, tool_condition="not_found", world_state="missing")
    situations = _run(store, scenario)

    flagged = {label: s.status for label, s in situations.items() if s.status != "uncertain"}
    assert flagged == {
        "tool=lookup & user_stance=conflicting & world_state=missing": "persistent"}


def test_a_fragment_whose_group_has_too_few_conversations_left_is_the_group(
        store: Store) -> None:
    # a tau2 stream (seed 395 of bench/processor_precision.py --openings test3), replayed
    # whole: mistaken users changing flights fail in both versions (16 of 20, 20 of 28),
    # whether the flights tool answered with an error or not. Discovery found the error
    # answers of mistaken users too (10 of 13, 11 of 16; nearly all of them changing
    # flights), judged first as the smaller: what it left of the flights group (8 of 9, 9 of
    # 13) is too few to judge (fewer than 10 graded), though it fails the same way. It is a
    # fragment of the flights group, which is reported whole, persistent
    flagged = _flagged_in_stream(store, "tau2-395-test3", "mistaken")
    assert flagged == {"tool=update_reservation_flights & user_stance=mistaken": "persistent"}


def test_one_stance_group_found_in_two_tools_is_named_by_the_cell_holding_both(
        store: Store) -> None:
    # a tau2 stream (seed 399 of bench/processor_precision.py --openings test2), replayed
    # whole: unsure users of already-done actions fail in v1 (20 of 30 read unsure) and pass
    # in v2. Their failures made two roaming tools' cells fail in v1, and each tool's cell
    # was narrowed to its unsure users, two fixed situations differing by the tool only.
    # Both hold most of their failing members in unsure & already_acted_on, and neither
    # stands out from it: one group, reported once
    flagged = _flagged_in_stream(store, "tau2-399-test2", "unsure")
    assert flagged == {"user_stance=unsure & world_state=already_acted_on": "fixed"}


def test_a_superset_judged_without_a_group_inside_it_lists_its_own_members(
        store: Store) -> None:
    # a tau2 stream (seed 415 of bench/processor_precision.py --openings test2), replayed
    # whole: hurried users of already-done actions fail in v1 and pass in v2, read hurried
    # for about half of them, so the group is reported as its world state; enable_roaming
    # fails there in both versions. The world state is judged without the roaming group
    # (fixed: 24/44 -> 3/47), and its own members are those it was judged on: the roaming
    # group's conversations are listed, but as the roaming group's, never as examples or
    # first sources for generation
    scenario = Scenario()
    _replay(scenario, Path(__file__).parent / "data" / "tau2-415-test2-cells.csv")
    situations = _run(store, scenario)
    broad = situations["world_state=already_acted_on"]
    inner = situations["tool=enable_roaming & world_state=already_acted_on"]
    assert (broad.status, inner.status) == ("fixed", "persistent")
    assert broad.reason.startswith(f"without the conversations of {inner.label}: ")

    every = _members(store, broad.situation_id)
    own = {c for (c,) in store.query("SELECT conversation_id FROM situation_members "
                                     "WHERE situation_id = ? AND own", [broad.situation_id])}
    theirs = set(_members(store, inner.situation_id))
    assert own == set(every) - theirs and theirs <= set(every)
    # the own members are the ones the status was decided on: the reason's figures
    judged = [(sum(every[c] == (period, True) for c in own),
               sum(every[c][0] == period and every[c][1] is not None for c in own))
              for period in ("latest", "previous")]
    figures = re.findall(r"\((\d+)/(\d+)\)", broad.reason.split(": ", 1)[1])
    assert [(int(f), int(g)) for f, g in figures] == judged == [(3, 47), (24, 44)]

    cursor = store.cursor()
    try:
        records = {r.label: r for r in read_situations(cursor)}
        cells = load_plan_inputs(cursor).cells
    finally:
        cursor.close()
    record = records[broad.label]
    assert record.judged_without == [inner.situation_id]
    assert set(record.own_member_ids) == own and len(record.member_ids) == len(every)
    assert record.member_ids[:len(own)] == record.own_member_ids
    assert record.examples and set(record.examples) <= own
    assert record.own_latest is not None and record.own_previous is not None
    assert [(p.failed, p.graded) for p in (record.own_latest, record.own_previous)] == judged
    # what a lead reads first: the figures it was judged on, and apart from what
    assert sentence(record, {r.situation_id: r for r in records.values()}) == (
        "v2 fixed conversations on records already acted on (apart from enable_roaming on "
        "records already acted on): 55% → 6% (24/44 → 3/47).")
    assert records[inner.label].judged_without == []
    assert records[inner.label].own_latest is None
    assert records[inner.label].own_member_ids == records[inner.label].member_ids
    planned = next(c for c in cells if c.cell.situation_id == broad.situation_id)
    assert planned.sources and set(planned.sources) <= own


def test_a_coordinate_that_states_nothing_is_left_out_of_a_name(store: Store) -> None:
    # a tau2 stream (seed 336 of bench/processor_precision.py --openings test2), replayed
    # whole: a lookup tool is refused in v1 (25 of 38 fail) and not in v2 (1 of 38). It was
    # named tool=get_customer_by_id & tool_condition=permission_denied &
    # world_state=unknown: a refused call's world state is unknown, which narrows nothing
    # there and would aim generation at nothing; the name leaves it out
    assert _flagged_in_stream(store, "tau2-336-test2", "get_customer_by_id") == {
        "tool=get_customer_by_id & tool_condition=permission_denied": "fixed"}


def test_one_group_seen_through_two_coordinates_is_reported_once(store: Store) -> None:
    # a tau2 stream (seed 528 of bench/processor_precision.py --openings test3), replayed
    # whole: get_user_details timed out in v1 (22 of 38 failing) and not in v2; a timeout
    # answers world_state=unknown when no earlier lookup said the record exists (11 of 16
    # failing) and entity_exists when one did (11 of 22). v1's discovery found
    # world_state=unknown, which also holds a persistent permission group of another tool,
    # judged inside it; its own remaining failures are 11 of the timeouts and one other.
    # Reported beside the tool, the group was two fixed situations holding half of it each.
    # Once it is the tool's, the timeouts that hold its failures say what went wrong
    scenario = Scenario()
    _replay(scenario, Path(__file__).parent / "data" / "tau2-528-test3-cells.csv")
    flagged = {label: s.status for label, s in _run(store, scenario).items()
               if s.status != "uncertain"}
    assert flagged == {
        "tool=get_user_details & tool_condition=timeout": "fixed",
        "tool=enable_roaming & world_state=already_acted_on": "new",
        "tool=send_payment_request & user_stance=frustrated": "new",
        "tool=get_reservation_details & tool_condition=permission_denied": "persistent",
        "user_stance=mistaken & world_state=already_acted_on": "persistent"}


def test_a_group_beside_a_broad_cell_named_by_its_tool_is_widened_to_the_cell(
        store: Store) -> None:
    # a tau2 stream (seed 557 of bench/processor_precision.py --openings test3), replayed
    # whole: inside world_state=already_acted_on, enable_roaming fails in v2 only (32 of 38)
    # and hurried users of the other two tools fail in both versions, read hurried for about
    # 60%. v1's discovery named that group tool=disable_roaming (19 of 26 failing there),
    # while the cell was the new situation until it was named by enable_roaming; the
    # payment tool's members of the cell fail in both versions too, so the persistent group
    # is the cell without the new one, not one tool
    assert _flagged_in_stream(store, "tau2-557-test3", "already_acted_on") == {
        "tool=enable_roaming & world_state=already_acted_on": "new",
        "world_state=already_acted_on": "persistent"}


def test_ordinary_users_beside_a_stance_group_of_their_status_are_not_a_second_report(
        store: Store) -> None:
    # a tau2 stream (seed 527 of bench/processor_precision.py --openings test2), replayed
    # whole: mistaken users of already-done actions fail in v2 (22 of 28 read mistaken),
    # and the reader puts part of them under ordinary (9 of 18 ordinary users of that world
    # state failing in v2, 1 of 18 in v1); "ordinary" names no group of its own there, so
    # they are the mistaken group's misread members, not a second new situation
    assert _flagged_in_stream(store, "tau2-527-test2", "already_acted_on") == {
        "user_stance=mistaken & world_state=already_acted_on": "new",
        "user_stance=adversarial & world_state=already_acted_on": "fixed"}


def test_a_coordinate_that_owed_its_place_to_a_stance_core_is_left_out(store: Store) -> None:
    # missing records of a tau2 stream (seed 699 of bench/processor_precision.py
    # --openings test2), replayed whole: conflicting users there failed in v1 (14 of 34,
    # 2 of 30 in v2). Discovery found policy_rule=unspecified & world_state=missing in v1
    # (the group's members leaned by chance to conversations without an evaluation) and
    # its core added the stance; within the stance group the policy rule no longer stands
    # out (7 of 12 failing against 7 of 22), so the group is named without it
    flagged = _flagged_in_stream(store, "tau2-699-test2", "world_state=missing")

    assert flagged == {"user_stance=conflicting & world_state=missing": "fixed"}


def test_a_condition_a_named_tool_answers_with_anyway_is_left_out(store: Store) -> None:
    # a tau2 stream (seed 833 of bench/processor_precision.py --openings test3), replayed
    # whole: frustrated users of update_reservation_flights failed in v1 (16 of 27, 5 of 29
    # in v2). Discovery found tool_condition=error in v1, its core is the frustrated users
    # and the tool names where they fail; but that tool often answers with an error, and
    # its frustrated users failed 12 of 19 with one and 4 of 8 without, so the group is
    # named without the condition, and never without the tool
    flagged = _flagged_in_stream(store, "tau2-833-test3", "update_reservation_flights")

    assert flagged == {"tool=update_reservation_flights & user_stance=frustrated": "fixed"}
