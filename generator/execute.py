"""The concurrent part of a run: start rollouts, simulate, grade, commit, stop.

:class:`Execution` runs up to ``concurrency`` conversations at a time on one asyncio
loop, grades each (conduct checks, then the user's grader) and hands finished rollouts to
a :class:`RolloutWriter`, which commits them in small batches off the loop. It stops on
the first of: the budget is spent, the time limit passed, the squares stop filling
(``saturation_window`` finished rollouts in a row added no new pair of axis values and no
new failure), :data:`FAILING_IN_A_ROW` rollouts in a row ended on an agent backend error
(``agent_failing``) or a grader error (``grader_failing``), the plan is done, or an
interrupt.

An interrupt comes two ways. A stop request (the ``stop`` event, set from any thread, as
``tracemill serve`` does for ``POST /api/v1/jobs/{id}/stop``) starts no more rollouts and
lets those in flight finish and be stored: they were paid for. Only if they are still
running :data:`STOP_GRACE_S` seconds after the request are they cancelled, so that a
model endpoint that hangs cannot hold a stop forever. A cancelled task (Ctrl-C in
``tracemill generate``) cancels the rollouts in flight at once. Either way the run ends
``interrupted`` and the next invocation with the same options resumes it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from tqdm import tqdm

from generator.backends._spec import redact_secrets
from generator.budget import BudgetLedger
from generator.checks import conduct_checks
from generator.errors import GeneratorError
from generator.graders import GraderVerdict, combine
from generator.person import paraphrase
from generator.plan import Plan
from generator.prices import PriceTable
from generator.records import Grade, Message, PlannedRollout, Rollout, Transcript
from generator.roles import Roles
from generator.rollout_store import rollout_row
from generator.run_config import RunConfig
from generator.simulate import DEFAULT_SYSTEM_PROMPT, Meter, is_free, simulate

_log = logging.getLogger("tracemill.generator")

FAILING_IN_A_ROW = 10
"""Rollouts in a row ending on an agent backend error (after its retries), or that the
grader failed on, that stop a run: the endpoint is down or the grader broken, and the rest
of the budget would go the same way."""

STOP_GRACE_S = 300.0
"""How long rollouts in flight may go on after a stop request before they are cancelled
(and lost: the budget they spent is still charged)."""

Progress = Callable[[str, int], None]
"""Told ``(run id, rollouts finished)`` once the run id is settled and after every
finished rollout; the count includes those an earlier invocation of the run stored.
Called on the run's event loop: it must return quickly."""

_POLL_S = 0.25
"""How often a wait for rollouts in flight looks at the stop event."""

Row = dict[str, object]
"""One stored rollout row (:func:`generator.rollout_store.rollout_row`)."""


