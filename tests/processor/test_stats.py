"""The failure map's statistics against known values and invariants."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from processor.stats import fisher_exact, newcombe, wilson


def test_wilson_known_values() -> None:
    # Newcombe (1998), table I: 81/263 → 0.2553 to 0.3662
    low, high = wilson(81, 263)
    assert math.isclose(low, 0.2553, abs_tol=5e-4) and math.isclose(high, 0.3662, abs_tol=5e-4)
    low, high = wilson(0, 10)
    assert low == 0.0 and math.isclose(high, 0.2775, abs_tol=5e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_newcombe_known_value() -> None:
    # Newcombe (1998), example (a): 56/70 - 48/80 → 0.0524 to 0.3339
    low, high = newcombe(56, 70, 48, 80)
    assert math.isclose(low, 0.0524, abs_tol=5e-4) and math.isclose(high, 0.3339, abs_tol=5e-4)


def test_fisher_known_values() -> None:
    # the lady tasting tea: [[3, 1], [1, 3]] → p = 0.4857
    assert math.isclose(fisher_exact(3, 1, 1, 3), 0.4857, abs_tol=5e-4)
    # [[8, 2], [1, 5]] → p = 0.0350 (two-sided, as R's fisher.test)
    assert math.isclose(fisher_exact(8, 2, 1, 5), 0.0350, abs_tol=5e-4)
    assert fisher_exact(0, 0, 0, 0) == 1.0


@given(st.integers(0, 200), st.integers(0, 200))
def test_wilson_contains_the_estimate(failures: int, extra: int) -> None:
    n = failures + extra
    low, high = wilson(failures, n)
    assert 0.0 <= low <= high <= 1.0
    if n:
        assert low - 1e-12 <= failures / n <= high + 1e-12


@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))
def test_fisher_is_a_probability_and_symmetric(a: int, b: int, c: int, d: int) -> None:
    p = fisher_exact(a, b, c, d)
    assert 0.0 <= p <= 1.0
    assert math.isclose(p, fisher_exact(c, d, a, b), rel_tol=1e-9, abs_tol=1e-12)
