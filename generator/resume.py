"""Which run an invocation works on, and what it already spent.

A run that stopped before its end (a time limit, an agent or grader that kept failing,
an interrupt, a SIGKILL) is resumed by the next ``tracemill generate`` with the same
options: it simulates the plan it stored, skips the rollouts it already stored and
charges what they spent to the budget. A run that finished is never resumed.
"""

from __future__ import annotations

import itertools
import logging
import time

import duckdb

from generator.budget import BudgetLedger
from generator.errors import GeneratorError
from generator.rollout_store import (
    PreviousRun,
    StoredProgress,
    find_resumable,
    previous_run,
)

_log = logging.getLogger("tracemill.generator")

FINISHED_BY = frozenset({"plan_done", "budget", "saturated"})
"""Stop reasons that end a run for good; after any other (time limit, an agent or grader
that kept failing, an interrupt) the same command resumes it."""


def resolve_run(cursor: duckdb.DuckDBPyConnection, fingerprint: str, resume: str | None,
                fresh: bool) -> tuple[str, PreviousRun | None]:
    """The run to work on: ``resume``, else the newest unfinished run with this
    configuration (unless ``fresh``), else a new id (with no previous run)."""
    if resume is not None:
        found = previous_run(cursor, resume)
        if found is None:
            raise GeneratorError(f"no run {resume!r} in the store; `tracemill runs` lists them")
        if found.fingerprint != fingerprint:
            raise GeneratorError(
                f"run {resume} was started with other options; resume it with exactly the "
                f"options it was started with (`tracemill runs {resume}` shows its config), "
                "or start a new run without --resume")
        return resume, found
    if not fresh:
        existing = find_resumable(cursor, fingerprint)
        if existing is not None:
            _log.info("resuming unfinished run %s", existing)
            found = previous_run(cursor, existing)
            assert found is not None
            return existing, found
    # The same options twice within one second would get the same id, and the second run
    # would find the first one's rollouts as "already stored" and write nothing.
    base = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + fingerprint[:8]
    run_id = base
    for attempt in itertools.count(2):
        if previous_run(cursor, run_id) is None:
            break
        run_id = f"{base}-{attempt}"
    return run_id, None


def charge_earlier(ledger: BudgetLedger, so_far: StoredProgress,
                   previous: PreviousRun | None) -> None:
    """Charge a resumed run with what it spent before: its stored rollouts, or what the
    last invocation's ledger said when that is more (calls of rollouts that were cut off
    by an interrupt or lost were paid for too). After a SIGKILL there is no such record,
    and the calls that were in flight then are not known."""
    tokens = so_far.input_tokens + so_far.output_tokens
    usd = so_far.cost_usd
    if previous is not None and previous.ledger is not None:
        tokens = max(tokens, int(str(previous.ledger.get("tokens", 0))))
        usd = max(usd, float(str(previous.ledger.get("usd", 0.0))))
    ledger.charge_stored(rollouts=len(so_far.indices), tokens=tokens, usd=usd)


__all__ = ["FINISHED_BY", "charge_earlier", "resolve_run"]
