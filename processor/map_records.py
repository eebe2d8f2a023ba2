"""The failure map as users see it: one record per situation, read from the store.

``tracemill map --json``, the admin API's ``GET /api/v1/map`` and the reports all print
these records, read here from the tables processing last stored (``situations``,
``situation_members``, and ``failure_map`` for the pair-cell detail), so a map computed
offline and one answered by a running ``tracemill serve`` have one schema:

* :class:`SituationRecord`: what a situation is (label, coordinates), what happened to it
  (status, reason), the counts, rates and 95% intervals of each period as numbers, the
  comparison (what was compared, p, the interval of the difference), its weight for
  generation (priority, budget share) and its member conversations (every id, and a few
  failing examples first);
* :class:`CellRecord`: one stored pair cell (``tracemill map --cells``).
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
from pydantic import BaseModel, Field

from processor.coordinates import coordinate_label
from processor.stats import wilson
from tracemill.store import load_sql

__all__ = [
    "STATUS_ORDER",
    "CellRecord",
    "Coordinate",
    "Interval",
    "PeriodRecord",
    "SituationRecord",
    "members_text",
    "read_cells",
    "read_members",
    "read_situations",
]

STATUS_ORDER = {"new": 0, "persistent": 1, "uncertain": 2, "fixed": 3, "passing": 4}
"""Worst first: how maps and reports order statuses."""
EXAMPLES = 5
"""Member conversations shown as examples of a situation."""


class Coordinate(BaseModel):
    """One axis value of a situation."""

    axis: str = Field(description="tool, policy_rule, user_stance, world_state, "
                                  "tool_condition or history.")
    value: str = Field(description="The value on that axis.")


class Interval(BaseModel):
    """A 95% interval."""

    low: float = Field(description="Lower end.")
    high: float = Field(description="Upper end.")


class PeriodRecord(BaseModel):
    """A situation's outcomes in one period (a model version, or half of one)."""

    version: str | None = Field(description="The model version (None: not compared, or "
                                            "the earlier half of a single version).")
    graded: int = Field(description="Graded member conversations in the period.")
    failed: int = Field(description="Failed ones among them.")
    fail_rate: float | None = Field(description="failed / graded; None when none graded.")
    interval: Interval | None = Field(description="Wilson 95% interval of the fail rate.")
    baseline: float | None = Field(description="Fail rate of the period's other "
                                               "conversations (outside the situation).")


class SituationRecord(BaseModel):
    """One situation of the failure map, as printed by ``map --json`` and ``GET /map``."""

    situation_id: str = Field(description="Stable id ('s-' and 10 hex digits).")
    label: str = Field(description="Its coordinates as 'axis=value & axis=value'.")
    coordinates: list[Coordinate] = Field(description="The axis values that define it.")
    status: str = Field(description="new, persistent, fixed or uncertain.")
    reason: str = Field(description="One sentence: why this status.")
    compared: str = Field(description="versions (latest vs previous rate) or baseline "
                                      "(latest vs the rest of latest: no earlier data).")
    latest: PeriodRecord = Field(description="The latest period.")
    previous: PeriodRecord = Field(description="The previous period.")
    difference: Interval | None = Field(description="Newcombe 95% interval of the compared "
                                                    "difference of fail rates.")
    p_value: float | None = Field(description="Fisher's exact test of that difference.")
    low_support: bool = Field(description="Fewer than the minimum graded conversations in "
                                          "the deciding period: the status is tentative.")
    priority: float = Field(description="Weight for generation (status, rate, support).")
    budget_share: float = Field(description="Share of a generation budget it gets.")
    conversations: int = Field(description="Member conversations, all periods.")
    cells: list[str] = Field(description="Labels of the pair cells it stands for.")
    examples: list[str] = Field(description="A few of its own member conversation ids, "
                                            "failing ones of the latest period first.")
    member_ids: list[str] = Field(description="Every member conversation id (every "
                                              "conversation matching its coordinates), its "
                                              "own first.")
    judged_without: list[str] = Field(
        default_factory=list,
        description="Ids of the situations inside it whose conversations its status was "
                    "decided without (the reason names them).")
    own_member_ids: list[str] = Field(
        default_factory=list,
        description="Its own member conversation ids: those of no situation in "
                    "judged_without, the conversations its status was decided on.")
    own_latest: PeriodRecord | None = Field(
        default=None, description="Its own members in the latest period (None when "
                                  "judged_without is empty: then all members are its own).")
    own_previous: PeriodRecord | None = Field(
        default=None, description="Its own members in the previous period.")
    computed_unix_nano: int = Field(description="When processing computed it.")


class CellRecord(BaseModel):
    """One stored pair cell of the failure map (``tracemill map --cells``)."""

    cell: str = Field(description="axis=value & axis=value (axis_b '*': one coordinate).")
    axis_a: str = Field(description="First axis.")
    value_a: str = Field(description="Its value.")
    axis_b: str = Field(description="Second axis ('*' for a single coordinate).")
    value_b: str = Field(description="Its value.")
    status: str = Field(description="new, persistent, fixed, uncertain or passing.")
    latest: PeriodRecord = Field(description="The latest period.")
    previous: PeriodRecord = Field(description="The previous period.")
    difference: Interval | None = Field(description="Newcombe 95% interval, latest - previous.")
    p_value: float | None = Field(description="Fisher's exact test, two-sided.")
    low_support: bool = Field(description="Too few graded conversations now.")
    priority: float = Field(description="Weight for generation.")
    budget_share: float = Field(description="Share of a generation budget.")
    conversations: int = Field(description="Conversations in the cell, all versions.")


