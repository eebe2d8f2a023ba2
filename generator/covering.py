"""Pairwise covering arrays: few situations that together show every pair of axis values.

Most failures are two things interacting, so exploration aims at *pairs*: a covering
array holds, for every two axes and every value of each, at least one row with both. No
array can have fewer rows than the two largest axes' sizes multiplied (every pair of their
values needs its own row); ordering the axes largest first lets ``allpairspy``'s greedy
construction reach that bound on typical grids (12x8x7x6x6x5 → 96 rows, where the full
product has 120,960). Its rows come out in greedy order: each covers as many new pairs as
it can, so a prefix covers more than its share of pairs (half of the 96 rows above show
three quarters of the pairs).

A pair is written ``(axis_a, value_a, axis_b, value_b)`` with ``axis_a < axis_b``, as the
failure map writes its cells.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from allpairspy import AllPairs

__all__ = ["CoverageSummary", "Pair", "all_pairs", "coverage", "covered_pairs",
           "pairwise_rows"]

Pair = tuple[str, str, str, str]
"""``(axis_a, value_a, axis_b, value_b)`` with ``axis_a < axis_b``."""


@dataclass(frozen=True)
class CoverageSummary:
    """How many pairs of a grid some rows show."""

    planned: int
    """Pairs in the grid (every two axes, every value of each)."""
    covered: int
    """Those pairs that at least one row shows."""
    fraction: float
    """covered / planned (1.0 for a grid without pairs)."""


def _values(axes: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Each axis's distinct values in a canonical order (independent of the input's)."""
    values = {}
    for axis in sorted(axes):
        distinct = sorted(set(axes[axis]))
        if not distinct:
            raise ValueError(f"axis {axis!r} has no values; drop it or give it one")
        values[axis] = distinct
    return values


def pairwise_rows(axes: Mapping[str, Sequence[str]], *, seed: int) -> list[dict[str, str]]:
    """A pairwise covering array over ``axes`` (axis → values), one dict per row.

    Values are shuffled within each axis by ``seed`` (so two seeds give two arrays that
    pair values differently), axes are ordered largest first (ties by name), and the
    result depends only on the axes' value sets and the seed. Axes with one value are
    fine; with a single axis every value is one row; with none there are no rows.
    """
    values = _values(axes)
    for axis, options in values.items():
        random.Random(f"{seed}:{axis}").shuffle(options)  # noqa: S311 (not security)
    order = sorted(values, key=lambda axis: (-len(values[axis]), axis))
    if not order:
        return []
    if len(order) == 1:
        return [{order[0]: value} for value in values[order[0]]]
    rows = AllPairs([values[axis] for axis in order])
    return [dict(zip(order, row, strict=True)) for row in rows]


def all_pairs(axes: Mapping[str, Sequence[str]]) -> set[Pair]:
    """Every pair of values on two different axes."""
    values = _values(axes)
    pairs: set[Pair] = set()
    for axis_a, axis_b in itertools.combinations(sorted(values), 2):
        pairs.update((axis_a, value_a, axis_b, value_b)
                     for value_a in values[axis_a] for value_b in values[axis_b])
    return pairs


def covered_pairs(rows: Iterable[Mapping[str, str]]) -> set[Pair]:
    """The pairs some row shows."""
    pairs: set[Pair] = set()
    for row in rows:
        items = sorted(row.items())
        pairs.update((axis_a, value_a, axis_b, value_b)
                     for (axis_a, value_a), (axis_b, value_b)
                     in itertools.combinations(items, 2))
    return pairs


def coverage(axes: Mapping[str, Sequence[str]],
             rows: Iterable[Mapping[str, str]]) -> CoverageSummary:
    """How many of the grid's pairs ``rows`` cover (pairs outside the grid do not count)."""
    planned = all_pairs(axes)
    covered = len(planned & covered_pairs(rows))
    return CoverageSummary(len(planned), covered, covered / len(planned) if planned else 1.0)
