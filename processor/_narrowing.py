"""Narrower situations in place of judged ones: read-axis cores, where it fails, names
that say why and what went wrong.

The rules (*Read-axis cores*, *Where it fails*, *Names that say why*, *Names that say
what went wrong*, ...) are documented in
:mod:`processor.situations`; each proposes narrower situations for a judged one, and
:func:`processor._judging.replace_until_stable` takes the first proposal whose parts keep
their statuses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np

from processor._discovery import (
    ALPHA,
    COINCIDE,
    LATEST,
    MIN_FAILED,
    NAMING_SHARE,
    NARROWS,
    PREVIOUS,
    RATIO,
    READ_AXES,
    REFINE_ALPHA,
    Found,
    Profiles,
    _stands_out,
    _unstated,
    _usual,
    above,
    axis_order,
    narrows_nothing,
    say_why,
)
from processor._judging import (
    FLAGGED,
    SIBLING_SHARE,
    Judged,
    Proposal,
    _claimed,
    _deciding,
    replace_until_stable,
)
from processor._misreading import explained_by
from processor._verdicts import PeriodNames, Verdict

__all__ = ["CORE_SHARE", "FAULT_AXES", "LEAK", "NAMING_AXES", "POOLED", "READ_NAMING_AXES",
           "find_cores", "name_fault", "name_lean", "name_pooled", "name_where", "name_why",
           "widen_pooled"]

LEAK = 1.0
"""How much of a read-axis group's excess may have leaked into the rest of its cell, as a
multiple of the excess its core (the members read right) keeps: 1.0 says at least half
of the group is read right (*Read-axis cores* in :mod:`processor.situations`)."""
CORE_SHARE = NAMING_SHARE / (1 + LEAK)
"""Share of a cell's excess a further core must keep, once a core keeping ``NAMING_SHARE``
is found, to be taken with it when what the rest fails is more than the cores leaked: a
group holding ``NAMING_SHARE`` of the excess, read right for at least half of its members
(``LEAK``), keeps at least this share in its core (*Read-axis cores* in
:mod:`processor.situations`)."""


class _PeriodCell(NamedTuple):
    """A situation's cell in one period (:func:`_period_cores`)."""

    period: int
    cell: np.ndarray
    """Its graded members there, without those claimed by the situations inside it."""
    rate: float
    """The failure rate outside the situation in that period."""
    graded: int
    failed: int
    excess: float
    """Failures beyond ``rate``."""


class _Core(NamedTuple):
    """A read-axis value found a core in one period (:func:`_period_cores`)."""

    value: int
    period: int
    members: np.ndarray
    """Its members in the situation's cell in that period."""
    graded: int
    failed: int
    excess: float
    """Failures beyond the rate outside the situation in that period."""


def _count(profiles: Profiles, keep: np.ndarray) -> tuple[int, int]:
    """(conversations, failed ones) of the masked profiles."""
    return int(profiles.n[keep].sum()), int(profiles.n[keep & profiles.failed].sum())


def _is_core(g: int, f: int, rate: float, excess: float, g_cell: int, f_cell: int) -> bool:
    """Whether a value's members (``g`` graded, ``f`` failed) in a cell (``g_cell``,
    ``f_cell``, failing beyond ``rate`` by ``excess``) may be a core: enough failures, a
    ``CORE_SHARE`` of the excess, narrower than the cell and failing more than it."""
    return f >= MIN_FAILED and f - g * rate >= CORE_SHARE * excess and \
        g <= (1 - NARROWS) * g_cell and f * g_cell > f_cell * g


def _misread(profiles: Profiles, axis: int,
             cores: Sequence[tuple[int, int, int, float]]) -> set[int]:
    """Indexes of ``cores`` (value, graded, failed, rate outside the cell, of one cell and
    period) that are a larger core's misread members by the reader's known confusions
    (*Misread cores* in :mod:`processor.situations`): on the stance axis only."""
    if not profiles.misreads or profiles.axes[axis] != "user_stance":
        return set()
    excess = {profiles.values[value]: f - g * rate for value, g, f, rate in cores}
    return {index for index, (value, g, f, rate) in enumerate(cores) if explained_by(
        profiles.misreads, profiles.values[value], g, f, rate,
        {stance: e for stance, e in excess.items() if stance != profiles.values[value]})}