class RolloutWriter:
    """Commits rows in batches off the event loop: every ``every_s`` seconds, and at once
    when ``batch_rows`` are waiting.

    :meth:`close` returns only once every row handed to :meth:`add` is committed,
    including a batch whose periodic flush was under way when the run ended: the run
    record is read from the store right after, and a batch still being written then
    was missing from it (a second run on a store reported ``+-96 earlier``)."""

    def __init__(self, insert: Callable[[list[Row]], None], *, every_s: float = 0.25,
                 batch_rows: int = 256) -> None:
        self._insert = insert
        self._every_s = every_s
        self._batch_rows = batch_rows
        self._pending: list[Row] = []
        self._writing: set[asyncio.Future[None]] = set()
        self._ticker: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start flushing periodically (on the running loop)."""
        self._ticker = asyncio.create_task(self._tick())

    async def add(self, row: Row) -> None:
        """Queue a row; flushes when a batch is full."""
        self._pending.append(row)
        if len(self._pending) >= self._batch_rows:
            await self.flush()

    async def flush(self) -> None:
        """Commit what is waiting."""
        # The rows are taken here, on the event loop: taken on the worker thread, a row
        # appended meanwhile could land in the list already copied and be lost.
        rows, self._pending = self._pending, []
        if not rows:
            return
        writing = asyncio.ensure_future(asyncio.to_thread(self._insert, rows))
        self._writing.add(writing)
        writing.add_done_callback(self._writing.discard)
        # shielded: cancelling the flusher must not forget a batch being written
        await asyncio.shield(writing)

    async def close(self) -> None:
        """Stop the periodic flush, wait for batches being written, write the rest."""
        if self._ticker is not None:
            self._ticker.cancel()
            (ended,) = await asyncio.gather(self._ticker, return_exceptions=True)
            if isinstance(ended, Exception):
                raise ended  # a batch failed to commit: the run must not look whole
        while self._writing:
            await asyncio.gather(*self._writing)
        await self.flush()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self._every_s)
            await self.flush()


class Saturation:
    """Notices when finished rollouts stop adding new pairs or new failures."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.seen: set[tuple[str, ...]] = set()
        self.quiet = 0

    def observe(self, rollout: Rollout) -> bool:
        """Record one finished rollout; True once the window passed without news."""
        situation = sorted(rollout.plan.situation.items())
        new = {(a, va, b, vb) for (a, va), (b, vb) in itertools.combinations(situation, 2)}
        if rollout.transcript.mutation_fired is False:
            new = set()  # its mutation did not fire: it does not show its situation
        if rollout.grade is not None and not rollout.grade.passed:
            cell = rollout.plan.cell.label() if rollout.plan.cell else "explore"
            new.add(("failure", cell, rollout.grade.failure_class or "", ""))
        fresh = new - self.seen
        self.seen |= fresh
        self.quiet = 0 if fresh else self.quiet + 1
        return self.window > 0 and self.quiet >= self.window


