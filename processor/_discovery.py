"""Discovery of situations: profiles of conversations and the sequential covering over them.

The rules are documented in :mod:`processor.situations` (rules 1-4, with the naming
constants ``NARROWS`` and ``AXIS_ORDER``); this module holds the counting (profiles:
conversations grouped by period, outcome and coordinates, as numpy arrays) and the search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb
import numpy as np

from processor._misreading import Misreads
from processor.stats import fisher_exact
from tracemill.store import load_sql

ALPHA = 0.05
"""Significance of a test (discovery divides it by the number of candidates)."""
REFINE_ALPHA = 0.001
"""Significance needed to narrow a situation by one more coordinate."""
RATIO = 1.5
"""How many times the rate of the rest a narrower cell must fail to be told apart."""
MIN_FAILED = 3
"""Failures a candidate needs before it is tested."""
NAMING_SHARE = 0.25
"""Share of the excess a narrower cell must keep to name the situation (rule 3)."""
COINCIDE = 0.8
"""Two situations whose failing members overlap this much (of the larger) are one."""
SHORTLIST = 200
"""Candidates tested exactly per round, by excess."""
MAX_ROUNDS = 40
"""Rounds of discovery per period, at most."""
NARROWS = 0.2
"""Share of a cell's graded conversations a coordinate must leave out to be added to its
name (rule 3): one kept by nearly every member (``history=fresh``,
``tool_condition=success``) narrows nothing a user could act on."""
AXIS_ORDER = ("world_state", "tool", "user_stance", "policy_rule", "tool_condition",
              "history")
"""The canonical order of the axes: where two coordinates hold the same conversations
(``world_state=missing`` and ``tool_condition=not_found``) or tie, the earlier axis names
the situation: what the world was, then where, then who, then how the tool answered."""
READ_AXES = ("user_stance",)
"""Axes whose value is *read* from free text by a classifier that is often wrong (the
stance of the first ask), unlike the axes taken from the calls and their results: a
group defined on such an axis shows as a core (the members read right) inside a parent
cell whose rest (the members read otherwise) fails the same way, so several values of it
holding the excess may be one group."""
UNMARKED = {"user_stance": "ordinary"}
"""The value of each read axis when the reader reads no mark in the text: where the
members of every group it misreads land, holding about half of any group."""
UNSTATED = {"world_state": "unknown"}
"""Values that state nothing on their axis: the world state of a call whose answer tells
nothing of the record (permission denied, a timeout). The tool condition says why, and
names such conversations instead (:func:`say_why`): a name by such a value would aim
generation at nothing (no world to mutate, no fault to plant)."""
LATEST, PREVIOUS = 0, 1
"""Period codes of the profiles."""


# --------------------------------------------------------------------------- profiles


@dataclass(frozen=True)
class Profiles:
    """Conversations grouped by period, outcome and coordinates (profiles.sql)."""

    axes: tuple[str, ...]
    """The axes, by name (column order of ``codes``)."""
    values: tuple[str, ...]
    """Every value of any axis (``codes`` index into it)."""
    codes: np.ndarray
    """[profile, axis] → index into ``values``."""
    period: np.ndarray
    """LATEST, PREVIOUS or -1 (neither compared period)."""
    graded: np.ndarray
    """Whether the profile's conversations are graded."""
    failed: np.ndarray
    """Whether they failed (False when ungraded)."""
    n: np.ndarray
    """Conversations per profile."""
    misreads: Misreads = field(default_factory=dict)
    """How the stance reader misreads (:data:`processor._misreading.Misreads`; empty when
    the stored stances were not read by the reader it was measured for)."""

    def mask(self, coordinates: Sequence[tuple[int, int]]) -> np.ndarray:
        """Profiles matching every (axis index, value index)."""
        keep = np.ones(len(self.n), dtype=bool)
        for axis, value in coordinates:
            keep &= self.codes[:, axis] == value
        return keep

    def named(self, coordinates: Sequence[tuple[int, int]]) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((self.axes[a], self.values[v]) for a, v in coordinates))

    def counts(self, mask: np.ndarray, period: int) -> tuple[int, int]:
        """(graded, failed) of the masked profiles in a period."""
        graded = mask & self.graded & (self.period == period)
        return int(self.n[graded].sum()), int(self.n[graded & self.failed].sum())