def _interval(low: float | None, high: float | None) -> Interval | None:
    return None if low is None or high is None else Interval(low=low, high=high)


def _period(version: str | None, graded: int, failed: int, low: float | None,
            high: float | None, baseline: float | None = None) -> PeriodRecord:
    return PeriodRecord(version=version, graded=graded, failed=failed,
                        fail_rate=failed / graded if graded else None,
                        interval=_interval(low, high) if graded else None, baseline=baseline)


def _own_period(counts: list[int], version: str | None,
                baseline: float | None) -> PeriodRecord:
    graded, failed = counts
    low, high = wilson(failed, graded)
    return _period(version, graded, failed, low, high, baseline)


def _rows(cursor: duckdb.DuckDBPyConnection, name: str,
          params: list[Any] | None = None) -> list[dict[str, Any]]:
    relation = cursor.execute(load_sql("processor", name), params or [])
    names = [column[0] for column in relation.description or ()]
    return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]


def _has_table(cursor: duckdb.DuckDBPyConnection, table: str) -> bool:
    found = cursor.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ? "
                           "AND NOT temporary", [table]).fetchone()
    return bool(found and found[0])


def read_situations(cursor: duckdb.DuckDBPyConnection,
                    situation_id: str | None = None) -> list[SituationRecord]:
    """The stored situations (or the one with ``situation_id``), worst first: new,
    persistent, uncertain, fixed; by priority within a status."""
    members: dict[str, list[str]] = {}
    own: dict[str, list[str]] = {}
    own_counts: dict[tuple[str, str], list[int]] = {}  # (situation, period) -> graded, failed
    examples: dict[str, list[str]] = {}
    for row in _rows(cursor, "situation_members.sql", [situation_id]):
        members.setdefault(row["situation_id"], []).append(row["conversation_id"])
        if row["own"]:
            own.setdefault(row["situation_id"], []).append(row["conversation_id"])
            if row["failed"] is not None:
                counts = own_counts.setdefault((row["situation_id"], row["period"]), [0, 0])
                counts[0] += 1
                counts[1] += bool(row["failed"])
        if row["example"]:
            examples.setdefault(row["situation_id"], []).append(row["conversation_id"])
    records = []
    for row in _rows(cursor, "stored_situations.sql", [situation_id]):
        ident = row["situation_id"]
        ids = members.get(ident, [])
        judged_without = json.loads(row["judged_without"])
        own_periods = [_own_period(own_counts.get((ident, period), [0, 0]),
                                   row[f"{period}_version"], row[f"baseline_{period}"])
                       if judged_without else None for period in ("latest", "previous")]
        records.append(SituationRecord(
            situation_id=ident, label=row["label"],
            coordinates=[Coordinate(**c) for c in json.loads(row["coordinates"])],
            status=row["status"], reason=row["reason"], compared=row["compared"],
            latest=_period(row["latest_version"], row["graded_latest"], row["failed_latest"],
                           row["low_latest"], row["high_latest"], row["baseline_latest"]),
            previous=_period(row["previous_version"], row["graded_previous"],
                             row["failed_previous"], row["low_previous"],
                             row["high_previous"], row["baseline_previous"]),
            difference=_interval(row["diff_low"], row["diff_high"]),
            p_value=row["p_value"], low_support=row["low_support"],
            priority=row["priority"], budget_share=row["budget_share"],
            conversations=row["conversations"], cells=json.loads(row["cells"]),
            examples=examples.get(ident, [])[:EXAMPLES], member_ids=ids,
            judged_without=judged_without, own_member_ids=own.get(ident, []),
            own_latest=own_periods[0], own_previous=own_periods[1],
            computed_unix_nano=row["computed_unix_nano"]))
    records.sort(key=lambda r: (STATUS_ORDER.get(r.status, 9), -r.priority, r.label))
    return records


def members_text(situation: SituationRecord) -> str:
    """``86 members`` or, for a situation judged without others inside it, ``85 members
    (47 its own, the rest in the situations it was judged without)``."""
    text = f"{len(situation.member_ids)} members"
    if situation.judged_without:
        text += (f" ({len(situation.own_member_ids)} its own, the rest in the situations it "
                 "was judged without)")
    return text


def read_members(cursor: duckdb.DuckDBPyConnection, situation_id: str) -> list[str]:
    """Every member conversation id of one situation: its own first, failing ones of the
    latest period first within each."""
    return [row["conversation_id"]
            for row in _rows(cursor, "situation_members.sql", [situation_id])]


def read_cells(cursor: duckdb.DuckDBPyConnection) -> list[CellRecord]:
    """The stored pair cells, not passing first, by priority (empty when the store has
    no failure_map table)."""
    if not _has_table(cursor, "failure_map"):
        return []
    cells = []
    for row in _rows(cursor, "stored_map.sql"):
        single = row["axis_b"] == "*"
        cells.append(CellRecord(
            cell=coordinate_label([(row["axis_a"], row["value_a"])] if single else
                                  [(row["axis_a"], row["value_a"]),
                                   (row["axis_b"], row["value_b"])]),
            axis_a=row["axis_a"], value_a=row["value_a"], axis_b=row["axis_b"],
            value_b=row["value_b"], status=row["status"],
            latest=_period(row["latest_version"], row["graded_latest"], row["failed_latest"],
                           row["low_latest"], row["high_latest"]),
            previous=_period(row["previous_version"], row["graded_previous"],
                             row["failed_previous"], row["low_previous"],
                             row["high_previous"]),
            difference=_interval(row["diff_low"], row["diff_high"]),
            p_value=row["p_value"], low_support=row["low_support"],
            priority=row["priority"], budget_share=row["budget_share"],
            conversations=row["conversations"]))
    return cells

