"""The failure map: per cell and period, fail rates with intervals, a status, a priority.

A *cell* is a pair of coordinates on two different axes (most failures are two things
interacting); a single coordinate is also a cell, written with ``*`` as its second axis and
value. The two *periods* are the latest model version and the one before it (by first
appearance; or a version named with ``--since``); with a single version, the later and the
earlier half of its conversations by start time.

A pair (a, b) is **failing** in a period when
  1. the lower end of its Wilson 95% interval lies above the period's overall fail rate, and
  2. it fails more than each of its parts without the other: its rate exceeds the rate of
     (a and not b) and of (b and not a), each by Fisher's exact test at p < 0.05.
Rule 2 keeps pairs that merely contain a failing coordinate, or overlap a failing pair, from
being reported as situations of their own. A single coordinate a is **failing** when its
Wilson lower bound lies above the overall rate *after* the conversations of the failing pair
that holds most of its failures are set aside (so a failure that the pair explains is not
reported again as a's).

The change between periods is **significant** when Fisher's exact test gives p < 0.05
(two-sided); the Newcombe 95% interval of the difference is reported with it.

==============  =============================================================================
status          rule
==============  =============================================================================
new             failing now, and either not graded before or not failing before with a
                significant increase
persistent      failing now and failing before; or failing now without a significant change
fixed           failing before, graded now, not failing now, with a significant decrease
uncertain       failing before and either not graded now or not yet significantly better
passing         everything else
==============  =============================================================================

``low_support`` marks cells with fewer than 3 graded conversations in the latest period.

Priority and budget share (what a generation run spends where)::

    priority = weight(status) * fail rate of the deciding period * sqrt(graded in it)
    weight: new 3, persistent 2, uncertain 1, fixed 0.5 (a regression guard), passing 0
    share  = (1 - exploration) * priority / sum(priority)            for prioritised cells
           + exploration / number of passing cells                   for the rest of the grid

with ``exploration`` 0.2 by default; when no cell has priority, the whole budget explores.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from processor.errors import UnknownVersion
from processor.stats import fisher_exact, newcombe, wilson
from tracemill.store import load_sql

ALPHA = 0.05
LOW_SUPPORT = 3
_MAP_COLUMNS = [
    "axis_a", "value_a", "axis_b", "value_b", "latest_version", "previous_version",
    "conversations", "graded_latest", "failed_latest", "graded_previous", "failed_previous",
    "fail_rate_latest", "low_latest", "high_latest", "fail_rate_previous", "low_previous",
    "high_previous", "diff_low", "diff_high", "p_value", "status", "low_support", "priority",
    "budget_share", "computed_unix_nano"]
WEIGHTS = {"new": 3.0, "persistent": 2.0, "uncertain": 1.0, "fixed": 0.5, "passing": 0.0}


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
    """One row of the failure map."""

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
    """Fisher's exact test, two-sided."""
    status: str
    """new, persistent, fixed, uncertain or passing."""
    low_support: bool
    """Fewer than 3 graded conversations in the latest period."""
    priority: float
    """See the module docstring."""
    budget_share: float = 0.0
    """Fraction of a generation budget this cell should get."""

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


def _status(failing_now: bool | None, failing_before: bool | None, p_value: float,
            increase: bool) -> str:
    significant = p_value < ALPHA
    if failing_now:
        if failing_before is None or failing_before:
            return "new" if failing_before is None else "persistent"
        return "new" if significant and increase else "persistent"
    if failing_before:
        if failing_now is None:
            return "uncertain"
        return "fixed" if significant and not increase else "uncertain"
    return "passing"


Counts = tuple[int, int, int, int]
"""graded and failed in the latest period, graded and failed in the previous one."""
ANY = "*"


def _above(failed: int, graded: int, other_failed: int, other_graded: int) -> bool:
    """Whether failed/graded is significantly above other_failed/other_graded."""
    if other_graded == 0:
        return True
    if failed * other_graded <= other_failed * graded:
        return False
    return fisher_exact(failed, graded - failed, other_failed,
                        other_graded - other_failed) < ALPHA


def _pair_failing(pair: tuple[int, int], a: tuple[int, int], b: tuple[int, int],
                  overall: float) -> bool | None:
    graded, failed = pair
    if graded == 0:
        return None
    if wilson(failed, graded)[0] <= overall:
        return False
    return (_above(failed, graded, a[1] - failed, a[0] - graded)
            and _above(failed, graded, b[1] - failed, b[0] - graded))


def _single_failing(single: tuple[int, int], explaining: tuple[int, int] | None,
                    overall: float) -> bool | None:
    graded, failed = single
    if graded == 0:
        return None
    if explaining is not None:
        graded, failed = graded - explaining[0], failed - explaining[1]
    return graded > 0 and wilson(failed, graded)[0] > overall


def _status_of(now: bool | None, before: bool | None, counts: Counts) -> tuple[str, float]:
    g_now, f_now, g_before, f_before = counts
    p_value = fisher_exact(f_now, g_now - f_now, f_before, g_before - f_before) \
        if g_now and g_before else 1.0
    increase = g_now > 0 and (not g_before or f_now * g_before > f_before * g_now)
    return _status(now, before, p_value, increase), p_value


