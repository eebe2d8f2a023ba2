"""A generation run: plan a budget over the failure map, simulate, grade, store, report.

:func:`run_generation` is what ``tracemill generate`` calls. It

1. builds the backends of the four roles (agent, person, writer, judge) from their spec
   strings and marks the run degraded (``same_model``) when one model plays two roles;
2. plans (:mod:`generator.plan`) as many rollouts as the budget could pay for, in an
   order whose every prefix respects the shares;
3. resumes the newest unfinished run with the same fingerprint (seed, budget, specs,
   options, plan) instead of starting over, skipping the rollouts it already stored and
   charging their spend to the ledger;
4. runs up to ``concurrency`` conversations at a time on one asyncio loop, grades each
   (conduct checks, then the user's grader) and commits finished rollouts in small
   batches;
5. stops on the first of: the budget is spent, the time limit passed, the squares stop
   filling (``saturation_window`` finished rollouts in a row added no new pair of axis
   values and no new failure), :data:`FAILING_IN_A_ROW` rollouts in a row ended on an
   agent backend error (``agent_failing``) or a grader error (``grader_failing``), the
   plan is done, or an interrupt; and
   stores and returns
   the :class:`~generator.record.RunRecord`.

Everything random comes from the plan items' seeds, so the same seed, store and specs
give the same rollouts with the offline backends (with remote models, what the model
says is up to the model).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import math
import sys
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import duckdb
import orjson
from tqdm import tqdm

from generator.backends import BackendOptions, build_backend
from generator.backends._spec import redact_secrets
from generator.budget import Budget, BudgetLedger
from generator.checks import conduct_checks
from generator.covering import coverage
from generator.errors import BudgetError, GeneratorError
from generator.graders import Grader, GraderVerdict, build_grader, combine
from generator.person import ModelPerson, PersonWriter, TemplatePerson
from generator.plan import Plan, PlanOptions, build_plan, load_plan_inputs
from generator.plan_codec import plan_from_json, plan_to_json
from generator.prices import PriceTable
from generator.record import RunRecord, build_record
from generator.records import (
    ChatBackend,
    Grade,
    Message,
    PlannedRollout,
    Rollout,
    TokenUsage,
    Transcript,
)
from generator.rollout_store import (
    PreviousRun,
    StoredProgress,
    find_resumable,
    finish_run,
    insert_rollouts,
    previous_run,
    rollout_row,
    start_run,
    stored_progress,
    stored_rollouts,
)
from generator.simulate import (
    DEFAULT_SYSTEM_PROMPT,
    Limits,
    Meter,
    is_free,
    simulate,
)
from generator.world import load_tool_file
from tracemill.store import Store

_log = logging.getLogger("tracemill.generator")

_FLUSH_EVERY_S = 0.25
FAILING_IN_A_ROW = 10
"""Rollouts in a row ending on an agent backend error (after its retries), or that the
grader failed on, that stop a run: the endpoint is down or the grader broken, and the rest
of the budget would go the same way."""
_FLUSH_ROWS = 256


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run (its fingerprint is a hash of this and the plan)."""

    agent: str
    """The agent under test: ``offline``, ``python:mod:fn``, ``openai:MODEL``, ..."""
    budget: Budget
    """Rollouts, tokens or US dollars."""
    seed: int = 0
    """Seed of the plan and of every rollout."""
    person: str = "template"
    """The simulated person: ``template`` (offline) or a model spec (``user_model``)."""
    writer: str | None = None
    """A model that paraphrases asks of trigger-free failures (None: no paraphrases)."""
    judge: str | None = None
    """The judge model for ``grader="judge"``."""
    grader: str | None = None
    """``python:mod:fn``, ``judge`` or None (conduct checks only)."""
    rubric: str | None = None
    """The judge's rubric text (None: the default rubric)."""
    system_prompt: str | None = None
    """The agent's system prompt (None: :data:`~generator.simulate.DEFAULT_SYSTEM_PROMPT`)."""
    tools_file: Path | None = None
    """OpenAI-style function schemas that win over the ones inferred from traces."""
    concurrency: int = 32
    """Conversations in flight."""
    time_limit_s: float | None = None
    """Stop starting rollouts after this many seconds."""
    max_rollouts: int = 5_000
    """Most rollouts planned for a token or money budget."""
    saturation_window: int = 250
    """Stop when this many finished rollouts in a row add no new pair and no new failure
    (0: never)."""
    pass_threshold: float = 0.5
    """Grader rewards at or above it pass."""
    limits: Limits = field(default_factory=Limits)
    """Turns, tool rounds, tokens per call."""
    plan: PlanOptions | None = None
    """Plan options (None: defaults with ``seed``)."""
    backend: BackendOptions | None = None
    """Timeouts, retries, concurrency per backend, prices (None: defaults)."""


