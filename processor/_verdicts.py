"""Statuses of situations: the tests deciding new, persistent, fixed or uncertain.

The rules (the *Status* table) are documented in :mod:`processor.situations`; this module
holds the test of one set of counts against the rest of each period, and the sentence
saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

from processor._discovery import ALPHA, above
from processor.stats import fisher_exact, newcombe

__all__ = ["PeriodNames", "Verdict", "decide"]


@dataclass(frozen=True)
class PeriodNames:
    """Names of the two compared periods, as a reason sentence says them."""

    latest: str
    """``v2`` or ``the later half``."""
    previous: str
    """``v1`` or ``the earlier half``."""


def _pct(failed: int, graded: int) -> str:
    return f"{failed / graded:.0%} ({failed}/{graded})" if graded else "no graded conversations"


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


@dataclass(frozen=True)
class Verdict:
    """The status of one situation, with its reason and test."""

    status: str
    reason: str
    compared: str
    p_value: float | None
    difference: tuple[float, float] | None
    low_support: bool
    fails_now: bool


def decide(counts: tuple[int, int, int, int], rest: tuple[int, int, int, int],
           names: PeriodNames, min_support: int, alpha: float = ALPHA) -> Verdict | None:
    """The status of one situation; None when it fails in neither period (at ``alpha``)."""
    g_now, f_now, g_before, f_before = counts
    r_now_g, r_now_f, r_before_g, r_before_f = rest
    now = above(f_now, g_now, r_now_f, r_now_g) < alpha
    before = above(f_before, g_before, r_before_f, r_before_g) < alpha
    if not now and not before:
        return None
    low = g_now < min_support
    latest = f"{_pct(f_now, g_now)} in {names.latest}"
    previous = f"{_pct(f_before, g_before)} in {names.previous}"
    if g_now == 0:
        return Verdict("uncertain", f"no recent data: failed {previous} and has no graded "
                        f"conversation in {names.latest}", "versions", None, None, True, False)
    if now and g_before == 0:
        p = fisher_exact(f_now, g_now - f_now, r_now_f, r_now_g - r_now_f)
        difference = newcombe(f_now, g_now, r_now_f, r_now_g)
        sentence = (f"fails {latest} vs {_pct(r_now_f, r_now_g)} for the rest of "
                    f"{names.latest}, with no earlier data; {_p_text(p)}")
        if low:
            return Verdict("uncertain", f"low support ({g_now} graded, fewer than "
                            f"{min_support}): {sentence}", "baseline", p, difference, True, True)
        return Verdict("new", sentence, "baseline", p, difference, False, True)
    p = fisher_exact(f_now, g_now - f_now, f_before, g_before - f_before)
    difference = newcombe(f_now, g_now, f_before, g_before)
    sentence = f"fails {latest} vs {previous}; {_p_text(p)}"
    up = f_now * g_before > f_before * g_now
    if now and before:
        status = "persistent"
    elif now:
        status = "new" if p < alpha and up else "uncertain"
        if status == "uncertain":
            sentence += f"; the change is not significant ({_pct(r_before_f, r_before_g)} " \
                f"for the rest of {names.previous})"
    else:
        status = "fixed" if p < alpha and not up else "uncertain"
        if status == "uncertain":
            sentence += "; the decrease is not significant"
    # a status resting on failures seen before (persistent, fixed) needs the support there
    # too: 6 of 7 failing in v1 tells no fix
    short = [(g_now, names.latest)] if low else []
    if status in ("persistent", "fixed") and g_before < min_support:
        short.append((g_before, names.previous))
    if short:
        where = " and ".join(f"{graded} graded in {name}" for graded, name in short)
        sentence = f"low support ({where}, fewer than {min_support}): {sentence}"
        status = "uncertain"
    return Verdict(status, sentence, "versions", p, difference, bool(short), now)