def find_cores(profiles: Profiles, judged: Sequence[Judged],
               totals: Sequence[tuple[int, int]], names: PeriodNames,
               min_support: int) -> list[Judged]:
    """The judged situations, a broad one whose failures are groups on a read axis (with
    what they leaked into the rest of the cell) replaced by those groups (see *Read-axis
    cores* in :mod:`processor.situations`), judged again with the others."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _cores)


def _cores(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
           judged: Sequence[Judged]) -> list[Proposal]:
    """The cells one read coordinate narrower that hold a situation's failures as groups
    read right only in part: first those found in the periods deciding its status, each
    to keep its status; then those found in each period apart, each with its own status,
    when every period the situation fails in has them (two groups of different statuses,
    one new and one persistent, in one cell); or none."""
    read = [i for i, axis in enumerate(profiles.axes) if axis in READ_AXES]
    if len(item.coordinates) >= 3 or any(axis in read for axis, _ in item.coordinates):
        return []
    graded, cell = _deciding(profiles, mask, verdict, judged)
    proposals = []
    pooled = _core_parts(profiles, item, cell, graded & ~mask, read)
    if pooled:
        proposals.append(Proposal(tuple(pooled), same_status=True))
    fails_in = FLAGGED.get(verdict.status,
                           frozenset({LATEST if verdict.fails_now else PREVIOUS}))
    # the cores reported already stay in the cell: they are groups the others are judged
    # beside, and their misread members are in its rest
    others = [entry for entry in judged if not _one_read_narrower(item, entry[0], read)]
    proposals += [Proposal(tuple(apart), same_status=False) for apart in _period_cores(
        profiles, item, mask, _claimed(profiles, mask, others), fails_in, read)]
    return proposals


def _one_read_narrower(item: Found, other: Found, read: Sequence[int]) -> bool:
    """Whether ``other`` is ``item`` and one coordinate of a read axis."""
    extra = set(other.coordinates) - set(item.coordinates)
    return len(other.coordinates) == len(item.coordinates) + 1 and len(extra) == 1 and \
        next(iter(extra))[0] in read


def _period_cores(profiles: Profiles, item: Found, mask: np.ndarray, claimed: np.ndarray,
                  fails_in: frozenset[int], read: Sequence[int]) -> list[list[Found]]:
    """The cells one read coordinate narrower holding the failures of a situation (its
    members ``mask`` without those ``claimed`` by the situations judged inside it) as
    groups read right only in part, each value looked for in each period apart (a group
    failing in one period only is diluted by the other), when every period of ``fails_in``
    has such a group; or none. Then the same with fewer of those cores, the others left in
    the rest as what a group leaked (a core of misread members gets no status of its own):
    each set a proposal, the most cores first."""

    periods: list[_PeriodCell] = []
    outside: dict[int, tuple[int, int]] = {}  # period -> (graded, failed) outside it
    for period in (LATEST, PREVIOUS):
        graded = profiles.graded & (profiles.period == period)
        g_out, f_out = outside[period] = _count(profiles, graded & ~mask)
        cell = graded & mask & ~claimed
        g_cell, f_cell = _count(profiles, cell)
        rate = f_out / g_out if g_out else 0.0
        periods.append(_PeriodCell(period, cell, rate, g_cell, f_cell, f_cell - g_cell * rate))
    best: list[Found] = []
    fewer: list[list[Found]] = []
    for axis in read:
        column = profiles.codes[:, axis]
        usual = _usual(profiles, column)
        candidates: list[_Core] = []
        further: list[_Core] = []
        for period, cell, rate, g_cell, f_cell, excess in periods:
            if excess <= 0:
                continue
            for value in np.unique(column[cell]):
                child = cell & (column == value)
                g, f = _count(profiles, child)
                if value != usual and _is_core(g, f, rate, excess, g_cell, f_cell):
                    entry = _Core(int(value), period, child, g, f, f - g * rate)
                    kept = f - g * rate >= NAMING_SHARE * excess
                    (candidates if kept else further).append(entry)
        # a core the reader's confusions explain is another core's misread members: it
        # stays in the rest, where the group leaked (judged in its own period)
        misread = set()
        for period, _, rate, _, _, _ in periods:
            found = [e for e in (*candidates, *further) if e.period == period]
            misread |= {(found[i].value, period) for i in _misread(
                profiles, axis, [(e.value, e.graded, e.failed, rate) for e in found])}
        candidates = [e for e in candidates if (e.value, e.period) not in misread]
        further = [e for e in further if (e.value, e.period) not in misread]
        if not fails_in <= {period for _, period, _, _, _, _ in candidates}:
            continue
        if len(fails_in) > 1:
            # a group failing in both periods, beside one failing in one of them, can be a
            # core in one period only: where the other group fails too, it fails no more
            # than the cell; its members there are the same group
            candidates += _persisting(profiles, column, periods, outside, candidates, further)
            further += _persisting(profiles, column, periods, outside, further, candidates)
        # the fewest groups that explain the cell: further cores, the largest first, only
        # while the rest fails more than the cores leaked
        extra = _by_value(further)
        for taken in range(len(extra) + 1):
            parts = _period_parts(profiles, item, axis, periods,
                                  [*candidates, *(e for group in extra[:taken] for e in group)])
            if parts is not None:
                if sum(p.excess for p in parts) > sum(p.excess for p in best):
                    best = parts
                    fewer = _fewer_cores(profiles, item, axis, periods, candidates, fails_in)
                break
    return [best, *fewer] if best else []


def _fewer_cores(profiles: Profiles, item: Found, axis: int,
                 periods: Sequence[_PeriodCell],
                 candidates: Sequence[_Core],
                 fails_in: frozenset[int]) -> list[list[Found]]:
    """The proper subsets of ``candidates`` (of :func:`_period_cores`) that still hold a
    situation's failures as groups with the others in the rest, every period of
    ``fails_in`` keeping a core: the most cores first, then the largest excess."""
    groups = _by_value(candidates)
    subsets = [[entry for group in chosen for entry in group]
               for size in range(len(groups) - 1, 0, -1)
               for chosen in combinations(groups, size)]
    subsets = [chosen for chosen in subsets
               if fails_in <= {period for _, period, _, _, _, _ in chosen}]
    subsets.sort(key=lambda chosen: (-len({entry.value for entry in chosen}),
                                     -sum(entry.excess for entry in chosen)))
    found = (_period_parts(profiles, item, axis, periods, chosen) for chosen in subsets)
    return [parts for parts in found if parts is not None]


def _by_value(entries: Sequence[_Core]) -> list[list[_Core]]:
    """Core entries (of :func:`_period_cores`) grouped by value (a group is taken or left
    whole, in every period it was found in), the largest excess first."""
    groups: dict[int, list[_Core]] = {}
    for entry in entries:
        groups.setdefault(entry.value, []).append(entry)
    return sorted(groups.values(),
                  key=lambda group: (-sum(e.excess for e in group), group[0].value))


def _persisting(profiles: Profiles, column: np.ndarray,
                periods: Sequence[_PeriodCell],
                outside: Mapping[int, tuple[int, int]], entries: Sequence[_Core],
                known: Sequence[_Core]) -> list[_Core]:
    """The members of each value of ``entries`` (cores found in one period) in the other
    period, when they fail there clearly (``MIN_FAILED``, p < ``REFINE_ALPHA``) above the
    conversations outside the situation (``outside``: period -> graded, failed) and are no
    core there yet (in ``entries`` or ``known``): one group failing in both periods (see
    :func:`_period_cores`)."""
    found = {(entry.value, entry.period) for entry in (*entries, *known)}
    added = []
    for value, period, _, _, _, _ in entries:
        for other, cell, rate, _, _, _ in periods:
            if other == period or (value, other) in found:
                continue
            child = cell & (column == value)
            g, f = _count(profiles, child)
            g_out, f_out = outside[other]
            if f >= MIN_FAILED and above(f, g, f_out, g_out) < REFINE_ALPHA:
                added.append(_Core(value, other, child, g, f, f - g * rate))
                found.add((value, other))
    return added


def _period_parts(profiles: Profiles, item: Found, axis: int,
                  periods: Sequence[_PeriodCell],
                  candidates: Sequence[_Core],
                  ) -> list[Found] | None:
    """The situations named by ``candidates`` (value, period, its members there, graded,
    failed, excess) of ``axis`` in a situation's cell per period (``periods``: period,
    cell, rate outside, graded, failed, excess) when they hold its failures as groups
    (:func:`_period_cores`); None when they do not."""

    union = np.zeros(len(profiles.n), dtype=bool)
    for _, _, child, _, _, _ in candidates:
        union |= child
    cells = np.zeros(len(profiles.n), dtype=bool)
    for _, cell, _, _, _, _ in periods:
        cells |= cell
    g_rest, f_rest = _count(profiles, cells & ~union)
    g_union, f_union = _count(profiles, union)
    if g_rest < NARROWS * (g_rest + g_union):
        return None  # together they are nearly the whole cell: naming them narrows nothing
    # together they stand out from the part of the cell none of them holds (in both
    # periods), and each of them does at ``ALPHA``
    pooled: dict[int, tuple[int, int]] = {}
    for value, _, _, g, f, _ in candidates:
        g_value, f_value = pooled.get(value, (0, 0))
        pooled[value] = (g_value + g, f_value + f)
    if not _stands_out(f_union, g_union, f_rest, g_rest) or not all(
            f * g_rest >= RATIO * f_rest * g and above(f, g, f_rest, g_rest) < ALPHA
            for g, f in pooled.values()):
        return None
    # the axis' other values (neither a core nor the usual one, where misread members land
    # the most), in the periods the cores were found in, do not fail clearly (p <
    # ``REFINE_ALPHA`` against the rate outside the situation) nearly as much as the cores
    # (within ``RATIO``): failing so, the cell is one group spread over every value of the
    # axis, read as some of them a little more often than as others
    column = profiles.codes[:, axis]
    not_usual = column != _usual(profiles, column)
    away = profiles.graded & ~profiles.mask(item.coordinates)
    found_in = {period for _, period, _, _, _, _ in candidates}
    others = np.zeros(len(profiles.n), dtype=bool)
    outside = np.zeros(len(profiles.n), dtype=bool)
    for period, cell, _, _, _, _ in periods:
        if period in found_in:
            others |= cell & ~union & not_usual
            outside |= away & (profiles.period == period)
    g_others, f_others = _count(profiles, others)
    g_out, f_out = _count(profiles, outside)
    if f_union * g_others < RATIO * f_others * g_union and \
            above(f_others, g_others, f_out, g_out) < REFINE_ALPHA:
        return None
    # and what the rest fails beyond elsewhere, in the periods they were found in, is
    # no more than the groups leaked
    left = 0.0
    for period, cell, rate, _, _, _ in periods:
        if period in {at for _, at, _, _, _, _ in candidates}:
            g_left, f_left = _count(profiles, cell & ~union)
            left += f_left - g_left * rate
    if left > LEAK * sum(e for _, _, _, _, _, e in candidates):
        return None
    excesses: dict[int, float] = {}
    for value, _, _, _, _, e in candidates:
        excesses[value] = excesses.get(value, 0.0) + e
    return [Found((*item.coordinates, (axis, value)), e)
            for value, e in sorted(excesses.items())]


def _core_parts(profiles: Profiles, item: Found, cell: np.ndarray, out: np.ndarray,
                read: Sequence[int]) -> list[Found]:
    """The cells one read coordinate narrower holding the failures of ``cell`` (a
    situation's graded members in the periods looked at) as groups read right only in
    part, measured against ``out`` (the graded conversations outside it in those
    periods), or none."""

    g_out, f_out = _count(profiles, out)
    rate = f_out / g_out if g_out else 0.0
    g_cell, f_cell = _count(profiles, cell)
    excess = f_cell - g_cell * rate
    if excess <= 0:
        return []
    best: list[Found] = []
    for axis in read:
        column = profiles.codes[:, axis]
        usual = _usual(profiles, column)
        candidates: list[tuple[int, np.ndarray, int, int]] = []
        further: list[tuple[int, np.ndarray, int, int]] = []
        for value in np.unique(column[cell]):
            if value == usual:
                continue
            child = cell & (column == value)
            g, f = _count(profiles, child)
            if _is_core(g, f, rate, excess, g_cell, f_cell):
                entry = (int(value), child, g, f)
                kept = f - g * rate >= NAMING_SHARE * excess
                (candidates if kept else further).append(entry)
        found = [*candidates, *further]
        misread = {found[i][0] for i in _misread(
            profiles, axis, [(value, g, f, rate) for value, _, g, f in found])}
        candidates = [e for e in candidates if e[0] not in misread]
        further = [e for e in further if e[0] not in misread]
        if not candidates:
            continue
        # the fewest groups that explain the cell: further cores, the largest first, only
        # while the rest fails more than the cores leaked
        further.sort(key=lambda entry: (-(entry[3] - entry[2] * rate), entry[0]))
        for taken in range(len(further) + 1):
            parts = _pooled_parts(profiles, item, axis, cell, rate, excess,
                                  [*candidates, *further[:taken]])
            if parts is not None:
                if sum(p.excess for p in parts) > sum(p.excess for p in best):
                    best = parts
                break
    return best


def _pooled_parts(profiles: Profiles, item: Found, axis: int, cell: np.ndarray, rate: float,
                  excess: float, candidates: Sequence[tuple[int, np.ndarray, int, int]],
                  ) -> list[Found] | None:
    """The situations named by ``candidates`` (value, its members in ``cell``, graded,
    failed) of ``axis`` in a situation's graded members ``cell`` (failing beyond ``rate``
    by ``excess``) when they hold its failures as groups, with a group of the rest on an
    axis read from the calls if needed (:func:`_core_parts`); None when they do not."""

    g_cell, _ = _count(profiles, cell)
    union = np.zeros(len(profiles.n), dtype=bool)
    for _, child, _, _ in candidates:
        union |= child
    g_rest, f_rest = _count(profiles, cell & ~union)
    if g_rest < NARROWS * g_cell:
        return None  # together they are nearly the whole cell: naming them narrows nothing
    # together they stand out from the part of the cell none of them holds, and each
    # of them does at ``ALPHA``
    g_union, f_union = _count(profiles, union)
    if not _stands_out(f_union, g_union, f_rest, g_rest) or not all(
            f * g_rest >= RATIO * f_rest * g and above(f, g, f_rest, g_rest) < ALPHA
            for _, _, g, f in candidates):
        return None
    parts = [Found((*item.coordinates, (axis, value)), f - g * rate)
             for value, _, g, f in candidates]
    # and what the rest fails beyond elsewhere is no more than the groups leaked, or
    # than they leaked plus one group of the rest on an axis read from the calls
    core_excess = sum(f - g * rate for _, _, g, f in candidates)
    if f_rest - g_rest * rate > LEAK * core_excess:
        other = _rest_group(profiles, item, cell & ~union, rate, excess)
        if other is None:
            return None
        coordinate, g_other, f_other = other
        if f_rest - f_other - (g_rest - g_other) * rate > LEAK * core_excess:
            return None
        parts.append(Found((*item.coordinates, coordinate), f_other - g_other * rate))
    return parts


def _rest_group(profiles: Profiles, item: Found, rest: np.ndarray, rate: float,
                excess: float) -> tuple[tuple[int, int], int, int] | None:
    """The coordinate on an axis read from the calls that isolates a failing group in the
    rest of a cell (its failures kept a ``NAMING_SHARE`` of the cell's excess and it stands
    out from the rest of the rest), with its (graded, failed); None when none does."""
    used = {axis for axis, _ in item.coordinates}
    best: tuple[float, tuple[int, int], int, int] | None = None
    for coordinate, _, g, f in _call_groups(profiles, rest, used, rate, excess):
        if best is None or f - g * rate > best[0]:
            best = (f - g * rate, coordinate, g, f)
    return None if best is None else best[1:]


def _call_groups(profiles: Profiles, cell: np.ndarray, used: set[int], rate: float,
                 excess: float) -> Iterator[tuple[tuple[int, int], np.ndarray, int, int]]:
    """(coordinate, its members in ``cell``, graded, failed) of each value of an axis read
    from the calls (none of ``used``) whose cell inside ``cell`` keeps ``NAMING_SHARE`` of
    ``excess`` (failures beyond ``rate``) and ``MIN_FAILED`` failures, leaves out at least
    ``NARROWS`` of it, and stands out from the rest of it."""
    g_cell, f_cell = _count(profiles, cell)
    for coordinate, child, g, f in _call_cells(profiles, cell, used):
        if f >= MIN_FAILED and f - g * rate >= NAMING_SHARE * excess and \
                g <= (1 - NARROWS) * g_cell and _stands_out(f, g, f_cell - f, g_cell - g):
            yield coordinate, child, g, f


def _call_cells(profiles: Profiles, cell: np.ndarray, used: set[int],
                ) -> Iterator[tuple[tuple[int, int], np.ndarray, int, int]]:
    """(coordinate, its members in ``cell``, graded, failed) of each value in ``cell`` of
    each axis read from the calls (none of ``used``), axis by axis in the canonical order
    (:data:`processor._discovery.AXIS_ORDER`): of two cells that tie, the first is kept,
    so ``world_state=missing`` names the group, not ``tool_condition=not_found``, which
    holds the same conversations."""
    for axis in axis_order(profiles):
        if axis in used or profiles.axes[axis] in READ_AXES:
            continue
        column = profiles.codes[:, axis]
        for value in np.unique(column[cell]):
            child = cell & (column == value)
            yield (axis, int(value)), child, *_count(profiles, child)


POOLED = frozenset({"persistent", "uncertain"})
"""Statuses of situations named again on both periods pooled (*Named on both periods* in
:mod:`processor.situations`): a group failing in both, or not yet told apart."""


def name_pooled(profiles: Profiles, judged: Sequence[Judged],
                totals: Sequence[tuple[int, int]], names: PeriodNames,
                min_support: int) -> list[Judged]:
    """The judged situations, a persistent or uncertain one whose failures are one group
    on an axis read from the calls, as both periods pooled show, replaced by that group
    (see *Named on both periods* in :mod:`processor.situations`), judged again."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _pooled_named)


