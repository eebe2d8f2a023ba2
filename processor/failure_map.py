"""The failure map: situations (what it reports) and cells (the detail behind them).

The two *periods* are the latest model version and the one before it (by first
appearance; or a version named with ``--since``); with a single version, the later and the
earlier half of its conversations by start time.

What the map reports are **situations** (:mod:`processor.situations`): the smallest sets of
coordinates that isolate one group of failing conversations, each with a status (new,
persistent, fixed, uncertain), a reason, its members, a priority and a budget share.

A *cell* is a pair of coordinates on two different axes, or a single coordinate written
with ``*`` as its second axis and value. Cells are the detail (``map --cells``): counts
and Wilson intervals per period. A cell carries the status of the situation it stands for
(the situation's failing members and the cell's coincide, see
:data:`processor.situations.CELL_COINCIDE`), else ``passing``; cells get no priority or
budget of their own (the situations do).

The counts come from one coordinates view (``coordinates.sql``: the six axes listed once,
one row per conversation and axis); pairs are a self-join of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from processor._misreading import Misreads
from processor.errors import UnknownVersion
from processor.situations import (
    MIN_SUPPORT,
    PeriodNames,
    Situation,
    find_situations,
    situation_label,
    store_situations,
)
from processor.stats import fisher_exact, newcombe, wilson
from tracemill.store import load_sql

ANY = "*"
_MAP_COLUMNS = [
    "axis_a", "value_a", "axis_b", "value_b", "latest_version", "previous_version",
    "conversations", "graded_latest", "failed_latest", "graded_previous", "failed_previous",
    "fail_rate_latest", "low_latest", "high_latest", "fail_rate_previous", "low_previous",
    "high_previous", "diff_low", "diff_high", "p_value", "status", "low_support", "priority",
    "budget_share", "computed_unix_nano"]


@dataclass(frozen=True)
class Periods:
    """What the map compares."""

    mode: str
    """versions (two model versions) or halves (one version split in time)."""
    latest: str | None
    """The latest model version (or the only one)."""
    previous: str | None
    """The version before it (None in halves mode)."""
    split_unix_nano: int
    """In halves mode, where the later half starts."""


@dataclass(frozen=True)
class Cell:
    """A cell of the map: counts and intervals per period (the detail behind situations)."""

    axis_a: str
    """First axis (alphabetically smaller)."""
    value_a: str
    """Its value."""
    axis_b: str
    """Second axis."""
    value_b: str
    """Its value."""
    conversations: int
    """Conversations in the cell, all versions."""
    graded_latest: int
    """Graded conversations in the latest period."""
    failed_latest: int
    """Failed ones among them."""
    graded_previous: int
    """Graded conversations in the previous period."""
    failed_previous: int
    """Failed ones among them."""
    interval_latest: tuple[float, float]
    """Wilson 95% interval of the latest fail rate."""
    interval_previous: tuple[float, float]
    """Wilson 95% interval of the previous fail rate."""
    difference: tuple[float, float]
    """Newcombe 95% interval of latest minus previous fail rate."""
    p_value: float
    """Fisher's exact test of latest vs previous, two-sided (1.0 without both)."""
    status: str
    """The status of the situation the cell stands for, else passing."""
    low_support: bool
    """That situation's low support (else: fewer than the minimum graded now)."""
    priority: float = 0.0
    """0: cells get no priority of their own (situations do)."""
    budget_share: float = 0.0
    """0: cells get no budget of their own (situations do)."""
    situation_id: str | None = None
    """The situation the cell stands for, if any."""

    @property
    def fail_rate_latest(self) -> float | None:
        """failed / graded in the latest period (None when nothing was graded)."""
        return self.failed_latest / self.graded_latest if self.graded_latest else None

    @property
    def fail_rate_previous(self) -> float | None:
        """failed / graded in the previous period."""
        return self.failed_previous / self.graded_previous if self.graded_previous else None


