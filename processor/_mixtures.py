"""Splitting a judged situation that is a mixture of two groups on two axes.

The rule (*Mixtures* in :mod:`processor.situations`): a situation whose failing members, in
the period that decides its status, are (nearly) the disjoint union of two narrower cells
on two different axes is two situations, when each of the two, judged with the others,
fails in that period (their statuses may differ); one of the two axes is read from the
person, the other from the calls (:data:`PERSON_AXES`). Disjoint is a test of *local
independence*, as in latent class analysis: within one group, which value of one axis a
member has says nothing about the value of another, so the two cells' failing members
overlap about as much as their shares predict; far fewer in both (Fisher p <
``REFINE_ALPHA``) says the cell holds two populations, unless the two values exclude each
other everywhere (outside the cell they must go together at least ``1 / RATIO`` as often as
independence predicts in every cell one coordinate wider than it, outside it). The value
of a read axis that marks nothing (``ordinary``, ``UNMARKED``) is never one of the two: it
holds about half of any group's failing members, the misread ones with them, and names no
group of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from processor._discovery import (
    ALPHA,
    COINCIDE,
    LATEST,
    MIN_FAILED,
    NAMING_SHARE,
    PREVIOUS,
    RATIO,
    REFINE_ALPHA,
    UNMARKED,
    Found,
    Profiles,
    axis_order,
)
from processor._judging import READ_AXES, Judged, judge_all
from processor._narrowing import LEAK, _count
from processor._verdicts import PeriodNames, Verdict
from processor.stats import fisher_exact

__all__ = ["PERSON_AXES", "split_mixtures"]

PERSON_AXES = ("user_stance", "history")
"""Axes read from the person (what they said, what happened to them before); the others
are read from the calls and their answers. Local independence is only expected between
two axes measured apart: the axes of one call are tied by construction (a tool answers
"already" in its own way, so ``tool`` and ``tool_condition`` exclude each other inside
``world_state=already_acted_on`` without holding two groups), so the two coordinates of a
mixture are one of each kind."""


def _key(item: Found) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(item.coordinates))


def split_mixtures(profiles: Profiles, judged: Sequence[Judged],
                   totals: Sequence[tuple[int, int]], names: PeriodNames,
                   min_support: int) -> list[Judged]:
    """The judged situations, each mixture of two groups replaced by the two (see the
    module docstring), judged again with the others."""
    current = list(judged)
    tried: set[tuple[tuple[int, int], ...]] = set()
    while True:
        for item, mask, verdict, _ in current:
            if _key(item) in tried or len(item.coordinates) >= 3:
                continue
            tried.add(_key(item))
            parts = _parts(profiles, item, mask, verdict)
            if parts is None:
                continue
            present = {_key(other) for other, _, _, _ in current}
            kept = [(other, other_mask) for other, other_mask, _, _ in current
                    if _key(other) != _key(item)]
            kept += [(part, profiles.mask(part.coordinates)) for part in parts
                     if _key(part) not in present]
            rejudged = judge_all(profiles, kept, totals, names, min_support)
            verdicts = {_key(other): v for other, _, v, _ in rejudged}
            if all(_fails_alike(verdicts.get(_key(part)), verdict) for part in parts):
                current = rejudged
                break
        else:
            return current


def _fails_alike(part: Verdict | None, whole: Verdict) -> bool:
    """Whether a part, judged on its own, fails in the period that decided the whole (new or
    persistent when the whole fails now, fixed when it failed before); the two parts of one
    mixture may differ in status (a new tool group beside a persistent stance group)."""
    return part is not None and part.status != "uncertain" and part.fails_now == whole.fails_now


def _parts(profiles: Profiles, item: Found, mask: np.ndarray,
           verdict: Verdict) -> tuple[Found, Found] | None:
    """The two cells, one coordinate narrower on two different axes, whose failing members
    make up the situation's as two groups, or None."""
    period = LATEST if verdict.fails_now else PREVIOUS
    graded = profiles.graded & (profiles.period == period)
    cell, out = graded & mask, graded & ~mask
    failing = cell & profiles.failed

    def size(keep: np.ndarray) -> int:
        return int(profiles.n[keep].sum())

    g_out = size(out)
    rate = size(out & profiles.failed) / g_out if g_out else 0.0
    total = size(failing)
    excess = total - size(cell) * rate
    if excess <= 0:
        return None
    used = {axis for axis, _ in item.coordinates}
    person = [axis in PERSON_AXES for axis in profiles.axes]
    # next to the cell: the cells one coordinate wider, without it (the rest of the period
    # for a single coordinate)
    neighbours = [out & profiles.mask([c for c in item.coordinates if c != coordinate])
                  for coordinate in item.coordinates]
    candidates: list[tuple[int, int, np.ndarray]] = []
    for axis in axis_order(profiles):
        if axis in used:
            continue
        column = profiles.codes[:, axis]
        # where misread members land (``ordinary``) marks no group: it holds about half of
        # any group's failing members, so a chance lean of a call value towards the other
        # half makes the two look disjoint (one tool group split by policy rule and stance)
        unmarked = UNMARKED.get(profiles.axes[axis])
        for value in np.unique(column[cell]):
            if profiles.values[value] == unmarked:
                continue
            child = column == value
            f, g = size(failing & child), size(cell & child)
            if f >= MIN_FAILED and f - g * rate >= NAMING_SHARE * excess:
                candidates.append((axis, int(value), child))
    best: tuple[int, tuple[Found, Found]] | None = None
    for i, (axis_a, value_a, child_a) in enumerate(candidates):
        for axis_b, value_b, child_b in candidates[i + 1:]:
            if person[axis_a] == person[axis_b]:
                continue  # the same axis, or two axes measured together
            f_a, f_b = size(failing & child_a), size(failing & child_b)
            f_ab = size(failing & child_a & child_b)
            union = f_a + f_b - f_ab
            if f_ab * total >= f_a * f_b or (union < COINCIDE * total and not _misread_rest(
                    profiles, cell, rate, (axis_a, child_a), (axis_b, child_b))):
                continue
            if fisher_exact(f_ab, f_a - f_ab, f_b - f_ab, total - union) >= REFINE_ALPHA:
                continue
            # the two values go together next to the cell: not exclusive by construction
            if any(_excluded(size(near), size(near & child_a), size(near & child_b),
                             size(near & child_a & child_b)) for near in neighbours):
                continue
            pair = (Found((*item.coordinates, (axis_a, value_a)), float(f_a)),
                    Found((*item.coordinates, (axis_b, value_b)), float(f_b)))
            apart = union - f_ab  # failing members in exactly one of the two cells
            if best is None or apart > best[0]:
                best = (apart, pair)
    return None if best is None else best[1]