class Execution:
    """One invocation's rollouts: start, simulate, grade, commit."""

    def __init__(self, writer: RolloutWriter, config: RunConfig, roles: Roles, plan: Plan,
                 ledger: BudgetLedger, prices: PriceTable, run_id: str,
                 done: frozenset[int], progress: bool, *,
                 on_progress: Progress | None = None,
                 stop: threading.Event | None = None,
                 stop_grace_s: float = STOP_GRACE_S) -> None:
        self.writer = writer
        self.config = config
        self.roles = roles
        self.plan = plan
        self.ledger = ledger
        self.prices = prices
        self.run_id = run_id
        self.done = done
        self.finished: list[Rollout] = []
        self.lost: list[str] = []
        self.fallbacks: list[str] = []
        self.last_errors: dict[str, str] = {}
        self.saturation = Saturation(config.saturation_window)
        self.system_prompt = config.system_prompt or DEFAULT_SYSTEM_PROMPT
        self.agent_shown = redact_secrets(config.agent)
        self.bar = tqdm(total=len(plan.items), initial=len(done), unit="rollout",
                        disable=not (progress and sys.stderr.isatty()), file=sys.stderr,
                        desc="generate")
        self.agent_failures = 0
        """Finished rollouts in a row that ended on an agent backend error."""
        self.grader_failures = 0
        """Finished rollouts in a row that the grader failed to grade."""
        self.cut_by_budget = 0
        """Rollouts the budget cut before the agent spoke (not stored)."""
        self.budget_hit = False
        """Set when a rollout could not pay for its next model call: start no more."""
        self.on_progress = on_progress
        self.stop = stop if stop is not None else threading.Event()
        """Set (from any thread) to start no more rollouts and end ``interrupted``."""
        self.stop_grace_s = stop_grace_s

    def _stop_before(self, deadline: float | None, saturated: asyncio.Event) -> str | None:
        if self.stop.is_set():
            return "interrupted"
        if deadline is not None and time.monotonic() >= deadline:
            return "time_limit"
        if saturated.is_set():
            return "saturated"
        if self.budget_hit:
            return "budget"
        if self.agent_failures >= FAILING_IN_A_ROW:
            return "agent_failing"
        if self.grader_failures >= FAILING_IN_A_ROW:
            return "grader_failing"
        return None

    async def run(self) -> str:
        """Run the plan's remaining items to a stop rule; returns the stop reason. Every
        finished rollout is committed when it returns."""
        deadline = (time.monotonic() + self.config.time_limit_s
                    if self.config.time_limit_s else None)
        stop_reason = "plan_done"
        in_flight: set[asyncio.Task[None]] = set()
        self.writer.start()
        saturated = asyncio.Event()
        try:
            for item in self.plan.items:
                if item.index in self.done:
                    continue
                stop = self._stop_before(deadline, saturated)
                if stop is not None:
                    stop_reason = stop
                    break
                while len(in_flight) >= self.config.concurrency and not self.stop.is_set():
                    # a timeout: a stop request must not wait for a slot to free
                    _done, in_flight = await asyncio.wait(
                        in_flight, timeout=_POLL_S, return_when=asyncio.FIRST_COMPLETED)
                if self.stop.is_set():
                    stop_reason = "interrupted"
                    break
                if self.ledger.exhausted or not self.ledger.try_start_rollout():
                    stop_reason = "budget"
                    break
                in_flight.add(asyncio.create_task(self._one(item, saturated)))
            in_flight = await self._finish(in_flight)
            if stop_reason == "plan_done" and self.stop.is_set() and in_flight:
                stop_reason = "interrupted"  # some were cancelled after the grace
            if stop_reason == "plan_done" and saturated.is_set():
                stop_reason = "saturated"
            if stop_reason == "plan_done" and any(
                    r.transcript.ended_by == "budget" for r in self.finished):
                stop_reason = "budget"
        except (asyncio.CancelledError, KeyboardInterrupt):
            stop_reason = "interrupted"
            for task in in_flight:
                task.cancel()
        finally:
            self.bar.close()
            await self.writer.close()
        return stop_reason

    async def _finish(self, in_flight: set[asyncio.Task[None]]) -> set[asyncio.Task[None]]:
        """Wait for the rollouts in flight to finish; once a stop was requested, at most
        :attr:`stop_grace_s` more seconds, then cancel the rest. Returns those cancelled."""
        stop_seen: float | None = None
        while in_flight:
            _done, in_flight = await asyncio.wait(in_flight, timeout=_POLL_S)
            if not in_flight or not self.stop.is_set():
                continue
            stop_seen = stop_seen if stop_seen is not None else time.monotonic()
            if time.monotonic() - stop_seen >= self.stop_grace_s:
                _log.warning("rollouts still running %.0f s after the stop request: "
                             "cancelled", self.stop_grace_s,
                             extra={"fields": {"run_id": self.run_id,
                                               "cancelled": len(in_flight)}})
                for task in in_flight:
                    task.cancel()
                await asyncio.gather(*in_flight, return_exceptions=True)
                self.lost.extend([f"a rollout in flight was cancelled {self.stop_grace_s:g} s "
                                  "after the stop request"] * len(in_flight))
                return in_flight
        return set()

    async def _one(self, item: PlannedRollout, saturated: asyncio.Event) -> None:
        began = time.perf_counter()
        try:
            plan = await self._paraphrased(item)
            worlds = self.roles.worlds
            transcript = await simulate(
                plan, tools=self.plan.tools, agent=self.roles.agent,
                person=self.roles.person, ledger=self.ledger, prices=self.prices,
                system_prompt=self.system_prompt, limits=self.config.limits,
                world=worlds.for_rollout(plan, self.plan.tools, self.run_id),
                blocking_world=worlds.blocking)
            if transcript.error:
                self.last_errors["agent"] = transcript.error
            transcript, grade = await self._grade(plan, transcript)
            rollout = Rollout(plan, transcript, grade, time.perf_counter() - began)
        except Exception as exc:  # a bug must not sink the run: it is counted and shown
            _log.exception("rollout %d failed", item.index)
            self.lost.append(f"rollout {item.index}: {type(exc).__name__}: {exc}")
            self.ledger.release_rollout()
            return
        ended_by = rollout.transcript.ended_by
        if ended_by == "budget":
            self.budget_hit = True
            if not any(m.role == "assistant" for m in rollout.transcript.messages):
                # cut before the agent said anything: nothing to keep, nothing to count
                self.cut_by_budget += 1
                self.ledger.release_rollout()
                return
        self.finished.append(rollout)
        if self.on_progress is not None:
            self.on_progress(self.run_id, len(self.done) + len(self.finished))
        self.agent_failures = self.agent_failures + 1 if ended_by == "agent_error" else 0
        grader_failed = rollout.grade is None and (rollout.transcript.error or "").startswith(
            "grader:")
        self.grader_failures = self.grader_failures + 1 if grader_failed else 0
        self.bar.update(1)
        if self.saturation.observe(rollout):
            saturated.set()
        await self.writer.add(rollout_row(self.run_id, self.agent_shown, rollout))

    async def _grade(self, plan: PlannedRollout,
                     transcript: Transcript) -> tuple[Transcript, Grade | None]:
        """Conduct checks, then (only when they all pass: a failed check decides alone,
        so a paid judge is not asked) the user's grader. A grader that fails leaves the
        rollout stored ungraded, with the grader's error."""
        if transcript.ended_by in ("agent_error", "budget"):
            return transcript, None
        checks = conduct_checks(plan, transcript, self.plan.tools,
                                harness_markers=(plan.persona.aside(),))
        verdict = None
        if self.roles.grader is not None and all(check.passed for check in checks):
            try:
                verdict = await self._graded(plan, transcript)
            except GeneratorError as exc:
                self.last_errors["grader"] = str(exc)
                return replace(transcript, error=f"grader: {exc}"), None
            if verdict is None:
                return replace(transcript, ended_by="budget"), None
            transcript = replace(
                transcript, usage=transcript.usage + verdict.usage,
                cost_usd=transcript.cost_usd + verdict.cost_usd,
                model_calls=transcript.model_calls + (verdict.usage.total > 0))
        return transcript, combine(checks, verdict, pass_threshold=self.config.pass_threshold)

    async def _graded(self, plan: PlannedRollout,
                      transcript: Transcript) -> GraderVerdict | None:
        """The grader's verdict, its model call paid through the ledger (None: no budget)."""
        assert self.roles.grader is not None
        judge = self.roles.judge
        if judge is None:
            return await self.roles.grader.grade(plan, transcript)
        meter = Meter(self.ledger, self.prices)
        # the judge reads the rendered transcript, the rubric and its instructions
        reservation = await meter.reserve(judge.model, is_free(judge.spec), transcript.messages,
                                          (), self.config.limits.max_tokens, extra_tokens=2048)
        if reservation is None:
            return None
        try:
            verdict = await self.roles.grader.grade(plan, transcript)
        except BaseException:
            self.ledger.settle(reservation, 0.0)
            raise
        meter.settle(reservation, verdict.usage, verdict.cost_usd)
        return verdict

    async def _paraphrased(self, item: PlannedRollout) -> PlannedRollout:
        if self.roles.writer is None or item.mutation.kind != "paraphrase":
            return item
        writer = self.roles.writer
        meter = Meter(self.ledger, self.prices)
        prompt = Message(role="user", content=item.goal.ask + " " + item.persona.aside())
        reservation = await meter.reserve(writer.model, is_free(writer.spec), (prompt,), (),
                                          512, extra_tokens=256)
        if reservation is None:
            return item
        try:
            ask, usage, cost = await paraphrase(writer, item.goal.ask, item.persona, item.seed)
        except GeneratorError as exc:
            self.ledger.settle(reservation, 0.0)
            self.last_errors["writer"] = str(exc)
            self.fallbacks.append(f"rollout {item.index}: the writer failed, so its ask "
                                  "was not paraphrased")
            return item
        meter.settle(reservation, usage, cost)
        return replace(item, goal=replace(item.goal, ask=ask))


__all__ = ["FAILING_IN_A_ROW", "STOP_GRACE_S", "Execution", "Progress", "RolloutWriter",
           "Saturation"]
