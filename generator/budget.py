"""A run's budget and the ledger that keeps it.

A :class:`Budget` is rollouts, tokens or US dollars, parsed from what a user types
(``200``, ``50k tokens``, ``$5``). A :class:`BudgetLedger` accounts a run's spending so
that it **never overspends**: a rollouts budget counts started rollouts; a token or money
budget *reserves* the worst case of each model call before it is made (input tokens
estimated conservatively with :func:`estimate_tokens`, plus the call's ``max_tokens``,
priced by the caller for a money budget) and *settles* the actual figure afterwards,
returning what was not used. A reservation is refused when it does not fit, so spent plus
reserved never passes the limit. The only way past it is a provider that ignores
``max_tokens``: the settle records the overrun and counts it in the summary.

Amounts are kept as integers (tokens; nano-dollars for money) so the comparison with the
limit is exact, not subject to floating-point drift.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
import threading
from dataclasses import dataclass
from typing import Literal

from generator.errors import BudgetError

__all__ = ["MESSAGE_OVERHEAD_TOKENS", "Budget", "BudgetKind", "BudgetLedger", "BudgetSummary",
           "Reservation", "estimate_tokens"]

_log = logging.getLogger("tracemill.generator")

BudgetKind = Literal["rollouts", "tokens", "usd"]

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a chat format adds around each message (role markers, separators)."""

_USD_SCALE = 10**9  # nano-dollars: exact integer accounting far below any real price
_NUMBER = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d[\d_]*(?:\.\d+)?|\.\d+)"
_AMOUNT = re.compile(_NUMBER + r"\s*([km]?)\s*([a-z$]*)")
_UNITS: dict[str, BudgetKind] = {
    "": "rollouts", "rollout": "rollouts", "rollouts": "rollouts",
    "token": "tokens", "tokens": "tokens", "tok": "tokens",
    "usd": "usd", "$": "usd", "dollar": "usd", "dollars": "usd",
}
_MULTIPLIERS = {"": 1, "k": 1_000, "m": 1_000_000}


@dataclass(frozen=True)
class Budget:
    """What a run may spend."""

    kind: BudgetKind
    """``rollouts`` (simulated conversations started), ``tokens`` (input plus output of
    every model call, all roles) or ``usd`` (their price from the run's price table)."""
    limit: float
    """How many of them; positive (whole for rollouts and tokens)."""

    def __post_init__(self) -> None:
        if self.kind not in ("rollouts", "tokens", "usd"):
            raise BudgetError(f"a budget is in rollouts, tokens or usd, not {self.kind!r}")
        if not math.isfinite(self.limit) or self.limit <= 0:
            raise BudgetError(f"a budget must be positive, not {self.limit!r} {self.kind}")
        if self.kind != "usd" and self.limit != int(self.limit):
            raise BudgetError(f"a {self.kind} budget must be a whole number, not "
                              f"{self.limit!r}")

    @classmethod
    def parse(cls, text: str) -> Budget:
        """Read ``200`` / ``200 rollouts``, ``50000 tokens`` / ``50k tokens``, ``$5`` /
        ``5 usd``; raise :class:`BudgetError` naming the accepted forms otherwise."""
        cleaned = text.strip().lower()
        if cleaned.startswith("-") or cleaned.startswith("$-"):
            raise BudgetError(f"a budget must be positive, not {text!r}")
        dollar = cleaned.startswith("$")
        match = _AMOUNT.fullmatch(cleaned[1:].strip() if dollar else cleaned)
        unit = match.group(3) if match else None
        if match is None or unit not in _UNITS or (dollar and unit not in ("", "usd")):
            raise BudgetError(
                f"cannot read the budget {text!r}: give a number of rollouts (200), of "
                "tokens (50000 tokens, 50k tokens) or of US dollars ($5, 5 usd)")
        kind: BudgetKind = "usd" if dollar else _UNITS[unit]
        value = float(re.sub("[_,]", "", match.group(1))) * _MULTIPLIERS[match.group(2)]
        if kind != "usd":
            if abs(value - round(value)) > 1e-9:
                raise BudgetError(f"a {kind} budget must be a whole number: {text!r}")
            value = float(round(value))
        return cls(kind, value)

    def __str__(self) -> str:
        if self.kind == "usd":
            return f"${self.limit:g}"
        return f"{int(self.limit)} {self.kind}"


