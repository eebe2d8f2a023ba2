"""Held-out sets: ``tracemill split``.

Rollouts are split by *situation* (the cell they aimed at, or the axes they explored, with
their world signature: mutation kind, world state, faults; see the ``rollout_situations``
view in migration 005), never by prompt text, so paraphrases of one situation always land
on one side. The draw is seeded: situations are taken in the order of ``md5(seed | key)``;
the first situation showing a (fault, behaviour) signature the held-out side does not yet
show goes to held-out (until the asked share is reached), then the rest fill it up in the
same order. Each situation's side is stored (table ``splits``); a later split keeps every
stored side and only places new situations, so a new rollout of a known situation joins
its side.

:func:`power_needed` is the number of held-out tasks a two-sided two-proportion test needs
to detect a 5-point change at 80% power at the observed pass rate.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import asdict, dataclass
from statistics import NormalDist

import duckdb

from generator.errors import GeneratorError
from tracemill.store import load_sql

DETECT_POINTS = 0.05
"""The change in pass rate the held-out set should be able to detect."""
POWER = 0.8
"""At this power."""
ALPHA = 0.05
"""Two-sided significance level."""


class SplitError(GeneratorError):
    """A split cannot be made or used (no rollouts, no stored split, a bad share)."""


@dataclass(frozen=True)
class SplitOptions:
    """How to draw the held-out side."""

    held_out: float = 0.2
    """Share of situations on the held-out side."""
    seed: int = 0
    """Seed of the draw."""
    reset: bool = False
    """Forget the stored split and draw again."""


@dataclass(frozen=True)
class SplitReport:
    """What ``tracemill split`` did and what the held-out set can measure."""

    situations: int
    """Situations in the store."""
    held_out: int
    """Situations on the held-out side."""
    train: int
    """Situations on the training side."""
    newly_placed: int
    """Situations placed by this call (the others kept their stored side)."""
    kept: int
    """Situations whose stored side was kept."""
    signatures: int
    """Distinct (fault, behaviour) signatures."""
    signatures_held_out: int
    """Of them, shown by at least one held-out situation."""
    seed: int
    """The seed of the stored split (the first split's, when kept)."""
    held_out_share: float
    """The share asked for when the stored split was drawn."""
    pass_rate: float | None
    """Observed pass rate of graded rollouts whose mutation did not fail to fire."""
    held_out_tasks: int
    """Graded held-out rollouts (an evaluation replays each as one task)."""
    tasks_needed: int | None
    """Held-out tasks needed to detect a 5-point change at 80% power."""
    warnings: tuple[str, ...]
    """Loud notes: too few tasks, signatures left out of held-out, a kept seed."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON-able form."""
        return asdict(self)


def power_needed(pass_rate: float, change: float = DETECT_POINTS, power: float = POWER,
                 alpha: float = ALPHA) -> int:
    """Tasks per arm for a two-sided two-proportion z-test to detect ``change`` at ``power``
    from ``pass_rate`` (the change is taken toward 0.5 when the rate is near a bound)."""
    p1 = min(max(pass_rate, 0.0), 1.0)
    p2 = p1 + change if p1 + change <= 1.0 else p1 - change
    p_bar = (p1 + p2) / 2
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    z_beta = NormalDist().inv_cdf(power)
    root = (z_alpha * math.sqrt(2 * p_bar * (1 - p_bar))
            + z_beta * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2)))
    return math.ceil(root * root / (change * change))


def _order(seed: int, key: str) -> str:
    return hashlib.md5(f"{seed}|{key}".encode(), usedforsecurity=False).hexdigest()


def require_split_table(cursor: duckdb.DuckDBPyConnection) -> None:
    """Refuse (naming the fix) when the store has never been split."""
    (found,) = cursor.execute(load_sql("generator", "split_exists.sql")).fetchone() or (0,)
    if not found:
        raise SplitError("no stored split: run `tracemill split` first (it decides which "
                         "situations are held out)")