def load_profiles(cursor: duckdb.DuckDBPyConnection,
                  misreads: Misreads | None = None) -> Profiles:
    table = cursor.sql(load_sql("processor", "profile_coordinates.sql")).to_arrow_table()
    axes = tuple(sorted(set(table.column("axis").to_pylist())))
    width = len(axes)
    if table.num_rows == 0 or not width:
        empty = np.zeros(0, dtype=np.int64)
        return Profiles(axes, (), np.zeros((0, width), dtype=np.int64), empty,
                         empty.astype(bool), empty.astype(bool), empty, misreads or {})
    encoded = table.column("value").combine_chunks().dictionary_encode()
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False),
                       dtype=np.int64).reshape(-1, width)
    first = slice(None, None, width)
    period_text = table.column("period").to_pylist()[first]
    period = np.array([LATEST if p == "latest" else PREVIOUS if p == "previous" else -1
                       for p in period_text], dtype=np.int64)
    failed_raw = table.column("failed").to_pylist()[first]
    graded = np.array([f is not None for f in failed_raw], dtype=bool)
    failed = np.array([bool(f) for f in failed_raw], dtype=bool)
    n = np.asarray(table.column("n").to_numpy(), dtype=np.int64)[first]
    return Profiles(axes, tuple(str(v) for v in encoded.dictionary.to_pylist()), codes,
                     period, graded, failed, n, misreads or {})


@dataclass(frozen=True)
class Combo:
    """The cells of one combination of axes (one or two), and each profile's cell."""

    axes: tuple[int, ...]
    keys: np.ndarray
    cell_of: np.ndarray


def axis_order(profiles: Profiles) -> list[int]:
    """Axis indexes in the canonical order (:data:`AXIS_ORDER`; unknown axes last)."""
    rank = {axis: i for i, axis in enumerate(AXIS_ORDER)}
    return sorted(range(len(profiles.axes)),
                  key=lambda a: (rank.get(profiles.axes[a], len(rank)), profiles.axes[a]))


def combos_of(profiles: Profiles) -> list[Combo]:
    """Every single axis and pair of axes, in the canonical order (ties go to the first)."""
    order = axis_order(profiles)
    base = max(1, len(profiles.values))
    combos = []
    for axes in [(a,) for a in order] + [
            (a, b) for i, a in enumerate(order) for b in order[i + 1:]]:
        key = profiles.codes[:, axes[0]].copy()
        for axis in axes[1:]:
            key = key * base + profiles.codes[:, axis]
        keys, cell_of = np.unique(key, return_inverse=True)
        combos.append(Combo(axes, keys, cell_of.reshape(-1)))
    return combos


def decode(combo: Combo, key: int, base: int) -> tuple[tuple[int, int], ...]:
    values = []
    for _ in combo.axes:
        values.append(key % base)
        key //= base
    return tuple(zip(combo.axes, reversed(values), strict=True))


# --------------------------------------------------------------------------- discovery


@dataclass(frozen=True)
class Found:
    coordinates: tuple[tuple[int, int], ...]
    excess: float


def above(failed: int, graded: int, rest_failed: int, rest_graded: int) -> float:
    """Fisher p that failed/graded lies above the rest (1.0 when it does not)."""
    if graded <= 0 or rest_graded <= 0 or failed * rest_graded <= rest_failed * graded:
        return 1.0
    return fisher_exact(failed, graded - failed, rest_failed, rest_graded - rest_failed)


def _stands_out(failed: int, graded: int, rest_failed: int, rest_graded: int) -> bool:
    """Whether failed/graded fails clearly more than the rest: at least ``RATIO`` times its
    rate, and significantly (p < ``REFINE_ALPHA``). The ratio keeps a large store, where
    small differences are significant, from cutting one group into pieces."""
    if graded <= 0 or rest_graded <= 0:
        return False
    if failed * rest_graded < RATIO * rest_failed * graded:
        return False
    return above(failed, graded, rest_failed, rest_graded) < REFINE_ALPHA


