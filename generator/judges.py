"""Judges are measured, not trusted: each grader's verdicts against human labels.

For every grader stamp that labeled rollouts (the rollout's ``labeled_by``), the rollouts
that also carry a human label (``tracemill label``, ``kind`` human, target = rollout id)
give pairs *(grader passed?, person passed?)*, and :func:`measure` reports:

* **agreement** — the share of rollouts where both said the same, with its 95% Wilson
  interval;
* **Cohen's kappa** — agreement beyond what the two pass rates give by chance, with a 95%
  interval from the large-sample standard error of Fleiss, Cohen & Everitt (1969) (the
  non-null variance Stata's ``kapci`` and R's ``statpsych::ci.kappa`` report), clipped to
  [-1, 1]. When both raters put every rollout in the same single class, chance agreement
  is 1 and kappa is 0/0: it is reported as undefined (None), never as 1;
* **pass-when-gold-fails** — of the rollouts the person failed, the share the grader
  passed, with its 95% Wilson interval. This is the costly direction: such rollouts enter
  training data as good examples.

**The bar.** A grader is *flagged* when any of these holds:

1. fewer than 20 human-labeled rollouts (:data:`MIN_LABELS`): too few to trust anything;
2. kappa undefined or below 0.6 (:data:`MIN_KAPPA`, the conventional floor of
   "substantial" agreement, Landis & Koch 1977; McHugh 2012 argues lower is unusable for
   decisions);
3. the upper end of the pass-when-gold-fails interval above 0.2 (:data:`MAX_PASS_WHEN_FAILS`),
   including when no human-failed rollout exists (the interval is then 0 to 1): we must be
   95% sure the grader passes at most one in five real failures. With no judge passes this
   takes at least 16 human-failed rollouts (Wilson upper bound of 0/16 is 0.194).

The point estimate is used for kappa because its interval is wide at the sample sizes
people label; the upper bound is used for pass-when-gold-fails because letting failures
through is the error that poisons data, so the benefit of the doubt goes against the judge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

import duckdb

from processor.stats import Z95, wilson
from tracemill.store import load_sql

MIN_LABELS = 20
"""Fewest human-labeled rollouts before a grader can be trusted."""
MIN_KAPPA = 0.6
"""Lowest acceptable Cohen's kappa (point estimate)."""
MAX_PASS_WHEN_FAILS = 0.2
"""Highest acceptable upper 95% bound of the pass-when-gold-fails rate."""


@dataclass(frozen=True)
class JudgeAgreement:
    """How one grader's pass/fail verdicts agree with people's."""

    n: int
    """Rollouts with both a grader verdict and a human label."""
    agreement: float | None
    """Share of them where both agreed (None when n is 0)."""
    agreement_interval: tuple[float, float]
    """95% Wilson interval of the agreement."""
    kappa: float | None
    """Cohen's kappa; None when undefined (no rollouts, or both raters used one class)."""
    kappa_interval: tuple[float, float] | None
    """95% interval of kappa (Fleiss-Cohen-Everitt standard error), None when undefined."""
    human_failed: int
    """Rollouts the person failed."""
    pass_when_gold_fails: float | None
    """Of those, the share the grader passed (None when the person failed none)."""
    pass_when_gold_fails_interval: tuple[float, float]
    """Its 95% Wilson interval ((0, 1) when the person failed none)."""
    flagged: bool
    """True when the grader falls short of the bar in the module docstring."""
    why: str
    """Every reason it was flagged, or why it passes."""


@dataclass(frozen=True)
class JudgeReport:
    """One grader stamp measured against human labels."""

    labeled_by: str
    """The grader stamp (``conduct-checks/1 + judge:...``) as stored on the rollouts."""
    agreement: JudgeAgreement
    """Its measurement."""


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> tuple[float, float] | None:
    """Kappa and its large-sample standard error (Fleiss, Cohen & Everitt 1969) for two
    raters' binary verdicts; None when undefined (no pairs, or chance agreement is 1)."""
    n = len(pairs)
    if n == 0:
        return None
    both = sum(1 for a, b in pairs if a and b) / n
    neither = sum(1 for a, b in pairs if not a and not b) / n
    a_only = sum(1 for a, b in pairs if a and not b) / n
    b_only = 1.0 - both - neither - a_only
    a_yes, b_yes = both + a_only, both + b_only
    observed = both + neither
    chance = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    if chance >= 1.0 - 1e-12:
        return None
    kappa = (observed - chance) / (1 - chance)
    # the cells of the 2x2 table: (proportion, row margin, column margin) per diagonal cell,
    # and the off-diagonal cells with the margins of the other class
    one_minus = 1 - kappa
    diagonal = (both * (1 - (a_yes + b_yes) * one_minus) ** 2
                + neither * (1 - ((1 - a_yes) + (1 - b_yes)) * one_minus) ** 2)
    off = one_minus ** 2 * (a_only * (b_yes + (1 - a_yes)) ** 2
                            + b_only * ((1 - b_yes) + a_yes) ** 2)
    variance = max(0.0, diagonal + off - (kappa - chance * one_minus) ** 2) / n
    return kappa, math.sqrt(variance) / (1 - chance)