def _pooled_named(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
                  judged: Sequence[Judged]) -> list[Proposal]:
    """The cell one coordinate of an axis read from the calls narrower that holds the
    failures of a persistent or uncertain situation, both periods pooled: it keeps
    ``NAMING_SHARE`` of the excess, stands out from the rest of the situation, and that
    rest, without the members of the other situations (but those around it), fails no
    more than the conversations outside it (Fisher p >= ``ALPHA``); of several, the one
    standing out most. None when none does."""
    if verdict.status not in POOLED or len(item.coordinates) >= 3:
        return []
    used = {axis for axis, _ in item.coordinates}
    graded = profiles.graded
    cell = graded & mask & ~_claimed(profiles, mask, judged)
    g_out, f_out = _count(profiles, graded & ~mask)
    g_cell, f_cell = _count(profiles, cell)
    rate = f_out / g_out if g_out else 0.0
    excess = f_cell - g_cell * rate
    if f_cell < MIN_FAILED or excess <= 0:
        return []
    elsewhere = _elsewhere(profiles, item, mask, judged)
    best: tuple[float, tuple[int, int], float] | None = None
    for coordinate, child, g, f in _call_groups(profiles, cell, used, rate, excess):
        g_rest, f_rest = _count(profiles, cell & ~child & ~elsewhere)
        if above(f_rest, g_rest, f_out, g_out) < ALPHA:
            continue  # the rest fails too: a second group, or the same one wider
        apart = f - g * f_cell / g_cell
        if best is None or apart > best[0]:
            best = (apart, coordinate, f - g * rate)
    if best is None:
        return _pooled_two(profiles, item, cell, used, rate, excess, elsewhere, verdict,
                           (g_out, f_out))
    part = Found((*item.coordinates, best[1]), best[2])
    return [Proposal((part,), same_status=verdict.status != "uncertain")]


