"""Judging the situations found: supersets without what they hold, siblings, read axes,
overlapping reports; and the loop that replaces a judged situation by narrower ones.

The rules (*Collapse*, *Supersets are judged without what they hold*, *Siblings*, *Read
axes*, *Overlapping reports*, *Misread siblings*) are documented in
:mod:`processor.situations`; this module applies them to the situations discovery kept
(:mod:`processor._discovery`), smallest first. The narrower
situations proposed (*Read-axis cores*, *Where it fails*) are
:mod:`processor._narrowing`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from processor._discovery import (
    ALPHA,
    COINCIDE,
    LATEST,
    PREVIOUS,
    READ_AXES,
    UNMARKED,
    Found,
    Profiles,
    _usual,
    above,
)
from processor._verdicts import PeriodNames, Verdict, decide

__all__ = ["FLAGGED", "READ_AXES", "SIBLING_SHARE", "Judged", "Narrower", "Proposal",
           "absorb_overlaps", "judge_all", "replace_until_stable", "widen"]

SIBLING_SHARE = 0.5
"""Share of a superset's remaining failing members (in the period it fails) a sibling of
the situation inside it must hold to name the remainder, on an axis read from free text
(:data:`READ_AXES`); on an axis taken from the calls, ``COINCIDE``. Also the share of a
changed situation's failing members a tool must hold to name it by the other period
(*Where it fails*)."""


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

    def judge(mask: np.ndarray, before: Sequence[np.ndarray], support: int = min_support,
              ) -> tuple[Verdict | None, list[tuple[int, int]]]:
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
        return decide((g_now, f_now, g_before, f_before), rest, names, support,
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
        # a fragment of one group when its own rest fails the same way: it reports the group.
        # A rest too small to judge (low support) fails the same way when it would have
        # that status with no minimum
        status = verdict.status
        if status == "uncertain" and verdict.low_support:
            loose, _ = judge(mask, [m for _, m, _, _ in judged_in_order], support=0)
            status = loose.status if loose is not None else status
        parts = {i for i, (inner, other, other_verdict, _) in enumerate(judged_in_order)
                 if other_verdict.status == status != "uncertain"
                 and int(profiles.n[other & mask & failing].sum())
                 >= COINCIDE * int(profiles.n[other & failing].sum())
                 and not _apart(profiles, item, mask, inner, other, verdict)}
        if parts:
            remaining = [e for i, e in enumerate(judged_in_order) if i not in parts]
            whole, whole_judged = judge(mask, [m for _, m, _, _ in remaining])
            if whole is not None and whole.status == status:
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


def _apart(profiles: Profiles, item: Found, mask: np.ndarray, inner: Found,
           inner_mask: np.ndarray, verdict: Verdict) -> bool:
    """Whether a situation inside ``item``, narrower only by coordinates taken from the
    calls (none of :data:`READ_AXES`), fails significantly more than the rest of ``item``
    (Fisher p < ``ALPHA``, in the period deciding ``verdict``): a group of its own beside
    whatever makes the rest fail, not a fragment (a value read from the calls is not
    misread, so a fragment of a group on it would fail like its rest)."""
    read = {i for i, axis in enumerate(profiles.axes) if axis in READ_AXES}
    extra = set(inner.coordinates) - set(item.coordinates)
    if not extra or any(axis in read for axis, _ in extra):
        return False
    period = LATEST if verdict.fails_now else PREVIOUS
    g, f = profiles.counts(inner_mask & mask, period)
    rest_g, rest_f = profiles.counts(mask & ~inner_mask, period)
    return above(f, g, rest_f, rest_g) < ALPHA


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
        # a value read from free text holds its group's members read right only; a value
        # taken from the calls holds all of them, so it must hold nearly all the remainder
        read = profiles.axes[axis] in READ_AXES
        holds = f > SIBLING_SHARE * failing if read else f >= COINCIDE * failing
        if read:
            # where misread members land (``ordinary``) holds no group read right: it
            # holds the most of any remainder, whatever fails there
            holds[_usual(profiles, column)] = False
        for value in np.flatnonzero(holds):
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


def replace_until_stable(profiles: Profiles, judged: Sequence[Judged],
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


def _key(item: Found) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(item.coordinates))


def absorb_overlaps(profiles: Profiles, judged: Sequence[Judged],
                    totals: Sequence[tuple[int, int]], names: PeriodNames,
                    min_support: int) -> list[Judged]:
    """The judged situations without those whose own failing members lie in another
    situation of the same status that is neither inside nor around them (*Overlapping
    reports* in :mod:`processor.situations`) and without the ordinary users beside a stance
    group of their status (*Misread siblings*), judged again."""
    current = list(judged)
    failing = profiles.graded & profiles.failed
    while True:
        for item, mask, verdict, _ in current:
            if verdict.status not in FLAGGED:
                continue
            _, own = _deciding(profiles, mask, verdict, current)
            own_failing = own & failing
            mine = int(profiles.n[own_failing].sum())
            if mine == 0:
                continue
            holder = next(
                (other for other, other_mask, other_verdict, _ in current
                 if other_verdict.status == verdict.status and _key(other) != _key(item)
                 and (other_mask & ~mask).any() and (mask & ~other_mask).any()
                 and int(profiles.n[own_failing & other_mask].sum()) >= COINCIDE * mine
                 and int(profiles.n[failing & other_mask & (profiles.period == (
                     LATEST if verdict.fails_now else PREVIOUS))].sum()) > mine),
                None)
            if holder is None and not _misread_sibling(profiles, item, mask, verdict, current):
                continue
            before = {_key(other): v.status for other, _, v, _ in current
                      if _key(other) != _key(item)}
            rejudged = judge_all(profiles, [(other, other_mask) for other, other_mask, _, _
                                            in current if _key(other) != _key(item)],
                                 totals, names, min_support)
            after = {_key(other): v.status for other, _, v, _ in rejudged}
            if after == before:
                current = rejudged
                break
        else:
            return current


def _misread_sibling(profiles: Profiles, item: Found, mask: np.ndarray, verdict: Verdict,
                     judged: Sequence[Judged]) -> bool:
    """Whether a situation named by the stance that marks nothing (``ordinary``) has a
    sibling of its status, the same coordinates with another stance, that fails beyond
    the rate outside their cell by more than it does in every period its status says it
    fails in: where the reader puts the sibling's misread members (*Misread siblings* in
    :mod:`processor.situations`)."""
    if "user_stance" not in profiles.axes:
        return False
    axis = profiles.axes.index("user_stance")

    def cell_of(found: Found) -> tuple[tuple[int, int], ...]:
        return tuple(sorted(c for c in found.coordinates if c[0] != axis))

    value = next((v for a, v in item.coordinates if a == axis), None)
    cell = cell_of(item)
    if value is None or profiles.values[value] != UNMARKED["user_stance"] or not cell:
        return False
    outside = ~profiles.mask(cell)

    def excess(keep: np.ndarray, period: int, rate: float) -> float:
        graded, failed = profiles.counts(keep, period)
        return failed - graded * rate

    for other, other_mask, other_verdict, _ in judged:
        if other_verdict.status != verdict.status or _key(other) == _key(item) or \
                cell_of(other) != cell:
            continue
        beyond = True
        for period in FLAGGED[verdict.status]:
            g_out, f_out = profiles.counts(outside, period)
            rate = f_out / g_out if g_out else 0.0
            beyond &= excess(other_mask, period, rate) > excess(mask, period, rate)
        if beyond:
            return True
    return False
