"""The statistics of ``tracemill eval``: pass@1, pass@k, pass^k, intervals, verdicts.

Every interval is a percentile bootstrap over *tasks* (never over rows: samples of one task
are not independent). Two agents are compared on the same tasks by paired per-task
differences of pass@1, with a bootstrap interval and a sign-flip permutation p-value;
nothing is called better until the interval excludes zero.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Literal

RESAMPLES = 2000
"""Bootstrap resamples and permutation draws."""

Verdict = Literal["better", "no difference", "worse", "not comparable"]


@dataclass(frozen=True)
class TaskResult:
    """One task's samples."""

    task_id: str
    """The held-out rollout the task was rebuilt from."""
    situation: str
    """Its situation's label."""
    tool: str
    """The tool its ask needs ('' when none)."""
    n: int
    """Samples run."""
    c: int
    """Samples that passed."""


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95% interval and the number of tasks behind it."""

    value: float
    """The point estimate."""
    low: float
    """Lower end of the 95% bootstrap interval (over tasks)."""
    high: float
    """Upper end."""
    n: int
    """Tasks."""

    def render(self) -> str:
        """``0.62 [0.51, 0.73] n=40``."""
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}] n={self.n}"


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: 1 - C(n-c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task (got {n})")
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (all k samples pass): C(c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} samples per task (got {n})")
    return comb(c, k) / comb(n, k)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def bootstrap(per_task: Sequence[float], seed: int = 0) -> Estimate:
    """Mean of per-task values with a 95% percentile bootstrap interval over tasks."""
    n = len(per_task)
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    mean = sum(per_task) / n
    rng = random.Random(seed)  # noqa: S311 (a replayable resample, not a secret)
    means = [sum(per_task[rng.randrange(n)] for _ in range(n)) / n for _ in range(RESAMPLES)]
    return Estimate(mean, _percentile(means, 0.025), _percentile(means, 0.975), n)


def metric(tasks: Sequence[TaskResult], k: int, which: str, seed: int = 0) -> Estimate:
    """pass@1, pass@k or pass^k over tasks, with its interval."""
    score: Callable[[TaskResult], float] = {
        "pass@1": lambda t: t.c / t.n,
        "pass@k": lambda t: pass_at_k(t.n, t.c, k),
        "pass^k": lambda t: pass_hat_k(t.n, t.c, k),
    }[which]
    return bootstrap([score(t) for t in tasks], seed)


@dataclass(frozen=True)
class Comparison:
    """After minus before on the same tasks."""

    difference: Estimate
    """Mean paired difference of pass@1, with its interval."""
    p_value: float | None
    """Two-sided sign-flip permutation p-value (None: not comparable)."""
    verdict: Verdict
    """better, no difference, worse or not comparable."""
    reason: str
    """Why that verdict."""


def compare(before: Sequence[TaskResult], after: Sequence[TaskResult], *,
            stamps: tuple[str, str] = ("", ""), seed: int = 0) -> Comparison:
    """Paired comparison of two agents on the same tasks."""
    nan = Estimate(float("nan"), float("nan"), float("nan"), 0)
    b = {t.task_id: t for t in before}
    a = {t.task_id: t for t in after}
    if set(a) != set(b) or not a:
        return Comparison(nan, None, "not comparable",
                          "the two runs did not answer the same tasks")
    if any(b[i].situation != a[i].situation for i in a):
        return Comparison(nan, None, "not comparable", "the tasks' situations differ")
    if stamps[0] != stamps[1]:
        return Comparison(nan, None, "not comparable",
                          f"graded differently ({stamps[0]} vs {stamps[1]})")
    ids = sorted(a)
    diffs = [a[i].c / a[i].n - b[i].c / b[i].n for i in ids]
    estimate = bootstrap(diffs, seed)
    observed = abs(sum(diffs))
    rng = random.Random(seed + 1)  # noqa: S311 (a replayable permutation)
    extreme = sum(1 for _ in range(RESAMPLES)
                  if abs(sum(d if rng.random() < 0.5 else -d for d in diffs)) >= observed - 1e-12)
    p_value = (extreme + 1) / (RESAMPLES + 1)
    if estimate.low > 0:
        return Comparison(estimate, p_value, "better", "the interval lies above zero")
    if estimate.high < 0:
        return Comparison(estimate, p_value, "worse", "the interval lies below zero")
    return Comparison(estimate, p_value, "no difference", "the interval contains zero")


__all__ = ["RESAMPLES", "Comparison", "Estimate", "TaskResult", "Verdict", "bootstrap",
           "compare", "metric", "pass_at_k", "pass_hat_k"]