def _pooled_two(profiles: Profiles, item: Found, cell: np.ndarray, used: set[int],
                rate: float, excess: float, elsewhere: np.ndarray, verdict: Verdict,
                out: tuple[int, int]) -> list[Proposal]:
    """Two values of one axis read from the calls whose cells inside ``cell`` (a
    situation's graded members, both periods pooled, failing beyond ``rate`` by
    ``excess``) hold its failures as two groups: each keeps ``NAMING_SHARE`` of the
    excess and ``MIN_FAILED`` failures and stands out from the part of the cell neither
    holds, which is at least ``NARROWS`` of it and, without the members of the other
    situations, fails no more than the conversations outside (``out``: graded, failed;
    Fisher p >= ``ALPHA``). Of several pairs, the one holding the most failures beyond the
    cell's rate; none when none does (see *Named on both periods*)."""
    g_out, f_out = out
    g_cell, f_cell = _count(profiles, cell)
    best: tuple[float, tuple[Found, Found]] | None = None
    by_axis: dict[int, list[tuple[tuple[int, int], np.ndarray, int, int]]] = {}
    for coordinate, child, g, f in _call_cells(profiles, cell, used):
        if f >= MIN_FAILED and f - g * rate >= NAMING_SHARE * excess:
            by_axis.setdefault(coordinate[0], []).append((coordinate, child, g, f))
    for groups in by_axis.values():
        for (coordinate_a, child_a, g_a, f_a), (coordinate_b, child_b, g_b, f_b) in \
                combinations(groups, 2):
            rest = cell & ~child_a & ~child_b
            g_rest, f_rest = _count(profiles, rest)
            if g_rest < NARROWS * g_cell or not all(
                    _stands_out(f, g, f_rest, g_rest) for g, f in ((g_a, f_a), (g_b, f_b))):
                continue
            g_left, f_left = _count(profiles, rest & ~elsewhere)
            if above(f_left, g_left, f_out, g_out) < ALPHA:
                continue  # the rest fails too: a third group, or one of them wider
            apart = f_a + f_b - (g_a + g_b) * f_cell / g_cell
            if best is None or apart > best[0]:
                best = (apart, (Found((*item.coordinates, coordinate_a), f_a - g_a * rate),
                                Found((*item.coordinates, coordinate_b), f_b - g_b * rate)))
    if best is None:
        return []
    return [Proposal(best[1], same_status=verdict.status != "uncertain")]