def _cell(axis_a: str, value_a: str, axis_b: str, value_b: str, conversations: int,
          counts: Counts, status: str, p_value: float) -> Cell:
    g_now, f_now, g_before, f_before = counts
    rate_now = f_now / g_now if g_now else 0.0
    rate_before = f_before / g_before if g_before else 0.0
    deciding_rate, deciding_n = (rate_before, g_before) if status in (
        "uncertain", "fixed") else (rate_now, g_now)
    priority = WEIGHTS[status] * deciding_rate * math.sqrt(deciding_n)
    return Cell(axis_a, value_a, axis_b, value_b, conversations, g_now, f_now, g_before,
                f_before, wilson(f_now, g_now), wilson(f_before, g_before),
                newcombe(f_now, g_now, f_before, g_before), p_value, status,
                g_now < LOW_SUPPORT, priority)


def build_map(cursor: duckdb.DuckDBPyConnection, exploration: float = 0.2,
              baseline: str | None = None) -> tuple[Periods, list[Cell]]:
    """Compute every cell of the map from the conversations table."""
    periods = choose_periods(cursor, baseline)
    cursor.execute(load_sql("processor", "periods.sql"), [
        periods.mode, periods.latest, periods.previous, periods.split_unix_nano])
    singles: dict[tuple[str, str], tuple[int, Counts]] = {}
    pairs: dict[tuple[str, str, str, str], tuple[int, Counts]] = {}
    for axis_a, value_a, axis_b, value_b, count, g_now, f_now, g_before, f_before in \
            cursor.execute(load_sql("processor", "cell_counts.sql")).fetchall():
        counts = (g_now, f_now, g_before, f_before)
        if axis_b == ANY:
            singles[(axis_a, value_a)] = (count, counts)
        else:
            pairs[(axis_a, value_a, axis_b, value_b)] = (count, counts)
    totals = [0, 0, 0, 0]
    first_axis = min((axis for axis, _ in singles), default=None)
    for (axis, _), (_, counts) in singles.items():
        if axis == first_axis:  # every conversation has exactly one value per axis
            totals = [total + count for total, count in zip(totals, counts, strict=True)]
    overall = (totals[1] / totals[0] if totals[0] else 0.0,
               totals[3] / totals[2] if totals[2] else 0.0)
    cells: list[Cell] = []
    failing_pairs: dict[tuple[str, str], list[tuple[int, Counts]]] = {}
    for key, (count, counts) in pairs.items():
        axis_a, value_a, axis_b, value_b = key
        a, b = singles[(axis_a, value_a)][1], singles[(axis_b, value_b)][1]
        verdicts = [_pair_failing((counts[i], counts[i + 1]), (a[i], a[i + 1]),
                                  (b[i], b[i + 1]), overall[i // 2]) for i in (0, 2)]
        status, p_value = _status_of(verdicts[0], verdicts[1], counts)
        cells.append(_cell(*key, count, counts, status, p_value))
        for i, verdict in zip((0, 2), verdicts, strict=True):
            if verdict:
                for coordinate in ((axis_a, value_a), (axis_b, value_b)):
                    failing_pairs.setdefault(coordinate, []).append((i, counts))
    for (axis, value), (count, counts) in singles.items():
        verdicts = []
        for i in (0, 2):
            explaining = max(((c[i], c[i + 1]) for j, c in failing_pairs.get((axis, value), [])
                              if j == i), key=lambda gf: gf[1], default=None)
            verdicts.append(_single_failing((counts[i], counts[i + 1]), explaining,
                                            overall[i // 2]))
        status, p_value = _status_of(verdicts[0], verdicts[1], counts)
        cells.append(_cell(axis, value, ANY, ANY, count, counts, status, p_value))
    return periods, _shares(cells, exploration)


def _shares(cells: list[Cell], exploration: float) -> list[Cell]:
    total = sum(cell.priority for cell in cells)
    rest = [cell for cell in cells if cell.priority == 0]
    explore = exploration if total else 1.0
    result = []
    for cell in cells:
        share = (1 - explore) * cell.priority / total if total and cell.priority else 0.0
        if cell.priority == 0 and rest:
            share = explore / len(rest)
        result.append(Cell(**{**cell.__dict__, "budget_share": share}))
    return result


def store_map(cursor: duckdb.DuckDBPyConnection, periods: Periods, cells: list[Cell]) -> None:
    """Replace the failure_map table with these cells (inside the caller's transaction)."""
    now = time.time_ns()
    cursor.execute("DELETE FROM failure_map")
    if not cells:
        return
    rows = [(c.axis_a, c.value_a, c.axis_b, c.value_b, periods.latest, periods.previous,
             c.conversations, c.graded_latest, c.failed_latest, c.graded_previous,
             c.failed_previous, c.fail_rate_latest, *c.interval_latest, c.fail_rate_previous,
             *c.interval_previous, *c.difference, c.p_value, c.status, c.low_support,
             c.priority, c.budget_share, now) for c in cells]
    table = pa.Table.from_arrays(
        [pa.array(column) for column in zip(*rows, strict=True)], names=_MAP_COLUMNS)
    cursor.register("new_cells", table)
    try:
        cursor.execute(load_sql("processor", "insert_cells.sql"))
    finally:
        cursor.unregister("new_cells")