def choose_periods(cursor: duckdb.DuckDBPyConnection, baseline: str | None = None) -> Periods:
    """The latest version and the one before it (or ``baseline``), or the halves of one.

    Raises UnknownVersion when ``baseline`` is not a model version of the conversations.
    """
    versions = cursor.execute(load_sql("processor", "versions.sql")).fetchall()
    if baseline is not None:
        known = [row[0] for row in versions]
        if baseline not in known:
            raise UnknownVersion(
                f"model version {baseline!r} is not in the store; known versions: "
                + (", ".join(str(v) for v in known) or "none"))
        latest = versions[-1][0]
        if latest == baseline:
            raise UnknownVersion(f"{baseline!r} is the latest version; compare an older one")
        return Periods("versions", latest, baseline, 0)
    if len(versions) >= 2:
        return Periods("versions", versions[-1][0], versions[-2][0], 0)
    row = cursor.execute(
        "SELECT median(start_unix_nano)::UBIGINT FROM conversations").fetchone()
    split = int(row[0]) if row and row[0] is not None else 0
    return Periods("halves", versions[0][0] if versions else None, None, split)


@dataclass(frozen=True)
class FailureMap:
    """The failure map of one processing run."""

    periods: Periods
    """What it compares."""
    situations: tuple[Situation, ...]
    """What it reports, by status (new, persistent, uncertain, fixed) then priority."""
    cells: tuple[Cell, ...]
    """The detail: every pair cell and single coordinate."""


def period_names(periods: Periods) -> PeriodNames:
    """How a reason sentence names the two periods."""
    if periods.mode == "versions":
        return PeriodNames(str(periods.latest), str(periods.previous))
    return PeriodNames("the later half", "the earlier half")


def compute_map(cursor: duckdb.DuckDBPyConnection, exploration: float = 0.2,
                baseline: str | None = None, min_support: int = MIN_SUPPORT,
                misreads: Misreads | None = None) -> FailureMap:
    """Situations and cells of the conversations table (see the module docstring);
    ``misreads`` as :func:`processor.situations.find_situations` takes them.

    Leaves the temporary ``conversation_periods`` table and ``conversation_coordinates``
    view in the cursor's connection, for :func:`store_map`."""
    periods = choose_periods(cursor, baseline)
    cursor.execute(load_sql("processor", "periods.sql"), [
        periods.mode, periods.latest, periods.previous, periods.split_unix_nano])
    cursor.execute(load_sql("processor", "coordinates.sql"))
    situations = find_situations(cursor, period_names(periods), exploration=exploration,
                                 min_support=min_support, misreads=misreads)
    owner: dict[str, Situation] = {}
    for situation in situations:  # best first: a cell belongs to the first that names it
        for label in (situation.label, *situation.cells):
            owner.setdefault(label, situation)
    cells = []
    for axis_a, value_a, axis_b, value_b, count, g_now, f_now, g_before, f_before in \
            cursor.execute(load_sql("processor", "cell_counts.sql")).fetchall():
        label = situation_label([(axis_a, value_a)] if axis_b == ANY else
                                [(axis_a, value_a), (axis_b, value_b)])
        owned = owner.get(label)
        both = g_now and g_before
        cells.append(Cell(
            axis_a, value_a, axis_b, value_b, int(count), int(g_now), int(f_now),
            int(g_before), int(f_before), wilson(f_now, g_now), wilson(f_before, g_before),
            newcombe(f_now, g_now, f_before, g_before),
            fisher_exact(f_now, g_now - f_now, f_before, g_before - f_before) if both else 1.0,
            owned.status if owned else "passing",
            owned.low_support if owned else g_now < min_support,
            situation_id=owned.situation_id if owned else None))
    return FailureMap(periods, tuple(situations), tuple(cells))


def store_map(cursor: duckdb.DuckDBPyConnection, computed: FailureMap) -> None:
    """Replace the failure_map, situations and situation_members tables (inside the
    caller's transaction, after :func:`compute_map` in the same connection)."""
    now = time.time_ns()
    periods = computed.periods
    store_situations(cursor, computed.situations, periods.latest, periods.previous)
    cursor.execute("DELETE FROM failure_map")
    if not computed.cells:
        return
    rows = [(c.axis_a, c.value_a, c.axis_b, c.value_b, periods.latest, periods.previous,
             c.conversations, c.graded_latest, c.failed_latest, c.graded_previous,
             c.failed_previous, c.fail_rate_latest, *c.interval_latest, c.fail_rate_previous,
             *c.interval_previous, *c.difference, c.p_value, c.status, c.low_support,
             c.priority, c.budget_share, now) for c in computed.cells]
    table = pa.Table.from_arrays(
        [pa.array(column) for column in zip(*rows, strict=True)], names=_MAP_COLUMNS)
    cursor.register("new_cells", table)
    try:
        cursor.execute(load_sql("processor", "insert_cells.sql"))
    finally:
        cursor.unregister("new_cells")