def _refine(profiles: Profiles, coordinates: tuple[tuple[int, int], ...], pool: np.ndarray,
            rate: float) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """The most specific coordinates naming the group (rule 3 of the module docstring), and
    the coordinates whose members the round sets aside: the cell narrowed only where the
    narrowing split off another failing group, not where it merely named this one."""
    aside = coordinates
    while len(coordinates) < 3:
        inside = pool & profiles.mask(coordinates)
        weight = np.where(inside, profiles.n, 0)
        fails = np.where(inside & profiles.failed, profiles.n, 0)
        graded, failed = int(weight.sum()), int(fails.sum())
        excess = failed - graded * rate
        used = {axis for axis, _ in coordinates}
        best: tuple[float, tuple[int, int], bool] | None = None
        for axis in axis_order(profiles):
            if axis in used:
                continue
            column = profiles.codes[:, axis]
            g = np.bincount(column, weights=weight, minlength=len(profiles.values))
            f = np.bincount(column, weights=fails, minlength=len(profiles.values))
            values = np.flatnonzero(g)
            # the cell is mixed on this axis when the rest of the cell stands out from one
            # of its values (a part it merely holds)
            mixed = any(int(g[v]) < graded and _stands_out(
                failed - int(f[v]), graded - int(g[v]), int(f[v]), int(g[v])) for v in values)
            candidates = [int(v) for v in values
                          if f[v] - g[v] * rate >= NAMING_SHARE * excess
                          and g[v] <= (1 - NARROWS) * graded and f[v] * graded > failed * g[v]]
            # the part of the cell no candidate holds: when several values of the axis each
            # keep a share of the excess, a child is told apart from it, not from a rest
            # holding the other groups (two groups in one cell, each a value of the axis).
            # Not on a read axis, where several values may be one group read differently
            several = len(candidates) > 1 and profiles.axes[axis] not in READ_AXES
            other_g = graded - int(sum(g[v] for v in candidates))
            other_f = failed - int(sum(f[v] for v in candidates))
            for value in candidates:
                child_g, child_f = int(g[value]), int(f[value])
                if not mixed and not _stands_out(child_f, child_g, failed - child_f,
                                                 graded - child_g) and not (
                        several and _stands_out(child_f, child_g, other_f, other_g)):
                    continue
                # the child that stands out most from the rest of the cell, not the largest
                within = child_f - child_g * failed / graded
                if best is None or within > best[0]:
                    best = (within, (axis, int(value)), child_f >= COINCIDE * failed)
        if best is None:
            break
        coordinates = (*coordinates, best[1])
        if not best[2]:
            aside = coordinates  # split off: the rest of the cell stays in the pool
    return coordinates, aside