def _role_specs(config: RunConfig) -> dict[str, str]:
    roles = {"agent": config.agent, "person": config.person}
    if config.writer:
        roles["writer"] = config.writer
    if config.judge and config.grader == "judge":
        roles["judge"] = config.judge
    return roles


def _model_key(spec: str) -> str | None:
    """Provider-independent model identity of a spec (None for offline parts)."""
    if is_free(spec):
        return None
    model = spec.split(":", 1)[1] if ":" in spec else spec
    return model.split("@", 1)[0].lower()


def same_model_roles(config: RunConfig) -> list[tuple[str, str, str]]:
    """Pairs of roles played by one model: (role, role, model)."""
    seen: dict[str, str] = {}
    pairs = []
    for role, spec in _role_specs(config).items():
        key = _model_key(spec)
        if key is None:
            continue
        if key in seen:
            pairs.append((seen[key], role, key))
        else:
            seen[key] = role
    return pairs


def _fingerprint(config: RunConfig) -> str:
    """Identity of a run: what it would do, not how fast (concurrency, time limit and
    request settings may change when it is resumed). The map is not part of it: a resumed
    run keeps the plan it stored."""
    identity = config_summary(config)
    for key in ("concurrency", "time_limit_s", "backend"):
        identity.pop(key)
    return hashlib.sha256(orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


class _Saturation:
    """Notices when finished rollouts stop adding new pairs or new failures."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.seen: set[tuple[str, ...]] = set()
        self.quiet = 0

    def observe(self, rollout: Rollout) -> bool:
        """Record one finished rollout; True once the window passed without news."""
        situation = sorted(rollout.plan.situation.items())
        new = {(a, va, b, vb) for (a, va), (b, vb) in itertools.combinations(situation, 2)}
        if rollout.grade is not None and not rollout.grade.passed:
            cell = rollout.plan.cell.label() if rollout.plan.cell else "explore"
            new.add(("failure", cell, rollout.grade.failure_class or "", ""))
        fresh = new - self.seen
        self.seen |= fresh
        self.quiet = 0 if fresh else self.quiet + 1
        return self.window > 0 and self.quiet >= self.window


class _Roles:
    """The run's backends, closed together."""

    def __init__(self, config: RunConfig, credentials: Mapping[str, str],
                 options: BackendOptions) -> None:
        self.agent: ChatBackend = build_backend(config.agent, role="agent",
                                                credentials=credentials, options=options)
        self.person: PersonWriter
        self.owned: list[ChatBackend] = [self.agent]
        if config.person == "template":
            self.person = TemplatePerson()
        else:
            backend = build_backend(config.person, role="person", credentials=credentials,
                                    options=options)
            self.owned.append(backend)
            self.person = ModelPerson(backend)
        self.writer: ChatBackend | None = None
        if config.writer:
            self.writer = build_backend(config.writer, role="writer",
                                        credentials=credentials, options=options)
            self.owned.append(self.writer)
        judge: ChatBackend | None = None
        self.judge: ChatBackend | None = None
        if config.grader == "judge":
            if not config.judge:
                raise GeneratorError("--grader judge needs --judge MODEL_SPEC (the judge "
                                     "model, e.g. openai:gpt-4o-mini)")
            judge = build_backend(config.judge, role="judge", credentials=credentials,
                                  options=options)
            self.owned.append(judge)
            self.judge = judge
        self.grader: Grader | None = build_grader(config.grader, judge_backend=judge,
                                                  rubric=config.rubric)

    async def aclose(self) -> None:
        for backend in self.owned:
            await backend.aclose()


def _check_prices(config: RunConfig, roles: _Roles, prices: PriceTable) -> None:
    if config.budget.kind != "usd":
        return
    for role, spec in _role_specs(config).items():
        if is_free(spec):
            continue
        model = _model_key(spec) or spec
        if not prices.has(model):
            raise BudgetError(
                f"a money budget needs a price for every model: {role} model {model!r} has "
                "none; add it with --prices FILE ({\"" + model + "\": {\"input\": USD per 1M "
                "tokens, \"output\": ...}}) or give the budget in rollouts or tokens")


FINISHED_BY = frozenset({"plan_done", "budget", "saturated"})
"""Stop reasons that end a run for good; after any other (time limit, an agent or grader
that kept failing, an interrupt) the same command resumes it."""


async def run_generation(
    store: Store,
    config: RunConfig,
    credentials: Mapping[str, str],
    *,
    resume: str | None = None,
    fresh: bool = False,
    progress: bool = True,
) -> RunRecord:
    """Run one generation run to its stop rule and return its record (also stored).

    An unfinished run with the same configuration is resumed (``fresh`` starts a new one
    instead): it simulates the plan it stored, skips the rollouts it already stored and
    charges what it already spent to the budget."""
    started = time.monotonic()
    options = config.backend or BackendOptions()
    prices = options.prices
    roles = _Roles(config, credentials, options)
    try:
        _check_prices(config, roles, prices)
        fingerprint = _fingerprint(config)
        cursor = store.cursor()
        try:
            run_id, previous = _resolve_run(cursor, fingerprint, resume, fresh)
            if previous is None:
                plan = _new_plan(cursor, config, prices)
                start_run(cursor, run_id, fingerprint, config.seed, config_summary(config),
                          plan_summary(plan), plan_to_json(plan))
            else:
                plan = plan_from_json(previous.plan_body)
            so_far = stored_progress(cursor, run_id)
        finally:
            cursor.close()
        ledger = BudgetLedger(config.budget)
        _charge_earlier(ledger, so_far, previous)
        execution = _Execution(store, config, roles, plan, ledger, prices, run_id,
                               so_far.indices, progress)
        stop_reason = await execution.run()
        cursor = store.cursor()
        try:
            stored = stored_rollouts(cursor, run_id)
            record = build_record(
                run_id=run_id, resumed=previous is not None, config=config, plan=plan,
                ledger=ledger.summary(), stop_reason=stop_reason,
                written=len(execution.finished), stored=stored,
                coverage=coverage(plan.grid, [r.situation for r in stored]),
                same_model=same_model_roles(config), lost=execution.lost,
                fallbacks=execution.fallbacks, errors=execution.last_errors,
                duration_s=time.monotonic() - started,
                default_system_prompt=config.system_prompt is None,
                cut_by_budget=execution.cut_by_budget,
            )
            finish_run(cursor, run_id, record, finished=stop_reason in FINISHED_BY)
        finally:
            cursor.close()
        return record
    finally:
        await roles.aclose()


def _new_plan(cursor: duckdb.DuckDBPyConnection, config: RunConfig,
              prices: PriceTable) -> Plan:
    tools = load_tool_file(config.tools_file) if config.tools_file else None
    inputs = load_plan_inputs(cursor, tools=tools)
    return build_plan(inputs, plan_capacity(config, prices),
                      config.plan or PlanOptions(seed=config.seed))


def _charge_earlier(ledger: BudgetLedger, so_far: StoredProgress,
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


MIN_TOKENS_PER_ROLLOUT = 400
"""A floor on the tokens one rollout uses (system prompt, ask, tool schemas and one reply
are more), so that a token or money budget never plans fewer rollouts than it can pay."""


def plan_capacity(config: RunConfig, prices: PriceTable) -> int:
    """How many rollouts to plan: the budget in rollouts, else as many as the budget
    could pay at :data:`MIN_TOKENS_PER_ROLLOUT` each, at most ``max_rollouts``."""
    budget = config.budget
    if budget.kind == "rollouts":
        return int(budget.limit)
    if budget.kind == "tokens":
        return max(1, min(config.max_rollouts, math.ceil(budget.limit / MIN_TOKENS_PER_ROLLOUT)))
    floor_cost = 0.0 if is_free(config.agent) else prices.cost(
        _model_key(config.agent) or config.agent, TokenUsage(MIN_TOKENS_PER_ROLLOUT, 0))
    if floor_cost <= 0:
        return config.max_rollouts
    return max(1, min(config.max_rollouts, math.ceil(budget.limit / floor_cost)))


def _digest(text: str | None) -> str | None:
    return None if text is None else "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:12]


def config_summary(config: RunConfig) -> dict[str, object]:
    """What the runs table keeps of a run's configuration (texts as hashes)."""
    plan = config.plan or PlanOptions(seed=config.seed)
    backend = config.backend or BackendOptions()
    def shown(spec: str | None) -> str | None:
        return None if spec is None else redact_secrets(spec)

    return {
        "agent": shown(config.agent), "person": shown(config.person),
        "writer": shown(config.writer), "judge": shown(config.judge),
        "grader": config.grader, "rubric": _digest(config.rubric),
        "system_prompt": _digest(config.system_prompt),
        "tools_file": str(config.tools_file) if config.tools_file else None,
        "budget": {"kind": config.budget.kind, "limit": config.budget.limit},
        "seed": config.seed, "concurrency": config.concurrency,
        "time_limit_s": config.time_limit_s, "max_rollouts": config.max_rollouts,
        "saturation_window": config.saturation_window,
        "pass_threshold": config.pass_threshold,
        "limits": {"max_turns": config.limits.max_turns,
                   "max_tool_rounds": config.limits.max_tool_rounds,
                   "max_tokens": config.limits.max_tokens,
                   "temperature": config.limits.temperature},
        "plan": {"exploration_share": plan.exploration_share,
                 "guard_share": plan.guard_share, "fault_rate": plan.fault_rate,
                 "prefer_success": plan.prefer_success, "paraphrase": plan.paraphrase},
        "backend": {"timeout_s": backend.timeout_s, "max_retries": backend.max_retries,
                    "concurrency": backend.concurrency},
    }


def plan_summary(plan: Plan) -> dict[str, object]:
    """What the runs table keeps of a plan."""
    return {"items": len(plan.items), "shares": dict(plan.shares),
            "pairs_planned": plan.pairs_planned, "pairs_in_grid": plan.pairs_in_grid,
            "notes": list(plan.notes), "tools": [t.name for t in plan.tools],
            "fingerprint": plan.fingerprint}


def _resolve_run(cursor: duckdb.DuckDBPyConnection, fingerprint: str, resume: str | None,
                 fresh: bool) -> tuple[str, PreviousRun | None]:
    """The run to work on: ``resume``, else the newest unfinished run with this
    configuration (unless ``fresh``), else a new id."""
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


class _Execution:
    """The concurrent part of a run: start, simulate, grade, commit."""

    def __init__(self, store: Store, config: RunConfig, roles: _Roles, plan: Plan,
                 ledger: BudgetLedger, prices: PriceTable, run_id: str,
                 done: frozenset[int], progress: bool) -> None:
        self.store = store
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
        self.pending: list[dict[str, object]] = []
        self.saturation = _Saturation(config.saturation_window)
        self.system_prompt = config.system_prompt or DEFAULT_SYSTEM_PROMPT
        self.agent_shown = redact_secrets(config.agent)
        self.bar = tqdm(total=len(plan.items), initial=len(done), unit="rollout",
                        disable=not (progress and sys.stderr.isatty()), file=sys.stderr,
                        desc="generate")
        self.outcomes: Counter[str] = Counter()
        self.agent_failures = 0
        """Finished rollouts in a row that ended on an agent backend error."""
        self.grader_failures = 0
        """Finished rollouts in a row that the grader failed to grade."""
        self.cut_by_budget = 0
        """Rollouts the budget cut before the agent spoke (not stored)."""
        self.budget_hit = False
        """Set when a rollout could not pay for its next model call: start no more."""

    async def run(self) -> str:
        deadline = (time.monotonic() + self.config.time_limit_s
                    if self.config.time_limit_s else None)
        stop_reason = "plan_done"
        in_flight: set[asyncio.Task[None]] = set()
        flusher = asyncio.create_task(self._flush_periodically())
        saturated = asyncio.Event()
        try:
            for item in self.plan.items:
                if item.index in self.done:
                    continue
                if deadline is not None and time.monotonic() >= deadline:
                    stop_reason = "time_limit"
                    break
                if saturated.is_set():
                    stop_reason = "saturated"
                    break
                if self.budget_hit:
                    stop_reason = "budget"
                    break
                if self.agent_failures >= FAILING_IN_A_ROW:
                    stop_reason = "agent_failing"
                    break
                if self.grader_failures >= FAILING_IN_A_ROW:
                    stop_reason = "grader_failing"
                    break
                while len(in_flight) >= self.config.concurrency:
                    _done, in_flight = await asyncio.wait(
                        in_flight, return_when=asyncio.FIRST_COMPLETED)
                if self.ledger.exhausted or not self.ledger.try_start_rollout():
                    stop_reason = "budget"
                    break
                in_flight.add(asyncio.create_task(self._one(item, saturated)))
            if in_flight:
                await asyncio.wait(in_flight)
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
            flusher.cancel()
            await self._flush()
            self.bar.close()
        return stop_reason

    async def _one(self, item: PlannedRollout, saturated: asyncio.Event) -> None:
        began = time.perf_counter()
        try:
            plan = await self._paraphrased(item)
            transcript = await simulate(
                plan, tools=self.plan.tools, agent=self.roles.agent,
                person=self.roles.person, ledger=self.ledger, prices=self.prices,
                system_prompt=self.system_prompt, limits=self.config.limits)
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
        self.agent_failures = self.agent_failures + 1 if ended_by == "agent_error" else 0
        grader_failed = rollout.grade is None and (rollout.transcript.error or "").startswith(
            "grader:")
        self.grader_failures = self.grader_failures + 1 if grader_failed else 0
        self.pending.append(rollout_row(self.run_id, self.agent_shown, rollout))
        self.bar.update(1)
        if self.saturation.observe(rollout):
            saturated.set()
        if len(self.pending) >= _FLUSH_ROWS:
            await self._flush()

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
        from generator.person import paraphrase

        writer = self.roles.writer
        meter = Meter(self.ledger, self.prices)
        prompt = Message(role="user", content=item.goal.ask + " " + item.persona.aside())
        reservation = await meter.reserve(writer.model, is_free(writer.spec), (prompt,), (), 512,
                                    extra_tokens=256)
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

    async def _flush_periodically(self) -> None:
        while True:
            await asyncio.sleep(_FLUSH_EVERY_S)
            if self.pending:
                await self._flush()

    async def _flush(self) -> None:
        # The pending rows are taken here, on the event loop: taken on the worker thread,
        # a row appended by a rollout finishing meanwhile could land in the list already
        # copied for the insert, and be lost without a trace.
        rows, self.pending = self.pending, []
        if rows:
            await asyncio.to_thread(self._insert, rows)

    def _insert(self, rows: list[dict[str, object]]) -> None:
        cursor = self.store.cursor()
        try:
            insert_rollouts(cursor, rows)
        finally:
            cursor.close()
        _log.debug("stored rollouts", extra={"fields": {"run_id": self.run_id,
                                                        "rollouts": len(rows)}})


__all__ = ["RunConfig", "config_summary", "plan_summary", "run_generation",
           "same_model_roles"]
