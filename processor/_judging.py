"""Judging the situations found: supersets without what they hold, siblings, read axes,
read-axis cores, where it fails.

The rules (*Collapse*, *Supersets are judged without what they hold*, *Siblings*, *Read
axes*, *Read-axis cores*, *Where it fails*) are documented in :mod:`processor.situations`;
this module applies them to the situations discovery kept (:mod:`processor._discovery`),
smallest first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
    Found,
    Profiles,
    _stands_out,
    above,
)
from processor._verdicts import PeriodNames, Verdict, decide

__all__ = ["LEAK", "NAMING_AXES", "READ_AXES", "SIBLING_SHARE", "Judged", "find_cores",
           "judge_all", "name_where", "widen"]

SIBLING_SHARE = 0.5
"""Share of a superset's remaining failing members (in the period it fails) a sibling of
the situation inside it must hold to name the remainder."""


Judged = tuple[Found, np.ndarray, Verdict, list[tuple[int, int]]]
"""A situation as judged: what names it, its mask, its verdict, its judged counts."""


def judge_all(profiles: Profiles, kept: Sequence[tuple[Found, np.ndarray]],
               totals: Sequence[tuple[int, int]], names: PeriodNames,
               min_support: int) -> list[Judged]:
    """Judge the collapsed situations, the smaller first (see *Supersets*, *Siblings*)."""
    kept = list(kept)
    # the smaller first: a larger one is judged without the members of those inside it
    kept.sort(key=lambda pair: (int(profiles.n[pair[1]].sum()),
                                profiles.named(pair[0].coordinates)))
    failing = profiles.graded & profiles.failed

    def judge(mask: np.ndarray, before: Sequence[np.ndarray]) -> tuple[
            Verdict | None, list[tuple[int, int]]]:
        claimed = np.zeros(len(profiles.n), dtype=bool)
        for other in before:
            claimed |= other
        counts = [profiles.counts(mask, p) for p in (LATEST, PREVIOUS)]
        judged = [profiles.counts(mask & ~claimed, p) for p in (LATEST, PREVIOUS)]
        rest = (totals[0][0] - counts[0][0], totals[0][1] - counts[0][1],
                totals[1][0] - counts[1][0], totals[1][1] - counts[1][1])
        (g_now, f_now), (g_before, f_before) = judged
        # what a superset has left after the situations inside it is a second look at
        # conversations already explained: each such look is one more test (Bonferroni)
        alpha = ALPHA / len(kept) if judged != counts else ALPHA
        return decide((g_now, f_now, g_before, f_before), rest, names, min_support,
                        alpha), judged

    judged_in_order: list[tuple[Found, np.ndarray, Verdict, list[tuple[int, int]]]] = []
    for item, mask in kept:
        verdict, judged = judge(mask, [m for _, m, _, _ in judged_in_order])
        if verdict is None:
            continue  # its excess is explained by the situations inside it
        sibling = _sibling(profiles, item, mask, verdict,
                           [(other, m) for other, m, _, _ in judged_in_order],
                           {i for i, (_, _, v, _) in enumerate(judged_in_order)
                            if v.status != verdict.status})
        if sibling is not None:
            sibling_mask = profiles.mask(sibling.coordinates)
            sibling_verdict, sibling_judged = judge(
                sibling_mask, [m for _, m, _, _ in judged_in_order])
            if sibling_verdict is not None and sibling_verdict.status == verdict.status:
                item, mask, verdict, judged = (sibling, sibling_mask, sibling_verdict,
                                               sibling_judged)
        # a situation inside it with the same status, whose failing members it holds, is
        # a fragment of one group when its own rest fails the same way: it reports the group
        parts = {i for i, (_, other, other_verdict, _) in enumerate(judged_in_order)
                 if other_verdict.status == verdict.status
                 and int(profiles.n[other & mask & failing].sum())
                 >= COINCIDE * int(profiles.n[other & failing].sum())}
        if parts:
            remaining = [e for i, e in enumerate(judged_in_order) if i not in parts]
            whole, whole_judged = judge(mask, [m for _, m, _, _ in remaining])
            if whole is not None and whole.status == verdict.status:
                judged_in_order, verdict, judged = remaining, whole, whole_judged
        judged_in_order.append((item, mask, verdict, judged))
    return judged_in_order


def widen(profiles: Profiles, kept: Sequence[tuple[Found, np.ndarray]],
           totals: Sequence[tuple[int, int]], names: PeriodNames,
           min_support: int) -> list[Judged]:
    """The judged situations, those narrowed by a coordinate of a *read* axis
    (:data:`READ_AXES`) widened to their parent cell when the rest of the parent fails the
    same way (see *Read axes* in :mod:`processor.situations`)."""
    read = {i for i, axis in enumerate(profiles.axes) if axis in READ_AXES}
    current = list(kept)
    judged = judge_all(profiles, current, totals, names, min_support)

    def narrowed(item: Found) -> bool:  # by exactly one read coordinate, with a parent
        return len(item.coordinates) > 1 and \
            sum(axis in read for axis, _ in item.coordinates) == 1

    def key(item: Found) -> tuple[tuple[int, int], ...]:
        return tuple(sorted(item.coordinates))

    # one test per such situation (Bonferroni over them)
    tests = max(1, sum(narrowed(item) for item, _, _, _ in judged))
    tried: set[tuple[tuple[int, int], ...]] = set()
    while True:
        candidate = next(((item, mask, verdict) for item, mask, verdict, _ in judged
                          if narrowed(item) and key(item) not in tried), None)
        if candidate is None:
            return judged
        item, mask, verdict = candidate
        tried.add(key(item))
        parent_coordinates = tuple(c for c in item.coordinates if c[0] not in read)
        axis = next(a for a, _ in item.coordinates if a in read)
        parent = profiles.mask(parent_coordinates)
        size = int(profiles.n[parent].sum())
        claimed = np.zeros(len(profiles.n), dtype=bool)
        siblings = set()
        telling = False
        for other, other_mask, other_verdict, _ in judged:
            if key(other) == key(item) or int(profiles.n[other_mask].sum()) >= size:
                continue  # itself, or judged after the parent (not taken out of it)
            extra = set(other.coordinates) - set(parent_coordinates)
            if len(other.coordinates) == len(item.coordinates) and len(extra) == 1 and \
                    next(iter(extra))[0] == axis:
                if other_verdict.status == verdict.status:
                    # it goes if the parent is taken. Failing significantly less than the
                    # situation, it is the group diluted by that value's other members
                    # (members read as another value): evidence that the group extends, it
                    # stays in the rest. Failing as much, it may be a second group: no
                    # such evidence, left out of the rest
                    siblings.add(key(other))
                    if _diluted(profiles, mask, other_mask, verdict):
                        continue
                else:
                    telling = True  # the axis tells two groups apart in this parent
            claimed |= other_mask
        if telling:
            continue
        rest = parent & ~mask & ~claimed
        counts = [profiles.counts(rest, p) for p in (LATEST, PREVIOUS)]
        away = [profiles.counts(parent, p) for p in (LATEST, PREVIOUS)]
        outside = (totals[0][0] - away[0][0], totals[0][1] - away[0][1],
                   totals[1][0] - away[1][0], totals[1][1] - away[1][1])
        remainder = decide((*counts[0], *counts[1]), outside, names, min_support,
                             ALPHA / tests)
        if remainder is None or remainder.status != verdict.status:
            continue
        gone = {key(item), *siblings}
        trial = [(other, other_mask) for other, other_mask in current
                 if key(other) not in gone and key(other) != tuple(sorted(parent_coordinates))]
        trial.append((Found(parent_coordinates, item.excess), parent))
        rejudged = judge_all(profiles, trial, totals, names, min_support)
        if any(key(other) == tuple(sorted(parent_coordinates))
               and other_verdict.status == verdict.status
               for other, _, other_verdict, _ in rejudged):
            current, judged = trial, rejudged


def _diluted(profiles: Profiles, mask: np.ndarray, other: np.ndarray, verdict: Verdict) -> bool:
    """Whether ``other`` fails significantly less than ``mask`` (Fisher p < ``ALPHA``) in
    the period deciding ``verdict`` (the latest if it fails now, else the previous)."""
    period = LATEST if verdict.fails_now else PREVIOUS
    g, f = profiles.counts(mask, period)
    other_g, other_f = profiles.counts(other, period)
    return above(f, g, other_f, other_g) < ALPHA


def _sibling(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
             inside: Sequence[tuple[Found, np.ndarray]], other_status: set[int]) -> Found | None:
    """The group a superset's remainder holds, named by a sibling of a situation inside
    it with another status (indexes ``other_status`` of ``inside``; see *Siblings* in the
    :mod:`processor.situations`), or None."""
    mine = set(item.coordinates)
    axes = {c[0] for i, (other, _) in enumerate(inside)
            if i in other_status and mine < set(other.coordinates)
            for c in set(other.coordinates) - mine if len(other.coordinates) == len(mine) + 1}
    if not axes:
        return None
    claimed = np.zeros(len(profiles.n), dtype=bool)
    for _, other_mask in inside:
        claimed |= other_mask
    period = LATEST if verdict.fails_now else PREVIOUS
    rest = mask & ~claimed & profiles.graded & profiles.failed & (profiles.period == period)
    failing = int(profiles.n[rest].sum())
    taken = {tuple(sorted(other.coordinates)) for other, _ in inside}
    best: tuple[int, tuple[tuple[int, int], ...]] | None = None
    for axis in sorted(axes):
        column = profiles.codes[:, axis]
        f = np.bincount(column, weights=np.where(rest, profiles.n, 0),
                        minlength=len(profiles.values))
        for value in np.flatnonzero(f > SIBLING_SHARE * failing):
            coordinates = tuple(sorted((*item.coordinates, (axis, int(value)))))
            if coordinates not in taken and (best is None or int(f[value]) > best[0]):
                best = (int(f[value]), coordinates)
    return None if best is None else Found(best[1], float(best[0]))


def _claimed(profiles: Profiles, mask: np.ndarray, judged: Sequence[Judged]) -> np.ndarray:
    """The members of a situation held by smaller situations judged before it."""
    size = int(profiles.n[mask].sum())
    claimed = np.zeros(len(profiles.n), dtype=bool)
    for _, other_mask, _, _ in judged:
        if int(profiles.n[other_mask].sum()) < size:
            claimed |= other_mask & mask
    return claimed


def _deciding(profiles: Profiles, mask: np.ndarray, verdict: Verdict,
              judged: Sequence[Judged]) -> tuple[np.ndarray, np.ndarray]:
    """(the graded members of the periods that decide a situation's status: both for a
    persistent one, which fails in both; the situation's own among them, without the
    smaller situations judged inside it before it)."""
    graded = profiles.graded & (profiles.period == PREVIOUS) if not verdict.fails_now else (
        profiles.graded & (profiles.period == LATEST) if verdict.status != "persistent"
        else profiles.graded & (profiles.period >= 0))
    return graded, graded & mask & ~_claimed(profiles, mask, judged)


LEAK = 1.0
"""How much of a read-axis group's excess may have leaked into the rest of its cell, as a
multiple of the excess its core (the members read right) keeps: 1.0 says at least half
of the group is read right (*Read-axis cores* in :mod:`processor.situations`)."""

FLAGGED = {"new": frozenset({LATEST}), "persistent": frozenset({LATEST, PREVIOUS}),
           "fixed": frozenset({PREVIOUS})}
"""The periods a situation of each flagged status fails in."""


@dataclass(frozen=True)
class Proposal:
    """Narrower situations proposed in place of a judged one."""

    parts: tuple[Found, ...]
    """The narrower situations."""
    same_status: bool
    """True: each part must keep the replaced situation's status; False: each part is
    judged on its own with a status of its own (new, persistent or fixed)."""


Narrower = Callable[[Profiles, Found, np.ndarray, Verdict, Sequence[Judged]], list[Proposal]]
"""``(profiles, situation, its mask, its verdict, the judged) -> proposals``, tried in
order: the first whose parts keep their statuses replaces the situation."""


def find_cores(profiles: Profiles, judged: Sequence[Judged],
               totals: Sequence[tuple[int, int]], names: PeriodNames,
               min_support: int) -> list[Judged]:
    """The judged situations, a broad one whose failures are groups on a read axis (with
    what they leaked into the rest of the cell) replaced by those groups (see *Read-axis
    cores* in :mod:`processor.situations`), judged again with the others."""
    return _replace_until_stable(profiles, judged, totals, names, min_support, _cores)


def _replace_until_stable(profiles: Profiles, judged: Sequence[Judged],
                          totals: Sequence[tuple[int, int]], names: PeriodNames,
                          min_support: int, narrower: Narrower) -> list[Judged]:
    """The judged situations, each in turn replaced by the narrower situations of the
    first proposal ``narrower`` makes for it whose parts (those not reported already
    included) keep their statuses (:class:`Proposal`) once all are judged again; until none
    is replaced."""
    current = list(judged)
    tried: set[tuple[tuple[int, int], ...]] = set()
    while True:
        for item, mask, verdict, _ in current:
            key = tuple(sorted(item.coordinates))
            if key in tried:
                continue
            tried.add(key)
            replaced = None
            for proposal in narrower(profiles, item, mask, verdict, current):
                present = {tuple(sorted(other.coordinates)) for other, _, _, _ in current}
                kept = [(other, other_mask) for other, other_mask, _, _ in current
                        if tuple(sorted(other.coordinates)) != key]
                kept += [(part, profiles.mask(part.coordinates)) for part in proposal.parts
                         if tuple(sorted(part.coordinates)) not in present]
                rejudged = judge_all(profiles, kept, totals, names, min_support)
                statuses = {tuple(sorted(other.coordinates)): v.status
                            for other, _, v, _ in rejudged}
                got = [statuses.get(tuple(sorted(part.coordinates))) for part in proposal.parts]
                if all(status == verdict.status if proposal.same_status
                       else status in FLAGGED for status in got):
                    replaced = rejudged
                    break
            if replaced is not None:
                current = replaced
                break
        else:
            return current


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
    apart = _period_cores(profiles, item, mask, _claimed(profiles, mask, others), fails_in,
                          read)
    if apart:
        proposals.append(Proposal(tuple(apart), same_status=False))
    return proposals


def _one_read_narrower(item: Found, other: Found, read: Sequence[int]) -> bool:
    """Whether ``other`` is ``item`` and one coordinate of a read axis."""
    extra = set(other.coordinates) - set(item.coordinates)
    return len(other.coordinates) == len(item.coordinates) + 1 and len(extra) == 1 and \
        next(iter(extra))[0] in read


def _period_cores(profiles: Profiles, item: Found, mask: np.ndarray, claimed: np.ndarray,
                  fails_in: frozenset[int], read: Sequence[int]) -> list[Found]:
    """The cells one read coordinate narrower holding the failures of a situation (its
    members ``mask`` without those ``claimed`` by the situations judged inside it) as
    groups read right only in part, each value looked for in each period apart (a group
    failing in one period only is diluted by the other), when every period of ``fails_in``
    has such a group; or none."""

    def count(keep: np.ndarray) -> tuple[int, int]:
        return int(profiles.n[keep].sum()), int(profiles.n[keep & profiles.failed].sum())

    periods = []
    for period in (LATEST, PREVIOUS):
        graded = profiles.graded & (profiles.period == period)
        g_out, f_out = count(graded & ~mask)
        cell = graded & mask & ~claimed
        g_cell, f_cell = count(cell)
        rate = f_out / g_out if g_out else 0.0
        periods.append((period, cell, rate, g_cell, f_cell, f_cell - g_cell * rate))
    best: list[Found] = []
    for axis in read:
        column = profiles.codes[:, axis]
        usual = int(np.argmax(np.bincount(column, weights=profiles.n,
                                          minlength=len(profiles.values))))
        # (value, period, its members there, graded, failed, excess)
        candidates = []
        for period, cell, rate, g_cell, f_cell, excess in periods:
            if excess <= 0:
                continue
            for value in np.unique(column[cell]):
                child = cell & (column == value)
                g, f = count(child)
                if value != usual and f >= MIN_FAILED and \
                        f - g * rate >= NAMING_SHARE * excess and \
                        g <= (1 - NARROWS) * g_cell and f * g_cell > f_cell * g:
                    candidates.append((int(value), period, child, g, f, f - g * rate))
        if not fails_in <= {period for _, period, _, _, _, _ in candidates}:
            continue
        union = np.zeros(len(profiles.n), dtype=bool)
        for _, _, child, _, _, _ in candidates:
            union |= child
        cells = np.zeros(len(profiles.n), dtype=bool)
        for _, cell, _, _, _, _ in periods:
            cells |= cell
        g_rest, f_rest = count(cells & ~union)
        g_union, f_union = count(union)
        if g_rest < NARROWS * (g_rest + g_union):
            continue  # together they are nearly the whole cell: naming them narrows nothing
        # together they stand out from the part of the cell none of them holds (in both
        # periods), and each of them does at ``ALPHA``
        if not _stands_out(f_union, g_union, f_rest, g_rest) or not all(
                f * g_rest >= RATIO * f_rest * g and above(f, g, f_rest, g_rest) < ALPHA
                for _, _, _, g, f, _ in candidates):
            continue
        # and what the rest fails beyond elsewhere, in the periods they were found in, is
        # no more than the groups leaked
        left = 0.0
        for period, cell, rate, _, _, _ in periods:
            if period in {at for _, at, _, _, _, _ in candidates}:
                g_left, f_left = count(cell & ~union)
                left += f_left - g_left * rate
        if left > LEAK * sum(e for _, _, _, _, _, e in candidates):
            continue
        excesses: dict[int, float] = {}
        for value, _, _, _, _, e in candidates:
            excesses[value] = excesses.get(value, 0.0) + e
        parts = [Found((*item.coordinates, (axis, value)), e)
                 for value, e in sorted(excesses.items())]
        if sum(p.excess for p in parts) > sum(p.excess for p in best):
            best = parts
    return best


def _core_parts(profiles: Profiles, item: Found, cell: np.ndarray, out: np.ndarray,
                read: Sequence[int]) -> list[Found]:
    """The cells one read coordinate narrower holding the failures of ``cell`` (a
    situation's graded members in the periods looked at) as groups read right only in
    part, measured against ``out`` (the graded conversations outside it in those
    periods), or none."""

    def count(keep: np.ndarray) -> tuple[int, int]:
        return int(profiles.n[keep].sum()), int(profiles.n[keep & profiles.failed].sum())

    g_out, f_out = count(out)
    rate = f_out / g_out if g_out else 0.0
    g_cell, f_cell = count(cell)
    excess = f_cell - g_cell * rate
    if excess <= 0:
        return []
    best: list[Found] = []
    for axis in read:
        column = profiles.codes[:, axis]
        # the value most conversations are read as is where misread members land: the
        # rest of a cell, never a group read right
        usual = int(np.argmax(np.bincount(column, weights=profiles.n,
                                          minlength=len(profiles.values))))
        candidates = []
        for value in np.unique(column[cell]):
            if value == usual:
                continue
            child = cell & (column == value)
            g, f = count(child)
            if f >= MIN_FAILED and f - g * rate >= NAMING_SHARE * excess and \
                    g <= (1 - NARROWS) * g_cell and f * g_cell > f_cell * g:
                candidates.append((int(value), child, g, f))
        if not candidates:
            continue
        union = np.zeros(len(profiles.n), dtype=bool)
        for _, child, _, _ in candidates:
            union |= child
        g_rest, f_rest = count(cell & ~union)
        if g_rest < NARROWS * g_cell:
            continue  # together they are nearly the whole cell: naming them narrows nothing
        # together they stand out from the part of the cell none of them holds, and each
        # of them does at ``ALPHA``
        g_union, f_union = count(union)
        if not _stands_out(f_union, g_union, f_rest, g_rest) or not all(
                f * g_rest >= RATIO * f_rest * g and above(f, g, f_rest, g_rest) < ALPHA
                for _, _, g, f in candidates):
            continue
        parts = [Found((*item.coordinates, (axis, value)), f - g * rate)
                 for value, _, g, f in candidates]
        # and what the rest fails beyond elsewhere is no more than the groups leaked, or
        # than they leaked plus one group of the rest on an axis read from the calls
        core_excess = sum(f - g * rate for _, _, g, f in candidates)
        if f_rest - g_rest * rate > LEAK * core_excess:
            other = _rest_group(profiles, item, cell & ~union, rate, excess, read)
            if other is None:
                continue
            coordinate, g_other, f_other = other
            if f_rest - f_other - (g_rest - g_other) * rate > LEAK * core_excess:
                continue
            parts.append(Found((*item.coordinates, coordinate), f_other - g_other * rate))
        if sum(p.excess for p in parts) > sum(p.excess for p in best):
            best = parts
    return best


def _rest_group(profiles: Profiles, item: Found, rest: np.ndarray, rate: float,
                excess: float, read: Sequence[int]) -> tuple[tuple[int, int], int, int] | None:
    """The coordinate on an axis read from the calls that isolates a failing group in the
    rest of a cell (its failures kept a ``NAMING_SHARE`` of the cell's excess and it stands
    out from the rest of the rest), with its (graded, failed); None when none does."""
    used = {axis for axis, _ in item.coordinates}
    g_rest = int(profiles.n[rest].sum())
    f_rest = int(profiles.n[rest & profiles.failed].sum())
    best: tuple[float, tuple[int, int], int, int] | None = None
    for axis in range(len(profiles.axes)):
        if axis in used or axis in read:
            continue
        column = profiles.codes[:, axis]
        for value in np.unique(column[rest]):
            child = rest & (column == value)
            g = int(profiles.n[child].sum())
            f = int(profiles.n[child & profiles.failed].sum())
            if f < MIN_FAILED or f - g * rate < NAMING_SHARE * excess or \
                    g > (1 - NARROWS) * g_rest:
                continue
            if _stands_out(f, g, f_rest - f, g_rest - g) and (
                    best is None or f - g * rate > best[0]):
                best = (f - g * rate, (axis, int(value)), g, f)
    return None if best is None else best[1:]


NAMING_AXES = ("tool",)
"""Axes that say where a group fails and that a name keeps even when they narrow little
(*Where it fails* in :mod:`processor.situations`): the generator aims at the tool."""


def name_where(profiles: Profiles, judged: Sequence[Judged],
               totals: Sequence[tuple[int, int]], names: PeriodNames,
               min_support: int) -> list[Judged]:
    """The judged situations, one without a tool named by the tool that holds its
    failures (see *Where it fails* in :mod:`processor.situations`), judged again."""
    return _replace_until_stable(profiles, judged, totals, names, min_support, _named)


def _named(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
           judged: Sequence[Judged]) -> list[Proposal]:
    """The situation named by the tool that holds its failures (:func:`_where`), to keep
    its status, unless that situation is reported already; else none."""
    coordinate = _where(profiles, item, mask, verdict, judged)
    if coordinate is None:
        return []
    named = Found((*item.coordinates, coordinate), item.excess)
    if any(tuple(sorted(other.coordinates)) == tuple(sorted(named.coordinates))
           for other, _, _, _ in judged):
        return []
    return [Proposal((named,), same_status=True)]


def _where(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
           judged: Sequence[Judged]) -> tuple[int, int] | None:
    """The coordinate of a naming axis (:data:`NAMING_AXES`) holding ``COINCIDE`` of the
    situation's failing members in the periods deciding its status, when the rest of the
    situation fails significantly less (Fisher p < ``ALPHA``, Holm over the values that
    could hold that share); None otherwise."""
    axes = [i for i, axis in enumerate(profiles.axes) if axis in NAMING_AXES]
    used = {axis for axis, _ in item.coordinates}
    if len(item.coordinates) >= 3 or used & set(axes):
        return None
    _, cell = _deciding(profiles, mask, verdict, judged)
    g_cell = int(profiles.n[cell].sum())
    f_cell = int(profiles.n[cell & profiles.failed].sum())
    if f_cell < MIN_FAILED:
        return None
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
            tests.append((above(f, g, f_cell - f, g_cell - g), int(value),
                          f >= COINCIDE * f_cell))
        for step, (p, value, holds) in enumerate(sorted(tests)):
            if p >= ALPHA / (len(tests) - step):
                break  # Holm: this and every larger p stand
            if holds:
                return axis, value
    return None