def measure(pairs: Sequence[tuple[bool, bool]]) -> JudgeAgreement:
    """Measure one grader: ``pairs`` are (grader passed?, person passed?) per rollout."""
    n = len(pairs)
    agreed = sum(1 for judge, human in pairs if judge == human)
    failed_by_human = [judge for judge, human in pairs if not human]
    passed_anyway = sum(failed_by_human)
    kappa = cohen_kappa(pairs)
    kappa_interval = None
    if kappa is not None:
        value, error = kappa
        kappa_interval = (max(-1.0, value - Z95 * error), min(1.0, value + Z95 * error))
    pwgf_interval = wilson(passed_anyway, len(failed_by_human))
    why: list[str] = []
    if n < MIN_LABELS:
        why.append(f"too few human labels to trust ({n} < {MIN_LABELS})")
    if kappa is None:
        why.append("kappa is undefined (no labels, or every verdict in one class)")
    elif kappa[0] < MIN_KAPPA:
        why.append(f"kappa {kappa[0]:.2f} < {MIN_KAPPA}")
    if not failed_by_human:
        why.append("no human-failed rollouts: cannot tell whether it passes failures")
    elif pwgf_interval[1] > MAX_PASS_WHEN_FAILS:
        why.append(f"may pass up to {pwgf_interval[1]:.0%} of human-failed rollouts "
                   f"({passed_anyway}/{len(failed_by_human)}; bar {MAX_PASS_WHEN_FAILS:.0%})")
    return JudgeAgreement(
        n=n,
        agreement=agreed / n if n else None,
        agreement_interval=wilson(agreed, n),
        kappa=kappa[0] if kappa is not None else None,
        kappa_interval=kappa_interval,
        human_failed=len(failed_by_human),
        pass_when_gold_fails=passed_anyway / len(failed_by_human) if failed_by_human else None,
        pass_when_gold_fails_interval=pwgf_interval,
        flagged=bool(why),
        why="; ".join(why) if why else (
            f"meets the bar: n >= {MIN_LABELS}, kappa >= {MIN_KAPPA}, pass-when-gold-fails "
            f"upper bound <= {MAX_PASS_WHEN_FAILS:.0%}"),
    )


def judge_report(cursor: duckdb.DuckDBPyConnection, *,
                 threshold: float = 0.5) -> list[JudgeReport]:
    """One report per grader stamp that labeled human-labeled rollouts, in stamp order.

    A human label with only a reward counts as passed when the reward is ``>= threshold``.
    """
    rows = cursor.execute(load_sql("generator", "judge_pairs.sql"),
                          [threshold, threshold]).fetchall()
    return [JudgeReport(stamp, measure([(bool(judge), bool(human)) for _, judge, human in group]))
            for stamp, group in groupby(rows, key=lambda row: str(row[0]))]


def _interval(low: float, high: float) -> str:
    return f"[{low:.2f}, {high:.2f}]"


def render_judge_report(reports: Sequence[JudgeReport]) -> str:
    """The reports as a small table with a verdict line per grader."""
    if not reports:
        return ("No graded rollout carries a human label yet. Label rollouts with "
                "`tracemill label FILE` (target = rollout id, kind human) to measure graders.")
    header = ("grader", "n", "agreement", "kappa", "pass-when-gold-fails", "verdict")
    rows: list[tuple[str, ...]] = []
    for report in reports:
        a = report.agreement
        agreement = ("-" if a.agreement is None
                     else f"{a.agreement:.2f} {_interval(*a.agreement_interval)}")
        kappa = ("undefined" if a.kappa is None or a.kappa_interval is None
                 else f"{a.kappa:.2f} {_interval(*a.kappa_interval)}")
        pwgf = ("- (no human fails)" if a.pass_when_gold_fails is None else
                f"{a.pass_when_gold_fails:.2f} {_interval(*a.pass_when_gold_fails_interval)} "
                f"of {a.human_failed}")
        rows.append((report.labeled_by, str(a.n), agreement, kappa, pwgf,
                     "FLAGGED" if a.flagged else "ok"))
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
             .rstrip() for row in (header, *rows)]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines.append("")
    lines.extend(f"{report.labeled_by}: {'FLAGGED — ' if report.agreement.flagged else ''}"
                 f"{report.agreement.why}" for report in reports)
    return "\n".join(lines)


__all__ = ["MAX_PASS_WHEN_FAILS", "MIN_KAPPA", "MIN_LABELS", "JudgeAgreement", "JudgeReport",
           "cohen_kappa", "judge_report", "measure", "render_judge_report"]