def widen_pooled(profiles: Profiles, judged: Sequence[Judged],
                 totals: Sequence[tuple[int, int]], names: PeriodNames,
                 min_support: int) -> list[Judged]:
    """The judged situations, a persistent one named by a coordinate of an axis read from
    the calls that both periods pooled do not bear out replaced by the cell without it
    (see *Widened on both periods* in :mod:`processor.situations`), judged again."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _pooled_wider)


def _pooled_wider(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
                  judged: Sequence[Judged]) -> list[Proposal]:
    """The cells one coordinate of an axis read from the calls wider than a persistent
    situation of two or three coordinates, whose rest (without the members of the other
    situations but those around it) fails above the conversations outside it in both
    periods (Fisher p < ``ALPHA``) while, both periods pooled, the situation does not stand
    out from that rest: the coordinate was named on one period's chance. The least
    standing out first; none when none is such."""
    if verdict.status != "persistent" or len(item.coordinates) < 2:
        return []
    graded = profiles.graded
    own = graded & mask & ~_claimed(profiles, mask, judged)
    g_own, f_own = _count(profiles, own)
    found: list[tuple[float, Found]] = []
    for coordinate in item.coordinates:
        if profiles.axes[coordinate[0]] in READ_AXES:
            continue  # a read coordinate: *Read axes* widens it
        wider = tuple(other for other in item.coordinates if other != coordinate)
        wide = profiles.mask(wider)
        rest = graded & wide & ~mask & ~_elsewhere(profiles, item, wide, judged)
        g_rest, f_rest = _count(profiles, rest)
        if f_rest < MIN_FAILED or _stands_out(f_own, g_own, f_rest, g_rest):
            continue
        if not all(_fails_above(profiles, rest, ~wide, period)
                   for period in (LATEST, PREVIOUS)):
            continue  # the rest does not fail like a group in both periods
        if _leaked(profiles, Found(wider, 0.0), rest, wide, judged):
            continue  # what the rest fails, a read-axis group beside it may have leaked
        g_out, f_out = _count(profiles, graded & ~wide)
        g_wide, f_wide = _count(profiles, graded & wide)
        excess = f_wide - g_wide * (f_out / g_out if g_out else 0.0)
        found.append((above(f_own, g_own, f_rest, g_rest), Found(wider, excess)))
    found.sort(key=lambda entry: (-entry[0], entry[1].coordinates))
    return [Proposal((part,), same_status=True) for _, part in found]


def _leaked(profiles: Profiles, wider: Found, rest: np.ndarray, wide: np.ndarray,
            judged: Sequence[Judged]) -> bool:
    """Whether, in some period, what ``rest`` (members of the cell ``wider``, ``wide``)
    fails beyond the conversations outside the cell is no more than ``LEAK`` times what the
    situations judged one read coordinate narrower than ``wider`` fail beyond them: the
    members a read-axis group leaked by being misread (*Read-axis cores*)."""
    read = [i for i, axis in enumerate(profiles.axes) if axis in READ_AXES]
    groups = np.zeros(len(profiles.n), dtype=bool)
    for other, other_mask, _, _ in judged:
        if _one_read_narrower(wider, other, read):
            groups |= other_mask
    if not groups.any():
        return False
    for period in (LATEST, PREVIOUS):
        g_out, f_out = profiles.counts(profiles.graded & ~wide, period)
        rate = f_out / g_out if g_out else 0.0
        g_rest, f_rest = profiles.counts(rest, period)
        g_groups, f_groups = profiles.counts(profiles.graded & groups, period)
        if f_rest - g_rest * rate <= LEAK * (f_groups - g_groups * rate):
            return True
    return False


def _elsewhere(profiles: Profiles, item: Found, around: np.ndarray,
               judged: Sequence[Judged]) -> np.ndarray:
    """The members of the situations judged other than ``item``, but for those holding
    every member of ``around`` (a situation around it leaves no rest to look at)."""
    elsewhere = np.zeros(len(profiles.n), dtype=bool)
    for other, other_mask, _, _ in judged:
        if other.coordinates != item.coordinates and (around & ~other_mask).any():
            elsewhere |= other_mask
    return elsewhere


def _fails_above(profiles: Profiles, members: np.ndarray, outside: np.ndarray,
                 period: int) -> bool:
    """Whether the graded ``members`` fail above the graded ``outside`` in ``period``
    (Fisher p < ``ALPHA``)."""
    g, f = profiles.counts(members, period)
    g_out, f_out = profiles.counts(outside, period)
    return above(f, g, f_out, g_out) < ALPHA


NAMING_AXES = ("tool",)
"""Axes that say where a group fails and that a name keeps even when they narrow little
(*Where it fails* in :mod:`processor.situations`): the generator aims at the tool."""

READ_NAMING_AXES = (*NAMING_AXES, "world_state")
"""The naming axes of a situation named by one coordinate read from free text alone (a
stance): who the people are does not say where they fail."""


def name_where(profiles: Profiles, judged: Sequence[Judged],
               totals: Sequence[tuple[int, int]], names: PeriodNames,
               min_support: int) -> list[Judged]:
    """The judged situations, one without a tool named by the tool that holds its
    failures (see *Where it fails* in :mod:`processor.situations`), judged again."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _named)


