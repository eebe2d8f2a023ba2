"""What defines a generation run: its configuration, its identity and its size.

:class:`RunConfig` is built once at the edge (``tracemill generate`` builds it from its
settings) and passed down. From it come the run's *fingerprint* (what the run would do,
not how fast: a resumed run must match it), the summary the runs table keeps, and how
many rollouts a token or money budget plans.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from generator.backends import BackendOptions
from generator.backends._spec import redact_secrets
from generator.budget import Budget
from generator.plan import Plan, PlanOptions
from generator.prices import PriceTable
from generator.records import TokenUsage
from generator.simulate import Limits, is_free

SIMULATED_WORLD = "simulated"
"""The world spec of tracemill's own simulated world (the default)."""


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
    world: str = SIMULATED_WORLD
    """What answers tool calls: ``simulated`` (tracemill's world), ``python:mod:fn`` or an
    ``http(s)://`` endpoint (the team's own staging system; :mod:`generator.worlds`)."""
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


def role_specs(config: RunConfig) -> dict[str, str]:
    """The spec of every role that a model may play."""
    roles = {"agent": config.agent, "person": config.person}
    if config.writer:
        roles["writer"] = config.writer
    if config.judge and config.grader == "judge":
        roles["judge"] = config.judge
    return roles


def model_key(spec: str) -> str | None:
    """Provider-independent model identity of a spec (None for offline parts)."""
    if is_free(spec):
        return None
    model = spec.split(":", 1)[1] if ":" in spec else spec
    return model.split("@", 1)[0].lower()


def same_model_roles(config: RunConfig) -> list[tuple[str, str, str]]:
    """Pairs of roles played by one model: (role, role, model)."""
    seen: dict[str, str] = {}
    pairs = []
    for role, spec in role_specs(config).items():
        key = model_key(spec)
        if key is None:
            continue
        if key in seen:
            pairs.append((seen[key], role, key))
        else:
            seen[key] = role
    return pairs


def fingerprint(config: RunConfig) -> str:
    """Identity of a run: what it would do, not how fast (concurrency, time limit and
    request settings may change when it is resumed). The map is not part of it: a resumed
    run keeps the plan it stored."""
    identity = config_summary(config)
    for key in ("concurrency", "time_limit_s", "backend"):
        identity.pop(key)
    if identity.get("world") == SIMULATED_WORLD:
        identity.pop("world")  # runs started before --world existed stay resumable
    return hashlib.sha256(orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


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
        model_key(config.agent) or config.agent, TokenUsage(MIN_TOKENS_PER_ROLLOUT, 0))
    if floor_cost <= 0:
        return config.max_rollouts
    return max(1, min(config.max_rollouts, math.ceil(budget.limit / floor_cost)))


def _digest(text: str | None) -> str | None:
    return None if text is None else "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _shown(spec: str | None) -> str | None:
    return None if spec is None else redact_secrets(spec)


def config_summary(config: RunConfig) -> dict[str, object]:
    """What the runs table keeps of a run's configuration (texts as hashes)."""
    plan = config.plan or PlanOptions(seed=config.seed)
    backend = config.backend or BackendOptions()
    return {
        "agent": _shown(config.agent), "person": _shown(config.person),
        "writer": _shown(config.writer), "judge": _shown(config.judge),
        "grader": config.grader, "rubric": _digest(config.rubric),
        "system_prompt": _digest(config.system_prompt),
        "tools_file": str(config.tools_file) if config.tools_file else None,
        "world": _shown(config.world),
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


__all__ = ["MIN_TOKENS_PER_ROLLOUT", "SIMULATED_WORLD", "RunConfig", "config_summary",
           "fingerprint", "model_key", "plan_capacity", "plan_summary", "role_specs",
           "same_model_roles"]