def _prune(profiles: Profiles, coordinates: tuple[tuple[int, int], ...],
           pool: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The name without the coordinates that narrow nothing: one that leaves out less than
    ``NARROWS`` of the cell the other coordinates make is dropped (the last in the canonical
    order first), whether the round picked it or the naming added it."""
    order = {axis: i for i, axis in enumerate(axis_order(profiles))}
    changed = True
    while changed and len(coordinates) > 1:
        changed = False
        for coordinate in sorted(coordinates, key=lambda c: -order[c[0]]):
            others = tuple(c for c in coordinates if c != coordinate)
            if narrows_nothing(profiles, coordinates, others, pool):
                coordinates, changed = others, True
                break
    return coordinates


def narrows_nothing(profiles: Profiles, coordinates: Sequence[tuple[int, int]],
                    others: Sequence[tuple[int, int]], pool: np.ndarray) -> bool:
    """Whether the cell of ``coordinates`` keeps more than ``1 - NARROWS`` of the cell of
    ``others`` (a subset of them), conversations of ``pool`` counted (rule 3)."""
    weight = np.where(pool, profiles.n, 0)
    return int(weight[profiles.mask(coordinates)].sum()) > (
        1 - NARROWS) * int(weight[profiles.mask(others)].sum())


def _usual(profiles: Profiles, column: np.ndarray) -> int:
    """The value most conversations are read as on an axis: where misread members land,
    the rest of a cell, never a group read right (``history=fresh``: it says nothing of a
    group)."""
    return int(np.argmax(np.bincount(column, weights=profiles.n,
                                     minlength=len(profiles.values))))


def _unstated(profiles: Profiles, coordinate: tuple[int, int]) -> bool:
    axis, value = coordinate
    return UNSTATED.get(profiles.axes[axis]) == profiles.values[value]


def canonical(profiles: Profiles, coordinates: tuple[tuple[int, int], ...],
              ) -> tuple[tuple[int, int], ...]:
    """The name of the same conversations by the axes first in :data:`AXIS_ORDER`: a
    coordinate that narrows the cell of the others is swapped for the value of an earlier
    axis taken from the calls (not in the name) whose cell, with the others, holds exactly
    the same conversations, until none is (``world_state=missing`` for
    ``tool_condition=not_found``; ``tool=send_payment_request`` for
    ``tool_condition=error`` inside ``world_state=already_acted_on``, where that tool's
    calls, and only they, err). Never for a value that states nothing (:data:`UNSTATED`):
    ``tool_condition=permission_denied`` stays, though ``world_state=unknown`` holds the
    same conversations (:func:`say_why` swaps the other way). A name of fewer than three
    coordinates, without a tool, whose conversations all have one tool then names that
    tool too: it says where they fail, the same conversations (``world_state=already_acted_on``
    where every member cancels an order)."""
    order = {axis: i for i, axis in enumerate(axis_order(profiles))}
    cell = profiles.mask(coordinates)
    swapped = True
    while swapped:
        swapped = False
        used = {axis for axis, _ in coordinates}
        for coordinate in sorted(coordinates, key=lambda c: -order[c[0]]):
            others = tuple(c for c in coordinates if c != coordinate)
            if np.array_equal(profiles.mask(others), cell):
                continue  # it narrows nothing: any value would do (``entity_exists``)
            for axis in axis_order(profiles)[:order[coordinate[0]]]:
                values = np.unique(profiles.codes[cell, axis])
                if axis in used or profiles.axes[axis] in READ_AXES or len(values) != 1:
                    continue
                named = (*others, (axis, int(values[0])))
                if not _unstated(profiles, named[-1]) and np.array_equal(
                        profiles.mask(named), cell):
                    coordinates, swapped = named, True
                    break
            if swapped:
                break
    tool = profiles.axes.index("tool") if "tool" in profiles.axes else None
    if tool is not None and len(coordinates) < 3 and all(a != tool for a, _ in coordinates):
        tools = np.unique(profiles.codes[cell, tool])
        if len(tools) == 1:  # every conversation of the name has this tool
            coordinates = (*coordinates, (tool, int(tools[0])))
    return coordinates


def say_why(profiles: Profiles, coordinates: tuple[tuple[int, int], ...], pool: np.ndarray,
             rate: float) -> tuple[tuple[int, int], ...]:
    """The name with each coordinate that states nothing (:data:`UNSTATED`) swapped for the
    value of another axis taken from the calls, not its most common one, whose cell, with
    the other coordinates, holds at least ``COINCIDE`` of the named cell's failures in
    ``pool``, the one of largest excess (``tool_condition=permission_denied`` for
    ``world_state=unknown``, which also holds the few timeouts of the tool). When no such
    value holds them, it is left out if it narrows nothing (keeps more than ``1 - NARROWS``
    of the other coordinates' cell, as in rule 3: ``world_state=unknown`` beside
    ``tool_condition=permission_denied``), else kept."""
    for coordinate in [c for c in coordinates if _unstated(profiles, c)]:
        others = tuple(c for c in coordinates if c != coordinate)
        weight = np.where(pool & profiles.mask(others), profiles.n, 0)
        fails = np.where(profiles.failed, weight, 0)
        cell = profiles.mask(coordinates)
        failing = int(fails[cell].sum())
        best: tuple[float, tuple[int, int]] = (-np.inf, coordinate)
        used = {axis for axis, _ in coordinates}
        for axis in axis_order(profiles):
            if axis in used or profiles.axes[axis] in READ_AXES:
                continue
            column = profiles.codes[:, axis]
            g = np.bincount(column, weights=weight, minlength=len(profiles.values))
            f = np.bincount(column, weights=np.where(cell, fails, 0),
                            minlength=len(profiles.values))
            f_all = np.bincount(column, weights=fails, minlength=len(profiles.values))
            usual = _usual(profiles, column)
            for value in np.flatnonzero(f >= COINCIDE * failing):
                if f[value] == 0 or value == usual or _unstated(profiles, (axis, int(value))):
                    continue  # the usual value (history=fresh) says no more why
                excess = float(f_all[value] - g[value] * rate)
                if excess > best[0]:
                    best = (excess, (axis, int(value)))
        if best[1] == coordinate and others and narrows_nothing(profiles, coordinates,
                                                                 others, pool):
            coordinates = others  # no value says why, and it narrows nothing (rule 3)
        else:
            coordinates = tuple(best[1] if c == coordinate else c for c in coordinates)
    return coordinates


def _is_split(profiles: Profiles, outer: np.ndarray, inner: np.ndarray, pool: np.ndarray,
              rate: float) -> bool:
    """Whether ``inner`` (within ``outer``) is a failing group that ``outer`` merely holds:
    it keeps at least ``NAMING_SHARE`` of outer's excess and the rest of outer fails
    significantly less (rule 3)."""
    def counts(mask: np.ndarray) -> tuple[int, int]:
        graded = pool & mask
        return int(profiles.n[graded].sum()), int(profiles.n[graded & profiles.failed].sum())

    g_out, f_out = counts(outer)
    g_in, f_in = counts(outer & inner)
    if g_in == g_out or f_in - g_in * rate < NAMING_SHARE * (f_out - g_out * rate):
        return False
    return above(f_in, g_in, f_out - f_in, g_out - g_in) < REFINE_ALPHA


def _lateral(profiles: Profiles, combos: Sequence[Combo],
             coordinates: tuple[tuple[int, int], ...], pool: np.ndarray, rate: float,
             excess: np.ndarray) -> tuple[tuple[int, int], ...] | None:
    """A better name for the group just found, when the cell first picked held several
    groups and the narrowing reached only a fragment of one: another single or pair, not
    an ancestor, that holds at least ``COINCIDE`` of the group's failures with a larger
    excess, and of which the group is not merely a part (:func:`_is_split`)."""
    mine = profiles.mask(coordinates)
    fails = np.where(pool & mine & profiles.failed, profiles.n, 0)
    failing = int(fails.sum())
    graded = int(profiles.n[pool & mine].sum())
    own = failing - graded * rate
    common = np.concatenate([np.bincount(c.cell_of, weights=fails, minlength=len(c.keys))
                             for c in combos])
    owner = np.concatenate([np.full(len(c.keys), i) for i, c in enumerate(combos)])
    keys = np.concatenate([c.keys for c in combos])
    base = max(1, len(profiles.values))
    held = set(coordinates)
    for index in np.flatnonzero((common >= COINCIDE * failing) & (excess > own))[
            np.argsort(-excess[(common >= COINCIDE * failing) & (excess > own)],
                       kind="stable")]:
        other = decode(combos[int(owner[index])], int(keys[index]), base)
        if set(other) <= held:
            continue  # an ancestor: the narrowing already chose against it
        if _is_split(profiles, profiles.mask(other), mine, pool, rate):
            continue
        return other
    return None


def discover(profiles: Profiles, combos: Sequence[Combo], period: int) -> list[Found]:
    """Sequential covering over one period (rules 1-4 of the module docstring)."""
    pool = profiles.graded & (profiles.period == period)
    base = max(1, len(profiles.values))
    found: list[Found] = []
    for _ in range(MAX_ROUNDS):
        weight = np.where(pool, profiles.n, 0)
        fails = np.where(pool & profiles.failed, profiles.n, 0)
        total_g, total_f = int(weight.sum()), int(fails.sum())
        if total_f < MIN_FAILED or total_f == total_g:
            break
        rate = total_f / total_g
        graded = np.concatenate([np.bincount(c.cell_of, weights=weight, minlength=len(c.keys))
                                 for c in combos])
        failed = np.concatenate([np.bincount(c.cell_of, weights=fails, minlength=len(c.keys))
                                 for c in combos])
        owner = np.concatenate([np.full(len(c.keys), i) for i, c in enumerate(combos)])
        keys = np.concatenate([c.keys for c in combos])
        excess = failed - graded * rate
        tested = int((graded >= MIN_FAILED).sum())
        eligible = np.flatnonzero((failed >= MIN_FAILED) & (excess > 0) & (graded < total_g))
        order = eligible[np.argsort(-excess[eligible], kind="stable")][:SHORTLIST]
        pick = None
        for index in order:
            g, f = int(graded[index]), int(failed[index])
            if above(f, g, total_f - f, total_g - g) < ALPHA / max(1, tested):
                pick = index
                break
        if pick is None:
            break
        coordinates = decode(combos[int(owner[pick])], int(keys[pick]), base)
        coordinates, aside = _refine(profiles, coordinates, pool, rate)
        lateral = _lateral(profiles, combos, coordinates, pool, rate, excess)
        if lateral is not None:
            coordinates, aside = _refine(profiles, lateral, pool, rate)
        named = _prune(profiles, coordinates, pool)
        # a coordinate left out of the name narrows nothing: the set-aside cell widens by
        # it too; but a cell without coordinates is every conversation, so when the name
        # left out all of them, the named cell is set aside
        aside = tuple(c for c in aside if c in named or c not in coordinates) or named
        coordinates = named
        final = pool & profiles.mask(coordinates)
        found.append(Found(coordinates, float(
            profiles.n[final & profiles.failed].sum() - profiles.n[final].sum() * rate)))
        pool = pool & ~profiles.mask(aside)
    return found