def name_why(profiles: Profiles, judged: Sequence[Judged],
             totals: Sequence[tuple[int, int]], names: PeriodNames,
             min_support: int) -> list[Judged]:
    """The judged situations, one named by a coordinate that states nothing named by what
    says why (see *Names that say why* in :mod:`processor.situations`), judged again."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _why)


def _why(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
         judged: Sequence[Judged]) -> list[Proposal]:
    """The situation with its coordinates that state nothing swapped for what says why,
    in the periods deciding its status (:func:`processor._discovery.say_why`), to keep its
    status, unless that situation is reported already; else none."""
    graded, _ = _deciding(profiles, mask, verdict, judged)
    g, f = _count(profiles, graded)
    stated = say_why(profiles, item.coordinates, graded, f / g if g else 0.0)
    if stated == item.coordinates or _reported(judged, stated):
        return []
    return [Proposal((Found(stated, item.excess),), same_status=True)]


def name_lean(profiles: Profiles, judged: Sequence[Judged],
              totals: Sequence[tuple[int, int]], names: PeriodNames,
              min_support: int) -> list[Judged]:
    """The judged situations, one of three coordinates without the one that no longer
    stands out within the other two (see *Lean names* in :mod:`processor.situations`),
    judged again."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _lean)


def _lean(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
          judged: Sequence[Judged]) -> list[Proposal]:
    """The situation without its coordinate standing out least from the rest of the
    situation without it (its own members in the periods deciding its status, Fisher),
    when that coordinate does not stand out (rule 3) and that situation is not reported
    already with a status; else none. A tool (:data:`NAMING_AXES`) is never left out: it
    says where."""
    if len(item.coordinates) < 3:
        return []
    key = sorted(item.coordinates)
    others_judged = [entry for entry in judged if sorted(entry[0].coordinates) != key]
    weakest: tuple[float, tuple[tuple[int, int], ...]] | None = None
    for coordinate in item.coordinates:
        if profiles.axes[coordinate[0]] in NAMING_AXES:
            continue
        wider = tuple(c for c in item.coordinates if c != coordinate)
        _, cell = _deciding(profiles, profiles.mask(wider), verdict, others_judged)
        g, f = _count(profiles, cell & mask)
        g_rest, f_rest = _count(profiles, cell & ~mask)
        if _stands_out(f, g, f_rest, g_rest):
            continue
        p = above(f, g, f_rest, g_rest)
        if weakest is None or p > weakest[0]:
            weakest = (p, wider)
    if weakest is None or _reported(judged, weakest[1], flagged=True):
        return []  # reported already with a status of its own (an uncertain one it joins)
    return [Proposal((Found(weakest[1], item.excess),), same_status=True)]