def split_store(cursor: duckdb.DuckDBPyConnection, options: SplitOptions) -> SplitReport:
    """Place every situation not yet placed (all of them with ``reset``) and store it."""
    if not 0.0 < options.held_out < 1.0:
        raise SplitError(f"--held-out must be a share between 0 and 1, e.g. 0.2 "
                         f"(got {options.held_out})")
    situations = cursor.execute(load_sql("generator", "split_situations.sql")).fetchall()
    if not situations:
        raise SplitError("no rollouts to split: run `tracemill generate --agent offline` "
                         "first")
    warnings: list[str] = []
    cursor.execute("BEGIN TRANSACTION")
    try:
        if options.reset:
            cursor.execute(load_sql("generator", "split_reset.sql"))
        stored = {row[0]: row for row in
                  cursor.execute(load_sql("generator", "split_stored.sql")).fetchall()}
        seed, share = options.seed, options.held_out
        if stored:
            first = next(iter(stored.values()))
            seed, share = int(first[4]), float(first[5])
            if (seed, share) != (options.seed, options.held_out):
                warnings.append(f"the stored split (seed {seed}, held-out {share:g}) is kept "
                                "so that no situation changes side; --reset draws a new one")
        signatures = {row[0]: tuple(row[3] or ()) for row in situations}
        covered = {sig for key, row in stored.items() if row[2] == "held_out"
                   for sig in signatures.get(key, ())}
        held = sum(1 for row in stored.values() if row[2] == "held_out")
        new = sorted((row for row in situations if row[0] not in stored),
                     key=lambda row: _order(seed, row[0]))
        need = max(0, round(share * len(situations)) - held)
        if need == 0 and held == 0 and len(situations) > 1:
            need = 1
        placed: dict[str, tuple[str, str]] = {}
        for row in new:
            fresh = set(signatures[row[0]]) - covered
            if need > 0 and fresh:
                placed[row[0]] = ("held_out", "signature")
                covered |= fresh
                need -= 1
        for row in new:
            if row[0] in placed:
                continue
            if need > 0:
                placed[row[0]] = ("held_out", "fill")
                need -= 1
            else:
                placed[row[0]] = ("train", "train")
        now = time.time_ns()
        labels = {row[0]: row[1] for row in situations}
        if placed:
            cursor.executemany(load_sql("generator", "split_insert.sql"), [
                [key, labels[key], side, reason, seed, share, now]
                for key, (side, reason) in placed.items()])
        cursor.execute("COMMIT")
    except BaseException:
        cursor.execute("ROLLBACK")
        raise
    sides = {key: row[2] for key, row in stored.items()} | {k: v[0] for k, v in placed.items()}
    all_signatures = {sig for sigs in signatures.values() for sig in sigs}
    held_signatures = {sig for key, sigs in signatures.items()
                       if sides.get(key) == "held_out" for sig in sigs}
    if missing := all_signatures - held_signatures:
        warnings.append(f"{len(missing)} of {len(all_signatures)} (fault, behaviour) "
                        "signatures have no held-out situation (the held-out share ran out "
                        "first; raise --held-out): " + ", ".join(sorted(missing)[:5])
                        + (" ..." if len(missing) > 5 else ""))
    graded, passed, tasks = cursor.execute(
        load_sql("generator", "split_pass_rate.sql")).fetchone() or (0, 0, 0)
    rate = passed / graded if graded else None
    needed = power_needed(rate) if rate is not None else None
    if needed is not None and tasks < needed:
        warnings.append(f"the held-out set has {tasks} tasks; detecting a "
                        f"{DETECT_POINTS * 100:g}-point change at {POWER * 100:g}% power "
                        f"from a {rate:.0%} pass rate needs {needed}: differences smaller "
                        "than the interval will read as no difference")
    held_total = sum(1 for side in sides.values() if side == "held_out")
    return SplitReport(
        situations=len(situations), held_out=held_total, train=len(sides) - held_total,
        newly_placed=len(placed), kept=len(stored), signatures=len(all_signatures),
        signatures_held_out=len(held_signatures), seed=seed, held_out_share=share,
        pass_rate=rate, held_out_tasks=int(tasks), tasks_needed=needed,
        warnings=tuple(warnings))


def render_split(report: SplitReport) -> str:
    """The text ``tracemill split`` prints."""
    rate = "n/a" if report.pass_rate is None else f"{report.pass_rate:.1%}"
    lines = [
        f"split (seed {report.seed}, held-out share {report.held_out_share:g}): "
        f"{report.situations} situations, {report.held_out} held out, {report.train} train "
        f"({report.newly_placed} placed now, {report.kept} kept from the stored split)",
        f"  (fault, behaviour) signatures: {report.signatures_held_out} of "
        f"{report.signatures} shown on the held-out side",
        f"  power: pass rate {rate}; {report.held_out_tasks} held-out tasks; "
        + (f"{report.tasks_needed} needed to detect a {DETECT_POINTS * 100:g}-point change "
           f"at {POWER * 100:g}% power (two-proportion, two-sided, alpha {ALPHA:g})"
           if report.tasks_needed is not None else "no graded rollouts to measure it"),
    ]
    lines += [f"  WARNING: {warning}" for warning in report.warnings]
    return "\n".join(lines)


__all__ = ["SplitError", "SplitOptions", "SplitReport", "power_needed", "render_split",
           "require_split_table", "split_store"]
