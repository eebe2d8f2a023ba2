"""One group named as several situations, one per value of an axis (*Across values* in
:mod:`processor.situations`).

A group read right for part of its members can be found inside two broad cells at once:
unsure users of already-done actions, failing in v1, made two tools' cells fail there, and
each tool's cell was narrowed to its unsure users (*Read-axis cores*). Two situations of one
status, each holding most of its failing members in one cell beside them (not an
ancestor), which neither merely is a part of, are that cell's group: the first of them is
replaced by the cell, and the other, judged inside it, is its fragment (*Supersets*).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from processor._discovery import (
    COINCIDE,
    LATEST,
    PREVIOUS,
    Found,
    Profiles,
    _is_split,
    _prune,
    axis_order,
)
from processor._judging import FLAGGED, Judged, Proposal, replace_until_stable
from processor._verdicts import PeriodNames, Verdict

__all__ = ["merge_across"]


def merge_across(profiles: Profiles, judged: Sequence[Judged],
                 totals: Sequence[tuple[int, int]], names: PeriodNames,
                 min_support: int) -> list[Judged]:
    """The judged situations, those that are one group across the values of an axis
    replaced by the group's cell (see the module docstring), judged again."""
    return replace_until_stable(profiles, judged, totals, names, min_support, _across)


def _across(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
            judged: Sequence[Judged]) -> list[Proposal]:
    """For a situation and another with its status and its coordinates but one, on the same
    axis (``tool=enable_roaming & user_stance=unsure``, ``tool=disable_roaming &
    user_stance=unsure``): their shared coordinates and one of another axis, whose cell
    holds ``COINCIDE`` of the failing members of each, in the period deciding their status,
    with a larger excess than either, neither merely a part of it
    (:func:`processor._discovery._is_split`), named without the coordinates that narrow
    nothing; of several, the one with the largest excess. None when there is none."""
    if verdict.status not in FLAGGED or len(item.coordinates) < 2:
        return []
    period = LATEST if verdict.fails_now else PREVIOUS
    pool = profiles.graded & (profiles.period == period)
    failing = np.where(pool & profiles.failed, profiles.n, 0)
    graded = int(profiles.n[pool].sum())
    rate = int(failing.sum()) / graded if graded else 0.0

    def excess(cell: np.ndarray) -> float:
        return int(failing[cell].sum()) - int(profiles.n[pool & cell].sum()) * rate

    def holds(cell: np.ndarray, members: np.ndarray) -> bool:
        return int(failing[cell & members].sum()) >= COINCIDE * int(failing[members].sum())

    mine = set(item.coordinates)
    best: tuple[float, tuple[tuple[int, int], ...]] | None = None
    for other, other_mask, other_verdict, _ in judged:
        theirs = set(other.coordinates)
        if other_verdict.status != verdict.status or len(theirs) != len(mine) or \
                len(mine - theirs) != 1 or {a for a, _ in mine - theirs} != \
                {a for a, _ in theirs - mine}:
            continue
        shared = mine & theirs
        used = {axis for axis, _ in mine}
        both = mask | other_mask
        floor = max(excess(mask), excess(other_mask))
        for axis in axis_order(profiles):
            if axis in used:
                continue
            column = profiles.codes[:, axis]
            for value in np.unique(column[both & (failing > 0)]):
                coordinates = tuple(sorted(_prune(profiles, (*shared, (axis, int(value))),
                                                  pool)))
                if set(coordinates) <= mine or set(coordinates) <= theirs:
                    continue  # an ancestor: judging already chose against it
                cell = profiles.mask(coordinates)
                gain = excess(cell)
                if gain <= floor or not (holds(cell, mask) and holds(cell, other_mask)) or \
                        _is_split(profiles, cell, mask, pool, rate) or \
                        _is_split(profiles, cell, other_mask, pool, rate):
                    continue
                if best is None or gain > best[0]:
                    best = (gain, coordinates)
    if best is None:
        return []
    return [Proposal((Found(best[1], best[0]),), same_status=True)]
