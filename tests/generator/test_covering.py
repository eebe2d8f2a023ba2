"""Pairwise covering arrays cover every pair, at the lower bound, deterministically."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.covering import all_pairs, coverage, covered_pairs, pairwise_rows


def _grid(*sizes: int) -> dict[str, list[str]]:
    names = ["tool", "policy_rule", "user_stance", "world_state", "history", "tool_condition"]
    return {names[i]: [f"{names[i][:2]}{j}" for j in range(n)] for i, n in enumerate(sizes)}


@pytest.mark.parametrize("sizes", [
    (12, 8, 7, 6, 6, 5), (8, 12, 6, 7, 5, 6), (4, 3, 2), (7, 3, 3, 2, 2, 2), (9, 9, 1, 1),
    (3, 3), (5, 1, 2, 4),
])
def test_every_pair_covered_at_the_lower_bound(sizes: tuple[int, ...]) -> None:
    grid = _grid(*sizes)
    rows = pairwise_rows(grid, seed=3)
    largest = sorted(sizes, reverse=True)
    assert len(rows) == largest[0] * largest[1]
    assert all(set(row) == set(grid) for row in rows)
    assert covered_pairs(rows) >= all_pairs(grid)
    summary = coverage(grid, rows)
    assert summary.covered == summary.planned == len(all_pairs(grid))
    assert summary.fraction == 1.0


def test_pair_count_and_orientation() -> None:
    grid = {"b": ["x", "y"], "a": ["1", "2", "3"], "c": ["z"]}
    pairs = all_pairs(grid)
    assert len(pairs) == 2 * 3 + 3 * 1 + 2 * 1
    assert all(a < b for a, _, b, _ in pairs)
    assert ("a", "1", "b", "x") in pairs


def test_deterministic_for_a_seed_and_independent_of_input_order() -> None:
    grid = _grid(12, 8, 7, 6, 6, 5)
    rows = pairwise_rows(grid, seed=7)
    assert rows == pairwise_rows(grid, seed=7)
    reordered = {axis: list(reversed(values)) for axis, values in reversed(grid.items())}
    assert rows == pairwise_rows(reordered, seed=7)
    other = pairwise_rows(grid, seed=8)
    assert other != rows and len(other) == len(rows)


def test_deterministic_across_processes() -> None:
    """Python's hash randomisation must not leak into the array."""
    code = ("from generator.covering import pairwise_rows;"
            "print(pairwise_rows({'a': list('abcdef'), 'b': list('xyz'), 'c': list('pq')},"
            " seed=5))")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={"PYTHONHASHSEED": str(s)}).stdout
               for s in (1, 2)}
    assert len(outputs) == 1


def test_small_grids() -> None:
    assert pairwise_rows({}, seed=0) == []
    assert pairwise_rows({"tool": ["a", "b"]}, seed=0) in (
        [{"tool": "a"}, {"tool": "b"}], [{"tool": "b"}, {"tool": "a"}])
    assert pairwise_rows({"a": ["x"], "b": ["y"]}, seed=0) == [{"a": "x", "b": "y"}]
    with pytest.raises(ValueError, match="no values"):
        pairwise_rows({"a": [], "b": ["y"]}, seed=0)


def test_prefixes_cover_more_than_their_share() -> None:
    grid = _grid(12, 8, 7, 6, 6, 5)
    rows = pairwise_rows(grid, seed=1)
    # greedy rows front-load coverage: the first rows show only new pairs (15 each), and
    # half the array shows three quarters of the pairs
    assert coverage(grid, rows[:10]).covered == 10 * 15
    assert coverage(grid, rows[: len(rows) // 2]).fraction > 0.7


def test_coverage_ignores_pairs_outside_the_grid() -> None:
    grid = {"a": ["1"], "b": ["2", "3"]}
    summary = coverage(grid, [{"a": "1", "b": "2", "c": "9"}, {"a": "7", "b": "3"}])
    assert (summary.planned, summary.covered, summary.fraction) == (2, 1, 0.5)


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(min_value=1, max_value=6), min_size=2, max_size=5),
       seed=st.integers(min_value=0, max_value=2**31))
def test_any_grid_is_fully_covered(sizes: list[int], seed: int) -> None:
    grid = {f"axis{i}": [f"v{j}" for j in range(n)] for i, n in enumerate(sizes)}
    rows = pairwise_rows(grid, seed=seed)
    assert coverage(grid, rows).fraction == 1.0
    largest = sorted(sizes, reverse=True)
    assert len(rows) >= largest[0] * largest[1]
    assert len(rows) <= math.prod(sizes)