FAULT_AXES = ("world_state", "tool_condition")
"""Axes taken from the calls that say what went wrong: what the world was, then how the
tool answered (*Names that say what went wrong* in :mod:`processor.situations`)."""


def name_fault(profiles: Profiles, judged: Sequence[Judged],
               totals: Sequence[tuple[int, int]], names: PeriodNames,
               min_support: int) -> list[Judged]:
    """The judged situations, one whose failing members nearly all share a marked world
    state or tool condition named by it too (see *Names that say what went wrong* in
    :mod:`processor.situations`), judged again."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _fault)


def _fault(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
           judged: Sequence[Judged]) -> list[Proposal]:
    """The situation named by what went wrong (:func:`_fault_named`), to keep its status,
    unless it is named so already or that situation is reported already; else none."""
    _, cell = _deciding(profiles, mask, verdict, judged)
    coordinates = _fault_named(profiles, item.coordinates, cell)
    if coordinates == item.coordinates or len(coordinates) > 3 or _reported(
            judged, coordinates):
        return []
    return [Proposal((Found(coordinates, item.excess),), same_status=True)]


def _fault_named(profiles: Profiles, coordinates: tuple[tuple[int, int], ...],
                 cell: np.ndarray) -> tuple[tuple[int, int], ...]:
    """``coordinates`` with the value of a fault axis (:data:`FAULT_AXES`) that holds
    ``COINCIDE`` of the failing conversations of ``cell`` (the situation's own graded
    members in the periods deciding its status): a marked value (:func:`_marked`) on an
    axis the name leaves unmarked (a tool condition only where no marked world state
    names it: ``not_found`` says again what ``missing`` says), failing more than the rest
    of the cell (:func:`_fails_more`); then without the usual values of fault axes that
    narrow nothing (rule 3)."""
    g_cell, f_cell = _count(profiles, cell)
    if f_cell < MIN_FAILED:
        return coordinates
    said = {profiles.axes[axis] for axis, value in coordinates
            if _marked(profiles, (axis, value))}
    for axis in axis_order(profiles):
        name = profiles.axes[axis]
        if name not in FAULT_AXES or said & set(FAULT_AXES[:FAULT_AXES.index(name) + 1]):
            continue
        column = profiles.codes[:, axis]
        held = _failures_by_value(profiles, cell, column)
        added = None
        for value in np.flatnonzero(held >= COINCIDE * f_cell):
            g, f = _count(profiles, cell & (column == value))
            if _marked(profiles, (axis, int(value))) and g < g_cell and \
                    _fails_more(f, g, f_cell - f, g_cell - g):
                added = (axis, int(value))
        if added is not None:
            coordinates = (*coordinates, added)
            break
    pooled = profiles.graded & (profiles.period >= 0)
    for coordinate in coordinates:
        others = tuple(c for c in coordinates if c != coordinate)
        if profiles.axes[coordinate[0]] in FAULT_AXES and others and \
                not _marked(profiles, coordinate) and \
                narrows_nothing(profiles, coordinates, others, pooled):
            coordinates = others
    return coordinates


def _fails_more(f: int, g: int, f_rest: int, g_rest: int) -> bool:
    """Whether ``f`` of ``g`` fail more than ``f_rest`` of ``g_rest``: significantly
    (Fisher p < ``ALPHA``) when the rest is large enough for any split of the failures to
    be (a tool whose calls mostly err holds most failures of any group on it in errors,
    14 of 16 failing against 2 of 4 that answered); else merely more (38 refusals of 41
    calls, 25 failing, against 3 timeouts passing: too few for a test, and the value
    holds nearly every member)."""
    if f * g_rest <= f_rest * g:
        return False
    return not _testable(g, f + f_rest, g_rest) or above(f, g, f_rest, g_rest) < ALPHA


def _testable(g: int, failed: int, g_rest: int) -> bool:
    """Whether some split of ``failed`` failures between ``g`` members and ``g_rest``
    others is significant: the most extreme one, every failure it can hold in the ``g``
    (Fisher p < ``ALPHA``)."""
    extreme = min(g, failed)
    return above(extreme, g, failed - extreme, g_rest) < ALPHA


def _marked(profiles: Profiles, coordinate: tuple[int, int]) -> bool:
    """Whether a coordinate says something went wrong on its axis: not the axis' usual
    value (``success``, ``entity_exists``), not a value that states nothing."""
    axis, value = coordinate
    return value != _usual(profiles, profiles.codes[:, axis]) and \
        not _unstated(profiles, coordinate)


def _reported(judged: Sequence[Judged], coordinates: Sequence[tuple[int, int]], *,
              flagged: bool = False) -> bool:
    """Whether a judged situation already has these coordinates (with a status other than
    uncertain, when ``flagged``)."""
    return any(sorted(other.coordinates) == sorted(coordinates)
               and not (flagged and verdict.status == "uncertain")
               for other, _, verdict, _ in judged)


def _named(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
           judged: Sequence[Judged]) -> list[Proposal]:
    """The situation named by the tool that holds its failures (:func:`_where`), to keep
    its status, unless that situation is reported already; else none."""
    coordinate = _where(profiles, item, mask, verdict, judged)
    if coordinate is None:
        return []
    named = Found((*item.coordinates, coordinate), item.excess)
    if _reported(judged, named.coordinates):
        return []
    return [Proposal((named,), same_status=True)]


def _where(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
           judged: Sequence[Judged]) -> tuple[int, int] | None:
    """The coordinate of a naming axis (:data:`NAMING_AXES`; :data:`READ_NAMING_AXES` for
    a situation named by one read coordinate alone) holding ``COINCIDE`` of the
    situation's failing members in the periods deciding its status (or more than
    ``SIBLING_SHARE`` of them, with a rest failing like the conversations outside), when
    the rest of the situation fails significantly less (Fisher p < ``ALPHA``, Holm over
    the values that could hold ``COINCIDE``); else, for a status that is a change, the one
    holding most of them where the change is its own (:func:`_where_changed`); None otherwise."""
    read_alone = len(item.coordinates) == 1 and \
        profiles.axes[item.coordinates[0][0]] in READ_AXES
    axes = [i for i, axis in enumerate(profiles.axes)
            if axis in (READ_NAMING_AXES if read_alone else NAMING_AXES)]
    used = {axis for axis, _ in item.coordinates}
    if len(item.coordinates) >= 3 or used & set(axes):
        return None
    graded, cell = _deciding(profiles, mask, verdict, judged)
    g_cell, f_cell = _count(profiles, cell)
    if f_cell < MIN_FAILED:
        return None
    g_out, f_out = _count(profiles, graded & ~mask)
    for axis in axes:
        column = profiles.codes[:, axis]
        # the value holding most failures is picked after looking: every value with the
        # members to hold ``COINCIDE`` of them could have been, so each is one test (Holm).
        # Fisher's test is conditional on the cell's counts, which rule the others out
        tests: list[tuple[float, int, bool]] = []
        for value in np.unique(column[cell]):
            child = cell & (column == value)
            g = int(profiles.n[child].sum())
            if not COINCIDE * f_cell <= g < g_cell:
                continue
            f = int(profiles.n[child & profiles.failed].sum())
            # it holds the group: ``COINCIDE`` of the failures, or more than
            # ``SIBLING_SHARE`` of them with a rest failing like the conversations outside
            # (what keeps it from ``COINCIDE`` is background, not a second group)
            holds = f >= COINCIDE * f_cell or (
                f > SIBLING_SHARE * f_cell
                and above(f_cell - f, g_cell - g, f_out, g_out) >= ALPHA)
            tests.append((above(f, g, f_cell - f, g_cell - g), int(value), holds))
        for step, (p, value, holds) in enumerate(sorted(tests)):
            if p >= ALPHA / (len(tests) - step):
                break  # Holm: this and every larger p stand
            if holds:
                return axis, value
        nearly_all = _nearly_all(profiles, cell, column, g_cell, f_cell)
        if nearly_all is not None:
            return axis, nearly_all
        changed = _where_changed(profiles, mask, verdict, judged, cell, column)
        if changed is not None:
            return axis, changed
    return None


def _nearly_all(profiles: Profiles, cell: np.ndarray, column: np.ndarray, g_cell: int,
                f_cell: int) -> int | None:
    """The value of a naming axis holding ``COINCIDE`` of the failing members ``cell`` of
    a situation (``g_cell`` graded, ``f_cell`` failing) and all of it but members too few
    for any split of the failures to be significant (Fisher, every failure in the value),
    failing more than they do: the data cannot test it and the value is nearly the whole
    situation (38 of 39 graded members of ``tool_condition=success &
    world_state=already_acted_on`` were one tool's, which answers "already enabled" with a
    success); None otherwise (*Where it fails*)."""
    value = int(np.argmax(_failures_by_value(profiles, cell, column)))
    g, f = _count(profiles, cell & (column == value))
    if f < COINCIDE * f_cell or g == g_cell or _testable(g, f_cell, g_cell - g) or \
            not _fails_more(f, g, f_cell - f, g_cell - g):
        return None
    return value


def _failures_by_value(profiles: Profiles, cell: np.ndarray,
                       column: np.ndarray) -> np.ndarray:
    """The failing conversations of ``cell`` per value of ``column`` (an axis' codes)."""
    failing = cell & profiles.failed
    return np.bincount(column[failing], weights=profiles.n[failing],
                       minlength=len(profiles.values))


def _where_changed(profiles: Profiles, mask: np.ndarray, verdict: Verdict,
                   judged: Sequence[Judged], cell: np.ndarray,
                   column: np.ndarray) -> int | None:
    """The value of a naming axis holding more than ``SIBLING_SHARE`` of the failing
    members ``cell`` of a situation whose status is a change (new against the previous
    period, fixed), in the period deciding it, when in the other period the rest of the
    situation fails significantly more than that value's members (Fisher p < ``ALPHA``;
    the rest is not tested against the period outside it): the change is that value's;
    None otherwise (*Where it fails*)."""
    if verdict.status not in ("new", "fixed") or verdict.compared != "versions":
        return None
    held = _failures_by_value(profiles, cell, column)
    f_cell = int(held.sum())
    value = int(np.argmax(held))
    if not held[value] > SIBLING_SHARE * f_cell:
        return None
    # the other period: members of the situation there, without those judged inside it
    other = LATEST if verdict.status == "fixed" else PREVIOUS
    there = profiles.graded & (profiles.period == other) & mask & \
        ~_claimed(profiles, mask, judged)
    g, f = _count(profiles, there & (column == value))
    g_rest, f_rest = _count(profiles, there & (column != value))
    return value if above(f_rest, g_rest, f, g) < ALPHA else None