@dataclass(frozen=True)
class Reservation:
    """Budget held for one model call until it is settled."""

    id: int
    """Unique within its ledger."""
    amount: float
    """What was reserved, in the budget's unit (0 on a rollouts budget)."""


@dataclass(frozen=True)
class BudgetSummary:
    """What a run spent, for its record."""

    kind: BudgetKind
    """The budget's kind."""
    limit: float
    """The budget's limit."""
    spent: float
    """Spent in the budget's unit (rollouts started and not released, tokens or USD)."""
    rollouts_started: int
    """Rollouts started and not released (lost ones that were not released count)."""
    tokens: int
    """Tokens settled (on a token budget; on others when the caller reported them)."""
    usd: float
    """US dollars settled (on a money budget; on others when the caller reported them)."""
    overruns: int
    """Calls whose actual use passed their reservation (a provider ignored max_tokens)."""


def _ascii_and_other(text: str) -> tuple[int, int]:
    if text.isascii():
        return len(text), 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    return ascii_chars, len(text.encode("utf-8")) - ascii_chars


def estimate_tokens(text: str) -> int:
    """A conservative token count of one message's text, with its message overhead.

    ASCII text counts one token per 3 characters, rounded up (English averages about 4
    characters per token with common tokenizers, code and JSON about 3). Other text counts
    one token per 2 bytes of its UTF-8 encoding (a CJK character is 3 bytes and rarely
    more than 1.5 tokens). :data:`MESSAGE_OVERHEAD_TOKENS` is added for the message's
    framing. Over-estimating only makes the ledger refuse a call a little early near the
    end of a budget; under-estimating could overspend it.
    """
    ascii_chars, other_bytes = _ascii_and_other(text)
    return -(-ascii_chars // 3) + -(-other_bytes // 2) + MESSAGE_OVERHEAD_TOKENS


class BudgetLedger:
    """A run's spending against its budget; safe across asyncio tasks and threads.

    Every method holds one lock and never awaits, so concurrent rollouts on one event
    loop, or calls from worker threads, see a consistent ledger.
    """

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        """The budget kept."""
        self._scale = _USD_SCALE if budget.kind == "usd" else 1
        limit_units = math.floor(budget.limit * self._scale)
        while limit_units / self._scale > budget.limit:  # never round the limit up
            limit_units -= 1
        self._limit = limit_units
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._open: dict[int, int] = {}  # reservation id -> units held
        self._spent = 0  # units of the budget's kind (rollouts for a rollouts budget)
        self._reserved = 0
        self._rollouts = 0
        self._tokens = 0
        self._usd_units = 0
        self._overruns = 0
        self._never_fits: int | None = None  # smallest amount refused with nothing held

    def _units(self, amount: float) -> int:
        if not math.isfinite(amount) or amount < 0:
            raise ValueError(f"a budget amount must be a finite number >= 0, not {amount!r}")
        return math.ceil(amount * self._scale)

    # ----------------------------------------------------------------- rollouts

    def try_start_rollout(self) -> bool:
        """Count a rollout as started; False (nothing counted) when the budget is spent.

        A started rollout stays spent even if it is lost, unless :meth:`release_rollout`
        gives it back (for a rollout that was never simulated)."""
        with self._lock:
            if self._exhausted():
                return False
            self._rollouts += 1
            if self.budget.kind == "rollouts":
                self._spent += 1
            return True

    def release_rollout(self) -> None:
        """Give back one started rollout (it did not run, or will be retried)."""
        with self._lock:
            if self._rollouts == 0:
                raise ValueError("release_rollout() without a started rollout")
            self._rollouts -= 1
            if self.budget.kind == "rollouts":
                self._spent -= 1

    # ----------------------------------------------------------------- model calls

    def reserve(self, amount: float) -> Reservation | None:
        """Hold ``amount`` (the worst case of one model call, in the budget's unit) or
        return None when it does not fit in what is left.

        On a rollouts budget model calls are not limited: the reservation is always
        granted and holds nothing."""
        with self._lock:
            units = 0 if self.budget.kind == "rollouts" else self._units(amount)
            if self._spent + self._reserved + units > self._limit:
                if not self._open and self._spent + units > self._limit:
                    self._never_fits = units if self._never_fits is None \
                        else min(self._never_fits, units)
                return None
            reservation = Reservation(next(self._ids), units / self._scale)
            self._open[reservation.id] = units
            self._reserved += units
            return reservation

    def settle(self, reservation: Reservation, actual: float, *, tokens: int | None = None,
               usd: float | None = None) -> None:
        """Replace a reservation by what the call actually cost (``actual``, in the
        budget's unit; 0 for a call that failed before using anything).

        ``tokens`` and ``usd`` feed the summary's totals; each defaults to ``actual`` when
        it is the budget's unit. An actual above the reservation is recorded in full and
        counted as an overrun (with a warning in the log)."""
        with self._lock:
            held = self._open.pop(reservation.id, None)
            if held is None:
                raise ValueError(f"reservation {reservation.id} is not open (settled twice?)")
            self._reserved -= held
            units = 0 if self.budget.kind == "rollouts" else self._units(actual)
            if units > held and actual <= reservation.amount:
                units = held  # the reservation's own amount, rounded back to units
            if units > held:
                self._overruns += 1
                _log.warning("a model call used %g %s against %g reserved: its provider "
                             "ignored max_tokens; the budget may be overspent",
                             actual, self.budget.kind, reservation.amount)
            self._spent += units
            if tokens is None and self.budget.kind == "tokens":
                tokens = units
            if usd is None and self.budget.kind == "usd":
                self._usd_units += units
            elif usd is not None:
                self._usd_units += math.ceil(max(usd, 0.0) * _USD_SCALE)
            self._tokens += max(tokens or 0, 0)

    def charge_stored(self, *, rollouts: int = 0, tokens: int = 0, usd: float = 0.0) -> None:
        """Charge what a resumed run already spent in the rollouts it stored earlier."""
        with self._lock:
            self._rollouts += rollouts
            self._tokens += tokens
            usd_units = math.ceil(usd * _USD_SCALE)
            self._usd_units += usd_units
            if self.budget.kind == "rollouts":
                self._spent += rollouts
            elif self.budget.kind == "tokens":
                self._spent += tokens
            else:
                self._spent += usd_units

    # ----------------------------------------------------------------- state

    def _exhausted(self) -> bool:
        left = self._limit - self._spent
        if self._spent + self._reserved >= self._limit:
            return True
        # a call refused with nothing else held will never fit again
        return self._never_fits is not None and self._never_fits > left

    @property
    def spent(self) -> float:
        """Spent so far, in the budget's unit."""
        with self._lock:
            return self._spent / self._scale

    @property
    def reserved(self) -> float:
        """Held by calls in flight."""
        with self._lock:
            return self._reserved / self._scale

    @property
    def remaining(self) -> float:
        """Neither spent nor held (never below 0)."""
        with self._lock:
            return max(self._limit - self._spent - self._reserved, 0) / self._scale

    @property
    def exhausted(self) -> bool:
        """True when nothing more can start: the limit is spent or held, or a call was
        refused that can no longer fit even after every call in flight settles."""
        with self._lock:
            return self._exhausted()

    def summary(self) -> BudgetSummary:
        """The ledger as the run record shows it."""
        with self._lock:
            return BudgetSummary(
                kind=self.budget.kind, limit=self.budget.limit,
                spent=self._spent / self._scale, rollouts_started=self._rollouts,
                tokens=self._tokens, usd=self._usd_units / _USD_SCALE,
                overruns=self._overruns)
