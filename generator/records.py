"""The records a generation run passes between its stages, defined once here.

A run *plans* :class:`PlannedRollout` items over the failure map, *simulates* each one as a
conversation of :class:`Message` between a simulated person (:class:`Persona`), the agent
under test (a :class:`ChatBackend`) and a simulated world answering :class:`ToolCall` from
:class:`ToolSpec` schemas, *grades* it into a :class:`Grade`, and stores it as a
:class:`Rollout`. JSON schemas and tool results are the only free-form values: they are
JSON by nature and stay JSON text or plain mappings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from generator._person_phrases import persona_prose
from processor.coordinates import coordinate_label

JsonSchema = Mapping[str, Any]
"""An OpenAI-style JSON schema object (``{"type": "object", "properties": ...}``)."""

Role = Literal["system", "user", "assistant", "tool"]


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class ToolSpec:
    """One tool the agent may call and the simulated world answers."""

    name: str
    """The function name the agent calls."""
    description: str
    """What the tool does, as offered to the agent."""
    parameters: JsonSchema
    """JSON schema of the arguments (type object)."""
    exemplars: tuple[str, ...] = ()
    """Real results seen in traces (JSON text), used to shape simulated results."""
    source: str = "supplied"
    """Where the schema came from: ``definitions``, ``observed`` (traces) or ``supplied``."""


@dataclass(frozen=True)
class ToolCall:
    """A call the agent asked for."""

    id: str
    """The call id, echoed by the tool result."""
    name: str
    """The tool name (may name a tool that does not exist)."""
    arguments: str
    """Arguments as the model wrote them: JSON text, possibly malformed."""


@dataclass(frozen=True)
class Message:
    """One message of a simulated conversation, provider-neutral."""

    role: Role
    """system, user, assistant or tool."""
    content: str | None = None
    """Text (None for an assistant message that only calls tools)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Calls an assistant message asks for."""
    tool_call_id: str | None = None
    """For a tool message: the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name."""


# --------------------------------------------------------------------------- models


@dataclass(frozen=True)
class ModelRequest:
    """What a backend is asked for: the next assistant message."""

    messages: tuple[Message, ...]
    """The conversation so far, system message first when there is one."""
    tools: tuple[ToolSpec, ...] = ()
    """Tools offered (none for the person, writer and judge roles)."""
    max_tokens: int = 1024
    """Most output tokens."""
    temperature: float | None = None
    """Sampling temperature (None: the backend's default)."""
    seed: int | None = None
    """Sampling seed where the provider supports one; offline backends always use it."""
    logprobs: bool = False
    """Ask for per-token log probabilities where supported."""
    json_output: bool = False
    """Ask for a JSON object as the reply (judges)."""


@dataclass(frozen=True)
class TokenUsage:
    """Tokens of one or more model calls."""

    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Completion tokens."""

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.input_tokens + other.input_tokens,
                          self.output_tokens + other.output_tokens)

    @property
    def total(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class ModelReply:
    """A backend's answer."""

    message: Message
    """The assistant message (text, tool calls or both)."""
    finish_reason: str
    """``stop``, ``tool_calls``, ``length`` or ``content_filter``, normalised over providers."""
    usage: TokenUsage
    """Tokens this call used (as reported, else estimated; see ``usage_estimated``)."""
    model: str
    """The model that answered, as the provider named it."""
    cost_usd: float = 0.0
    """Price of the call from the run's price table (0 for offline backends)."""
    latency_s: float = 0.0
    """Wall time of the call including retries."""
    overhead_s: float = 0.0
    """Time tracemill itself spent on the call (encoding, decoding, accounting)."""
    retries: int = 0
    """Attempts beyond the first (429, 5xx, timeouts)."""
    logprobs: tuple[float, ...] | None = None
    """Per-token log probabilities of the reply, when asked for and given."""
    usage_estimated: bool = False
    """True when the provider reported no usage and tokens were estimated from text."""
    planted: tuple[str, ...] = ()
    """Mistakes an offline agent planted on purpose in this reply (its labels)."""


@runtime_checkable
class ChatBackend(Protocol):
    """A model behind one role (agent, writer, person, judge)."""

    spec: str
    """The spec string that rebuilds it (``openai:gpt-4o-mini``, ``offline``, ...)."""
    model: str
    """The model name it asks for (``offline`` for the seeded agent)."""

    async def complete(self, request: ModelRequest) -> ModelReply:
        """The next assistant message; raises :class:`generator.errors.BackendError`."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class ToolWorld(Protocol):
    """What answers the agent's tool calls in one rollout: the simulated world
    (:class:`generator.world.World`) or a team's own system (``--world``)."""

    def call(self, call: ToolCall) -> WorldEvent:
        """Answer one tool call (never raises for a bad call: answers it)."""
        ...

    @property
    def known_ids(self) -> frozenset[str]:
        """Every identifier the world has shown in a result or holds."""
        ...

    @property
    def mutation_fired(self) -> bool | None:
        """Whether the rollout's planned mutation took effect so far (see
        :attr:`Transcript.mutation_fired`)."""
        ...


# --------------------------------------------------------------------------- situations


@dataclass(frozen=True)
class Cell:
    """What a target or guard rollout aims at: a failure-map situation of one to three
    coordinates, axes by name (unused axes are ``*``)."""

    axis_a: str
    """First axis."""
    value_a: str
    """Its value."""
    axis_b: str = "*"
    """Second axis, or ``*``."""
    value_b: str = "*"
    """Its value, or ``*``."""
    axis_c: str = "*"
    """Third axis, or ``*``."""
    value_c: str = "*"
    """Its value, or ``*``."""
    situation_id: str | None = None
    """The situation's stable id in the failure map (None: a bare cell)."""

    @classmethod
    def of(cls, coordinates: Mapping[str, str], situation_id: str | None = None) -> Cell:
        """The cell fixing ``coordinates`` (one to three axis → value), axes by name."""
        ordered = sorted(coordinates.items())
        if not 1 <= len(ordered) <= 3:
            raise ValueError(f"a cell fixes one to three coordinates, not {len(ordered)}")
        flat = [part for pair in ordered for part in pair]
        flat += ["*"] * (6 - len(flat))
        return cls(flat[0], flat[1], flat[2], flat[3], flat[4], flat[5],
                   situation_id=situation_id)

    def coordinates(self) -> dict[str, str]:
        """The axis → value pairs the cell fixes."""
        pairs = ((self.axis_a, self.value_a), (self.axis_b, self.value_b),
                 (self.axis_c, self.value_c))
        return {axis: value for axis, value in pairs if axis != "*"}

    def label(self) -> str:
        """``tool=refund_order & user_stance=hurried``."""
        return coordinate_label(self.coordinates().items())


@dataclass(frozen=True)
class Persona:
    """A simulated person, sampled once per rollout and kept for every turn."""

    name: str
    """A first name, for the writer's aside."""
    texture: str
    """How they type: plain, lowercase, clipped, run_on, typo, formal, emoji."""
    tone: str
    """polite, curt, sarcastic, frustrated, anxious, friendly."""
    patience: int
    """Unhelpful agent replies tolerated before they leave (1-5)."""
    length: str
    """short, medium or long messages."""
    stance: str
    """The user-stance axis value the rollout aims at (ordinary, hurried, ...)."""

    def aside(self) -> str:
        """The persona as the prose a writer sees, never as labels."""
        return persona_prose(self)


@dataclass(frozen=True)
class Goal:
    """What the simulated person wants, and what they know."""

    ask: str
    """The request in plain words, before the persona's texture is applied."""
    tool: str | None
    """The tool that would serve it (None for a question needing no tool)."""
    facts: Mapping[str, str] = field(default_factory=dict)
    """What the person can tell when asked (``{"order_id": "ORD-4821"}``)."""
    source_ask: str | None = None
    """The production ask it was derived from, if any (lineage)."""


@dataclass(frozen=True)
class Fault:
    """A tool condition scheduled to fire in the simulated world."""

    tool: str
    """The tool it affects (``*``: the first tool called)."""
    condition: str
    """timeout, error, malformed_result, stale_result, permission_denied, not_found."""
    on_call: int = 1
    """Which call of that tool it fires on (1 = first)."""


@dataclass(frozen=True)
class Mutation:
    """How a rollout's world differs from the production conversations it came from."""

    kind: str
    """``world_state`` (a record variant), ``tool_fault``, ``reperson`` (other person and
    stance, same trigger-free failure), ``paraphrase`` or ``explore`` (covering-array row)."""
    detail: str
    """Plain words: ``order ORD-4821 already refunded``, ``timeout on refund_order``."""
    world_state: str = "entity_exists"
    """The world-state axis value the world is built to show."""
    faults: tuple[Fault, ...] = ()
    """Tool faults scheduled for the rollout."""


@dataclass(frozen=True)
class PlannedRollout:
    """One unit of a run's plan: a situation to simulate, fully determined by its seed."""

    index: int
    """Position in the plan (rollouts are keyed by run id and index)."""
    purpose: Literal["target", "explore", "guard"]
    """``target`` (new / persistent / uncertain cells), ``explore`` (the covering array) or
    ``guard`` (a regression check on a fixed cell)."""
    cell: Cell | None
    """The failure-map cell aimed at (None for an exploration row)."""
    cell_status: str | None
    """That cell's status in the map (new, persistent, fixed, ...)."""
    situation: Mapping[str, str]
    """The six axis values the rollout is built to show."""
    seed: int
    """Seed of everything random in this rollout."""
    goal: Goal
    """What the person wants."""
    persona: Persona
    """Who the person is."""
    mutation: Mutation
    """How the world is varied."""
    source_conversations: tuple[str, ...] = ()
    """Production conversation ids it derives from (lineage)."""


# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class WorldEvent:
    """What the simulated world did with one tool call."""

    call_id: str
    """The call answered."""
    tool: str
    """Its tool name."""
    arguments: str
    """Arguments as given (JSON text)."""
    status: str
    """ok, not_found, rejected, refused, unknown_tool, or a fault condition."""
    result: str
    """The result text the agent saw."""
    effect: str | None = None
    """created / updated / deleted / None (read only or failed)."""
    entity_id: str | None = None
    """The record acted on or returned, when there was one."""
    mutated: bool = False
    """True when this answer is where the rollout's planned mutation took effect (the
    record held in its mutated state was read or acted on, or a scheduled fault fired)."""


@dataclass(frozen=True)
class CheckResult:
    """One deterministic conduct check on a rollout."""

    name: str
    """Check name (``claimed_success_after_failure``, ...)."""
    passed: bool
    """False when the agent did the thing the check looks for."""
    reason: str
    """Why, with the turn and the evidence."""
    credit: bool = False
    """True when the agent handled a fault well (counts for it, never against)."""


@dataclass(frozen=True)
class Grade:
    """The verdict on a rollout."""

    reward: float
    """0..1."""
    passed: bool
    """reward >= the pass threshold and no failed conduct check."""
    reason: str
    """One sentence."""
    failure_class: str | None
    """The failing check or the grader's class (None when passed)."""
    markers: tuple[str, ...]
    """Grader markers and credited checks."""
    checks: tuple[CheckResult, ...]
    """Every conduct check, passed or not."""
    labeled_by: str
    """Who decided: ``conduct-checks/1`` plus the grader's stamp (name, version or model,
    rubric hash, settings)."""


@dataclass(frozen=True)
class Transcript:
    """What happened in one simulated conversation."""

    messages: tuple[Message, ...]
    """Every message, system first."""
    events: tuple[WorldEvent, ...]
    """Every tool call the world answered, in order."""
    ended_by: str
    """user_done, user_left, max_turns, call_loop, agent_error, budget."""
    usage: TokenUsage
    """Tokens of every model call of the rollout (all roles)."""
    cost_usd: float
    """Their price."""
    model_calls: int
    """Model calls made (all roles)."""
    planted: tuple[str, ...] = ()
    """Mistakes the offline agent planted (ground truth for the checks)."""
    error: str | None = None
    """The backend error that ended it, if any."""
    finish_reasons: tuple[str, ...] = ()
    """The agent backend's ``finish_reason`` for each agent reply, in order (``stop``,
    ``tool_calls``, ``length`` ...); empty when not recorded. The ``cut_off`` conduct check
    reads it."""
    logprobs: tuple[tuple[float, ...] | None, ...] = ()
    """Per agent reply, its tokens' log probabilities (None where the backend gave none);
    empty unless the run asked for them."""
    retries: int = 0
    """Agent model calls retried (429, 5xx, timeouts) before they succeeded."""
    mutation_fired: bool | None = None
    """Whether the planned mutation took effect (some event has ``mutated``); None when
    the mutation needs no effect in the world (reperson, paraphrase, explore without
    faults). A rollout whose mutation did not fire does not show its situation."""


@dataclass(frozen=True)
class Rollout:
    """A planned rollout as simulated and graded."""

    plan: PlannedRollout
    """What was planned."""
    transcript: Transcript
    """What happened."""
    grade: Grade | None
    """The verdict (None when the rollout could not be graded, e.g. the agent errored)."""
    duration_s: float
    """Wall time."""