def _misread_rest(profiles: Profiles, cell: np.ndarray, rate: float,
                  *parts: tuple[int, np.ndarray]) -> bool:
    """Whether what the cell (its graded members in the deciding period) fails outside the
    two parts, beyond ``rate``, is no more than ``LEAK`` times the excess of the part on a
    read axis: that group's misread members (a stance group read right for 60% of its
    members leaves 40% of its failures in the rest, and the two parts then hold less than
    ``COINCIDE`` of the cell's)."""
    def excess(keep: np.ndarray) -> float:
        graded, failed = _count(profiles, keep)
        return failed - graded * rate

    rest = cell.copy()
    for _, child in parts:
        rest &= ~child
    left = excess(rest)
    return any(profiles.axes[axis] in READ_AXES and left <= LEAK * excess(cell & child)
               for axis, child in parts)


def _excluded(n: int, a: int, b: int, both: int) -> bool:
    """Whether two values (``a`` and ``b`` of ``n`` conversations, ``both`` with the two)
    go together less than ``1 / RATIO`` as often as independence predicts, significantly
    (Fisher p < ``ALPHA``): a chance shortfall (4 where 8.5 are expected) is no sign that
    they exclude each other by construction."""
    if both * n * RATIO >= a * b:
        return False
    return fisher_exact(both, a - both, b - both, n - a - b + both) < ALPHA
