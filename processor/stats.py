"""Interval and test statistics for the failure map (pure functions).

* :func:`wilson` — the Wilson score interval for a proportion (good at small n and at 0 or 1).
* :func:`newcombe` — Newcombe's hybrid score interval for a difference of two proportions
  (method 10 of Newcombe 1998), built from the two Wilson intervals.
* :func:`fisher_exact` — the two-sided p-value of Fisher's exact test on a 2x2 table
  (the sum of the probabilities of all tables with the same margins that are no more
  likely than the observed one).
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


def wilson(failures: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% (by default) Wilson interval for failures/n; (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = failures / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(f1: int, n1: int, f2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """Interval for p1 - p2 (p1 = f1/n1, p2 = f2/n2); (-1, 1) when either n is 0."""
    if n1 <= 0 or n2 <= 0:
        return -1.0, 1.0
    p1, p2 = f1 / n1, f2 / n2
    l1, u1 = wilson(f1, n1, z)
    l2, u2 = wilson(f2, n2, z)
    difference = p1 - p2
    lower = difference - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = difference + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lower), min(1.0, upper)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the table [[a, b], [c, d]].

    The hypergeometric probabilities of every table with the same margins are built from
    the ratio of successive terms (vectorised), so large tables cost milliseconds.
    """
    row1, row2, col1 = a + b, c + d, a + c
    if row1 + row2 == 0:
        return 1.0
    low, high = max(0, col1 - row2), min(col1, row1)
    if low == high:
        return 1.0
    x = np.arange(low, high, dtype=np.float64)
    steps = (np.log((row1 - x) * (col1 - x))
             - np.log((x + 1) * (row2 - col1 + x + 1)))
    logs = np.concatenate(([0.0], np.cumsum(steps)))
    top = logs.max()
    weights = np.exp(logs - top)
    observed = logs[a - low]
    slack = 1e-7 * max(1.0, abs(observed))  # ties within rounding count, as R and SciPy do
    p = weights[logs <= observed + slack].sum() / weights.sum()
    return float(min(1.0, p))
