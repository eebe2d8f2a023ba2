"""A production-shaped stream built from tau2-bench's airline and telecom worlds.

:func:`tau2_stream` returns the serialized OTLP export requests a support agent serving
two tau2 domains would send over two model versions (the older first), and the planted
truth: which situations were planted, with which status, the coordinates a correct
processor gives them, and their member conversations.

**Conversations.** Each one has an *intent* modelled on tau2's gold action sequences
(cancel a reservation, add a bag, enable roaming, refuel data, pay a bill, ...): the
person asks in one of many phrasings (:mod:`tests.support.tau2_phrases`) framed by a
stance, the agent makes its tool calls (two to five: lookups, in 35% of conversations one
more lookup, then usually one state-changing action, and retries; fewer when a failure
stops it early) and replies. Arguments come from the domains' real records, and every
call is replayed against the REAL tau2 environment (:mod:`tests.support.tau2_world`: a
fresh copy of its database per conversation, after an optional *prelude* of calls that
sets the world up), so results are tau2's JSON bodies and its ``Error: ...`` strings; a
body reporting a failure sits on an OK span.

**Perturbations** (:class:`Perturbation`) change the world or the call, never the answer:

- ``missing``: an identifier argument mistyped (a character of a reservation id, a digit
  of a phone number, ...) → tau2's own not-found error; half the time the agent asks, the
  person corrects it and the call is retried (a new agent run, a real success);
- ``already``: the prelude performs the action first (roaming enabled before enabling
  it, a payment request already sent) → tau2's own "already" answer;
- ``timeout`` / ``permission_denied``: the call never reaches the world; its span fails
  with an ``error.type`` (``httpx.ReadTimeout``, ``PermissionDeniedError``, ...). A
  timed-out call is retried 60% of the time (and then succeeds 75% of the time); a denied
  one is handed to ``transfer_to_human_agents`` 35% of the time.

Calls after an unrecovered failure are not made; a real tau2 error that nobody planted
stops the conversation in the same way (it is then part of the background).

**Coordinates** (what :attr:`Expected.coordinates` holds, what a correct processor
gives): ``tool`` is the *focal* tool: the first call whose result is not a plain success
(span error, ``Error: ...`` body, an "already ..." answer), else the state-changing
action, else the last lookup; ``tool_condition`` of that call (``timeout``,
``permission_denied``, ``not_found``, ``error``; ``success`` when nothing failed; not
stated for "already" answers); ``world_state`` ``missing`` or ``already_acted_on`` when
the focal result says so; ``user_stance`` the label of the opening used.

**Planted situations** (:class:`PlantedSituation`), drawn per seed from the domains'
tools: one new (fails ~5% in v1, ~70% in v2), one persistent (~60% in both), one fixed
(~65% → ~5%), further ones cycling through the statuses in a shuffled order (five give two
of two statuses and one of the third), of the kinds (tool x world_state),
(tool x tool_condition), (tool x user_stance), (world_state x user_stance), each kind at
least once per seed. Every member is built to show the planted coordinates; no other
conversation does (background conversations that would are drawn again);
``already_acted_on`` is planted at most twice per seed (only three tau2 actions answer
"already"). Stance members
open with texts from ``bench/data/stance/test.jsonl`` of that label (never ``dev.jsonl``)
when the file exists, else with :data:`~tests.support.tau2_phrases.STANCE_FRAMINGS`.

**Background.** Everything else fails at a base rate drawn per intent in 5-12% whatever
happened in it, and 25% of it carries a perturbation of its own (not found, already,
timeout, permission, on varied tools), so every cell has failures that explain nothing.
5% of background conversations are ungraded; planted members are always graded.

**Outcomes and layouts** as :mod:`tests.support.tau2_spans` writes them: GenAI
conventions with a ``gen_ai.evaluation.result`` event, or OpenInference flattened
attributes with a ``reward`` attribute, mixed within a stream (55% / 45%), emitted
through the real OpenTelemetry SDK and encoded with its OTLP encoder.

Deterministic for a seed. Needs the ``tau2`` extra.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tests.support import tau2
from tests.support.tau2_phrases import (
    ASKS,
    INTERIM,
    REPLIES,
    RETRY_TURNS,
    STANCE_FRAMINGS,
)
from tests.support.tau2_spans import LAYOUTS, Emitter, Rendered, Turn
from tests.support.tau2_world import (
    INTENTS,
    Intent,
    World,
    eligible,
    extra_lookup,
    id_key,
    mistype,
)

__all__ = ["STANCE_DATA", "STANCE_TEST_FILE", "Expected", "Perturbation", "PlantedSituation",
           "Tau2Stream", "tau2_stream"]

STANCE_DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "stance"
STANCE_TEST_FILE = STANCE_DATA / "test.jsonl"
"""Held-out user openings with stance labels (the default; the dev files are never read
unless asked for)."""

VERSIONS = ("v1", "v2")
STATUS_RATES: dict[str, tuple[float, float]] = {
    "new": (0.05, 0.70), "persistent": (0.60, 0.60), "fixed": (0.65, 0.05)}
"""Fail rate of a planted situation's members in (v1, v2), by status."""
KINDS = ("tool_world", "tool_condition", "tool_stance", "world_stance")
"""Kinds of planted situation: which two axes define it."""
_STANCES = ("adversarial", "frustrated", "hurried", "mistaken", "unsure", "conflicting")
_BACKGROUND_STANCES = (("ordinary", 0.52), ("frustrated", 0.09), ("hurried", 0.09),
                       ("unsure", 0.08), ("mistaken", 0.08), ("adversarial", 0.07),
                       ("conflicting", 0.07))
_BACKGROUND_PERTURBED = 0.25
_BACKGROUND_KINDS = (("missing", 0.45), ("timeout", 0.25), ("permission_denied", 0.12),
                     ("already", 0.18))
_UNGRADED = 0.05
_EXTRA_LOOKUP = 0.35
_GENAI_SHARE = 0.55
_SERVICES = {"airline": "skyway-support", "telecom": "telco-care"}
_SYSTEMS = {
    "airline": "You are an airline customer service agent. Follow the airline policy: verify "
               "the user, confirm actions before making changes, never invent reservation "
               "details.",
    "telecom": "You are a telecom technical support agent. Identify the customer, check the "
               "line, and only change services the customer owns.",
}
_FAULTS = {
    "timeout": (("httpx.ReadTimeout", "upstream {service} did not answer within 30s"),
                ("TimeoutError", "{tool} timed out after 20000 ms"),
                ("asyncio.TimeoutError", "deadline exceeded calling {tool}")),
    "permission_denied": (
        ("PermissionDeniedError", "403 Forbidden: role 'support-tier1' may not call {tool}"),
        ("PermissionError", "permission denied for {tool} on this account"),
        ("AuthorizationError", "Unauthorized: token lacks scope {tool}:write")),
}


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Perturbation:
    """What was changed in one conversation."""

    kind: str
    """missing, already, timeout or permission_denied."""
    tool: str
    """The tool whose call was perturbed."""


@dataclass(frozen=True)
class Expected:
    """What was planted in one conversation and what a correct reading gives."""

    version: str
    """Its model version."""
    domain: str
    """airline or telecom."""
    intent: str
    """What the person wanted (a key of :data:`~tests.support.tau2_phrases.ASKS`)."""
    layout: str
    """genai or openinference."""
    coordinates: Mapping[str, str]
    """The axes a correct processor must give (``tool`` always; ``tool_condition``,
    ``world_state``, ``user_stance`` when the construction fixes them)."""
    tools: tuple[str, ...]
    """Every tool called, in order of first call."""
    perturbation: Perturbation | None
    """What was changed, if anything."""
    passed: bool | None
    """The outcome; None when ungraded."""
    situation: str | None
    """The planted situation it belongs to, if any."""


@dataclass(frozen=True)
class PlantedSituation:
    """One planted situation and its members."""

    situation_id: str
    """``p1``, ``p2``, ... within the stream."""
    status: str
    """new, persistent or fixed: what the latest version should be reported as."""
    kind: str
    """One of :data:`KINDS`."""
    coordinates: tuple[tuple[str, str], ...]
    """The (axis, value) pairs a correct processor names it by, in axis order."""
    fail_rates: tuple[float, float]
    """Planted fail rate in (v1, v2)."""
    members: tuple[str, ...]
    """Its conversation ids (both versions)."""
    failed: tuple[str, ...]
    """The members that failed."""
    members_by_version: Mapping[str, tuple[str, ...]]
    """Members per model version."""

    @property
    def label(self) -> str:
        """``tool=cancel_reservation & world_state=missing``."""
        return " & ".join(f"{axis}={value}" for axis, value in self.coordinates)


@dataclass(frozen=True)
class Tau2Stream:
    """A stream built from tau2's worlds and what was planted in it."""

    requests: list[bytes]
    """Serialized ``ExportTraceServiceRequest``s in export order, each ≤ 512 spans."""
    log_requests: list[bytes]
    """Serialized ``ExportLogsServiceRequest``s (none: content travels in span attributes)."""
    truth: tuple[PlantedSituation, ...]
    """The planted situations."""
    spans: int
    """Spans in all requests."""
    conversations: int
    """Conversations over both versions."""
    expected: dict[str, Expected]
    """Per conversation id: what was planted and the expected coordinates."""
    versions: tuple[str, str] = VERSIONS
    """(previous, latest) model versions."""
    stance_source: str = "own phrasing"
    """Where stance openings came from: the held-out test file or own phrasing."""
    replays: int = 0
    """Conversations actually replayed against tau2 (the rest came from the cache)."""
    notes: tuple[str, ...] = field(default=())
    """What could not be planted as asked, if anything."""


# --------------------------------------------------------------------------- one conversation


@dataclass(frozen=True)
class _Draft:
    """A conversation before rendering."""

    intent: Intent
    """What the person wanted."""
    turns: tuple[Turn, ...]
    """The tool calls as made, with tau2's (or the fault's) answers."""
    ask: str
    """The first user message: the stance opening joined to the ask."""
    stance: str
    """The stance label of the opening."""
    perturbation: Perturbation | None
    """What was changed, if anything."""
    coordinates: dict[str, str]
    """What a correct processor reads (:func:`_read`)."""
    tools: tuple[str, ...]
    """Tools called, in order of first call."""
    outcome_word: str
    """How it ended: done, looked_up, not_found, already, failed or transferred."""
    detail: str
    """What the reply quotes (an id, an answer, an error message)."""


def _is_failure(turn: Turn) -> bool:
    if turn.fault is not None:
        return True
    text = turn.result or ""
    return text.startswith("Error:") or "already" in text.lower()


def _read(turns: Sequence[Turn], intent: Intent, stance: str) -> dict[str, str]:
    """The coordinates a correct processor gives (see the module)."""
    failed = next((turn for turn in turns if _is_failure(turn)), None)
    coordinates = {"user_stance": stance}
    if failed is not None:
        coordinates["tool"] = failed.tool
        text = (failed.result or "").lower()
        if failed.fault is not None:
            error_type = failed.fault[0]
            coordinates["tool_condition"] = "timeout" if "imeout" in error_type \
                else "permission_denied"
        elif "not found" in text:
            coordinates["tool_condition"] = "not_found"
            coordinates["world_state"] = "missing"
        elif "already" in text:
            coordinates["world_state"] = "already_acted_on"
        else:
            coordinates["tool_condition"] = "error"
        return coordinates
    tools = [turn.tool for turn in turns]
    if intent.action in tools:
        coordinates["tool"] = str(intent.action)
    elif tools:
        coordinates["tool"] = tools[-1]
    else:
        coordinates["tool"] = "no_tool"
    coordinates["tool_condition"] = "success" if tools else "none"
    return coordinates


class _Builder:
    """Drafts conversations: draws from one seeded stream, replays through the world."""

    def __init__(self, seed: int, world: World, openings: Mapping[str, Sequence[
            tuple[str, str]]]) -> None:
        self.rng = random.Random(f"tracemill-tau2:{seed}:conversations")
        self.world = world
        self.openings = openings

    def opening(self, stance: str, domain: str, ask: str) -> str:
        rng = self.rng
        pool = self.openings.get(stance)
        if pool:
            same = [text for d, text in pool if d == domain]
            text = rng.choice(same) if same and rng.random() < 0.5 else rng.choice(pool)[1]
        else:
            text = rng.choice(STANCE_FRAMINGS[stance])
        if not text:
            return ask
        return f"{text} {ask}" if rng.random() < 0.6 else f"{ask} {text}"

    def draft(self, intent: Intent, stance: str, kind: str | None,
              tool: str | None = None) -> _Draft | None:
        """One conversation of ``intent``; ``kind`` perturbs the first call of ``tool``
        (any eligible call when None). None when the intent cannot take it."""
        rng = self.rng
        db = self.world.pristine[intent.domain]
        facts, prelude, calls = intent.build(rng, db)
        if rng.random() < _EXTRA_LOOKUP:
            calls = extra_lookup(rng, db, intent, facts, calls)
        target: int | None = None
        if kind is not None:
            spots = [i for i in eligible(kind, calls, intent)
                     if tool is None or calls[i][0] == tool]
            if not spots:
                return None
            target = spots[0] if tool is not None else rng.choice(spots)
        plan: list[tuple[str, dict[str, Any], str | None]] = []  # tool, args, fault
        said: dict[int, tuple[str, str]] = {}
        transferred = False
        if kind == "already" and target is not None:
            prelude = [*prelude, calls[target]]
        for index, (name, arguments) in enumerate(calls):
            if index != target or kind == "already":
                plan.append((name, arguments, None))
                continue
            if kind == "missing":
                key = id_key(arguments)
                assert key is not None
                wrong = {**arguments, key: mistype(rng, key, str(arguments[key]))}
                plan.append((name, wrong, None))
                if rng.random() < 0.5:
                    break
                said[len(plan)] = (rng.choice(RETRY_TURNS).format(value=arguments[key]),
                                   rng.choice(REPLIES["not_found"]).format(value=wrong[key]))
                plan.append((name, arguments, None))
                continue
            assert kind is not None
            plan.append((name, arguments, kind))
            if kind == "timeout" and rng.random() < 0.6:
                plan.append((name, arguments, None if rng.random() < 0.75 else kind))
                if plan[-1][2] is None:
                    continue
            if kind == "permission_denied" and rng.random() < 0.35:
                plan.append(("transfer_to_human_agents", {
                    "summary": f"Customer needs {intent.name.replace('_', ' ')}; "
                               f"{name} was refused for my role."}, None))
                transferred = True
            break
        real = [(name, arguments) for name, arguments, fault in plan if fault is None]
        replies = iter(self.world.replay(intent.domain, prelude, real))
        turns: list[Turn] = []
        for position, (name, arguments, fault) in enumerate(plan):
            arguments_text = orjson.dumps(arguments).decode()
            before = said.get(position)
            if fault is not None:
                error_type, message = rng.choice(_FAULTS[fault])
                message = message.format(tool=name, service=_SERVICES[intent.domain])
                turns.append(Turn(name, arguments_text, f"{error_type}: {message}",
                                  (error_type, message), None, None))
                continue
            reply = next(replies)
            turns.append(Turn(name, arguments_text, reply.content, None,
                              before[0] if before else None, before[1] if before else None))
            if reply.error and (position + 1) not in said:
                break  # the agent stops at an error it cannot recover from
        ask = rng.choice(ASKS[intent.name]).format(**facts)
        word, detail = self._ending(turns, transferred)
        coordinates = _read(turns, intent, stance)
        tools = tuple(dict.fromkeys(turn.tool for turn in turns))
        perturbation = Perturbation(kind, calls[target][0]) \
            if kind is not None and target is not None else None
        return _Draft(intent, tuple(turns), self.opening(stance, intent.domain, ask), stance,
                      perturbation, coordinates, tools, word, detail)

    @staticmethod
    def _ending(turns: Sequence[Turn], transferred: bool) -> tuple[str, str]:
        if transferred:
            return "transferred", ""
        last = turns[-1]
        text = last.result or ""
        if last.fault is not None:
            return "failed", last.fault[1]
        if "already" in text.lower():
            return "already", text.removeprefix("Error: ")
        if text.startswith("Error:") and "not found" in text:
            return "not_found", orjson.loads(last.arguments).get(
                id_key(orjson.loads(last.arguments)) or "", "that")
        if text.startswith("Error:"):
            return "failed", text.removeprefix("Error: ")
        return "done", last.tool.replace("_", " ") + " went through"

    def reply(self, draft: _Draft, passed: bool | None) -> str:
        rng = self.rng
        word = draft.outcome_word
        if word == "done" and draft.intent.action is None:
            word = "looked_up"
        template = rng.choice(REPLIES[word])
        summary = draft.detail if word != "looked_up" else "the details are on your record"
        if passed is False and word in ("done", "looked_up") and rng.random() < 0.4:
            summary += " (and I've also waived every fee on your account)"
        return template.format(summary=summary, value=draft.detail, detail=draft.detail)


# --------------------------------------------------------------------------- planting


@dataclass(frozen=True)
class _Plan:
    """A situation to plant, before its members are built."""

    situation_id: str
    """p1, p2, ..."""
    status: str
    """new, persistent or fixed."""
    kind: str
    """One of :data:`KINDS`."""
    coordinates: tuple[tuple[str, str], ...]
    """(axis, value) pairs, in axis order."""
    tool: str | None
    """The focal tool, for the kinds that fix one."""
    world: str | None
    """missing or already_acted_on, for the kinds that fix one."""
    condition: str | None
    """timeout or permission_denied, for (tool x tool_condition)."""
    stance: str | None
    """The stance label, for the kinds that fix one."""


def _tools_with(world: World, kind: str) -> list[tuple[str, Intent]]:
    """(tool, intent) pairs where a perturbation of ``kind`` on ``tool`` is possible."""
    found = []
    for intent in INTENTS:
        calls = world.shape(intent)
        for index in eligible(kind, calls, intent):
            found.append((calls[index][0], intent))
    return found


def _choose_plans(rng: random.Random, count: int, source: World) -> list[_Plan]:
    """``count`` planted situations: new, persistent, fixed, then the other statuses in
    turn from a shuffled order (5 gives two of two statuses), each of the four kinds at
    least once (when count >= 4), on distinct tools and stances. ``already_acted_on`` is
    planted at most twice: only three tau2 actions answer "already", and a third plan on
    it would leave a (world_state x user_stance) plan a single tool, another kind."""
    extra = ["new", "persistent", "fixed"]
    rng.shuffle(extra)
    statuses = ["new", "persistent", "fixed"] + [extra[i % 3] for i in range(max(0, count - 3))]
    rng.shuffle(statuses)
    kinds = list(KINDS) + [rng.choice(KINDS) for _ in range(max(0, count - len(KINDS)))]
    rng.shuffle(kinds)
    used_tools: set[str] = set()
    used_stances: set[str] = set()
    already = 0
    plans: list[_Plan] = []
    for number, (status, kind) in enumerate(zip(statuses, kinds[:count], strict=False), 1):
        tool = world = condition = stance = None
        if kind in ("tool_stance", "world_stance"):
            stance = rng.choice([s for s in _STANCES if s not in used_stances])
            used_stances.add(stance)
        if kind in ("tool_world", "world_stance"):
            world = rng.choice(("missing", "missing", "already_acted_on"))
            if world == "already_acted_on":
                already += 1
                world = world if already <= 2 else "missing"
        if kind == "tool_world":
            pairs = _tools_with(source, "missing" if world == "missing" else "already")
            tool = rng.choice(sorted({t for t, _ in pairs} - used_tools))
        elif kind == "tool_condition":
            condition = rng.choice(("timeout", "permission_denied"))
            pairs = _tools_with(source, condition)
            tool = rng.choice(sorted({t for t, _ in pairs} - used_tools - {
                "transfer_to_human_agents"}))
        elif kind == "tool_stance":
            actions = {i.action for i in INTENTS if i.action} - used_tools
            tool = rng.choice(sorted(a for a in actions if a))
        if tool:
            used_tools.add(tool)
        coordinates = {"tool": tool, "world_state": world, "tool_condition": condition,
                       "user_stance": stance}
        plans.append(_Plan(f"p{number}", status, kind,
                           tuple(sorted((a, v) for a, v in coordinates.items() if v)),
                           tool, world, condition, stance))
    return plans


def _matches(coordinates: Mapping[str, str], plan: _Plan) -> bool:
    return all(coordinates.get(axis) == value for axis, value in plan.coordinates)


def _load_openings(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Stance label → (domain, text) from the held-out stance file (retail left out)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = orjson.loads(line)
        if row.get("domain") == tau2.HELD_OUT_DOMAIN:
            continue
        found.setdefault(str(row["stance"]), []).append((str(row.get("domain")),
                                                         str(row["text"])))
    return found


def _pick(rng: random.Random, weighted: Sequence[tuple[str, float]]) -> str:
    names = [name for name, _ in weighted]
    return rng.choices(names, weights=[w for _, w in weighted])[0]


def tau2_stream(seed: int, conversations: int = 3000, *, planted: int = 5,
                members_per_version: int | None = None,
                stance_file: Path | Sequence[Path] | None = STANCE_TEST_FILE) -> Tau2Stream:
    """A production-shaped stream of ``conversations`` over two model versions.

    ``planted`` situations (at least 3: one new, one persistent, one fixed) of
    ``members_per_version`` conversations per version each (default: 2.5% of a version,
    at least 20). ``stance_file``: the stance openings (one file or several
    together; None or absent: own phrasing). Deterministic for ``seed``; see the module
    for what is built.
    """
    if planted < 3:
        raise ValueError("plant at least 3 situations (new, persistent, fixed)")
    per_version = conversations // 2
    members = members_per_version or max(20, round(0.025 * per_version))
    if planted * members > per_version * 0.6:
        raise ValueError(f"{planted} situations of {members} members do not fit in "
                         f"{per_version} conversations per version")
    world = World()
    openings: dict[str, list[tuple[str, str]]] = {}
    source = "own phrasing"
    files = [stance_file] if isinstance(stance_file, Path) else list(stance_file or ())
    if files and all(path.exists() for path in files):
        for path in files:
            for label, texts in _load_openings(path).items():
                openings.setdefault(label, []).extend(texts)
        source = "+".join(path.name for path in files)
    rng = random.Random(f"tracemill-tau2:{seed}:plan")
    plans = _choose_plans(rng, planted, world)
    builder = _Builder(seed, world, openings)
    base_rates = {intent.name: rng.uniform(0.05, 0.12) for intent in INTENTS}
    emitter = Emitter(seed)
    expected: dict[str, Expected] = {}
    member_ids: dict[str, dict[str, list[str]]] = {p.situation_id: {v: [] for v in VERSIONS}
                                                   for p in plans}
    failed_ids: dict[str, list[str]] = {p.situation_id: [] for p in plans}
    notes: list[str] = []
    for version_index, version in enumerate(VERSIONS):
        queue: list[tuple[_Draft, _Plan | None]] = []
        for plan in plans:
            for _ in range(members):
                draft = _planted_draft(builder, plan, plans)
                if draft is None:
                    notes.append(f"{plan.situation_id}: a member could not be built")
                    continue
                queue.append((draft, plan))
        while len(queue) < per_version:
            queue.append((_background_draft(builder, plans), None))
        rng.shuffle(queue)
        for draft, owner in queue:
            conversation_id = f"{draft.intent.domain[:3]}-{rng.getrandbits(64):016x}"
            rate = STATUS_RATES[owner.status][version_index] if owner else \
                base_rates[draft.intent.name]
            passed: bool | None = rng.random() >= rate
            if owner is None and rng.random() < _UNGRADED:
                passed = None
            layout = LAYOUTS[0] if rng.random() < _GENAI_SHARE else LAYOUTS[1]
            interim = tuple(
                rng.choice(INTERIM["action" if turn.tool == draft.intent.action else "lookup"])
                if rng.random() < 0.5 else None for turn in draft.turns)
            emitter.emit(Rendered(
                conversation_id=conversation_id, service=_SERVICES[draft.intent.domain],
                version=version, layout=layout, system=_SYSTEMS[draft.intent.domain],
                ask=draft.ask, turns=draft.turns, interim=interim,
                reply=builder.reply(draft, passed), passed=passed, evaluation="task_success"))
            expected[conversation_id] = Expected(
                version=version, domain=draft.intent.domain, intent=draft.intent.name,
                layout=layout, coordinates=dict(draft.coordinates), tools=draft.tools,
                perturbation=draft.perturbation, passed=passed,
                situation=owner.situation_id if owner else None)
            if owner is not None:
                member_ids[owner.situation_id][version].append(conversation_id)
                if passed is False:
                    failed_ids[owner.situation_id].append(conversation_id)
    emitter.close()
    requests = list(emitter.requests(seed))
    truth = tuple(PlantedSituation(
        situation_id=p.situation_id, status=p.status, kind=p.kind, coordinates=p.coordinates,
        fail_rates=STATUS_RATES[p.status],
        members=tuple(member_ids[p.situation_id]["v1"] + member_ids[p.situation_id]["v2"]),
        failed=tuple(failed_ids[p.situation_id]),
        members_by_version={v: tuple(ids) for v, ids in member_ids[p.situation_id].items()})
        for p in plans)
    return Tau2Stream(requests=requests, log_requests=[], truth=truth,
                      spans=len(emitter.spans), conversations=len(expected),
                      expected=expected, stance_source=source, replays=world.replays,
                      notes=tuple(dict.fromkeys(notes)))


def _planted_draft(builder: _Builder, plan: _Plan, plans: Sequence[_Plan]) -> _Draft | None:
    """A member of ``plan``: shows its coordinates and no other plan's."""
    rng = builder.rng
    others = [p for p in plans if p is not plan]
    for _ in range(60):
        stance = plan.stance or _pick(rng, _BACKGROUND_STANCES)
        if plan.kind == "tool_stance":
            intents = [i for i in INTENTS if i.action == plan.tool]
            draft = builder.draft(rng.choice(intents), stance, None)
        elif plan.kind == "world_stance":
            kind = "missing" if plan.world == "missing" else "already"
            intents = [i for i in INTENTS if _can(builder.world, i, kind)]
            draft = builder.draft(rng.choice(intents), stance, kind)
        else:
            kind = plan.condition or ("missing" if plan.world == "missing" else "already")
            intents = [i for i in INTENTS if _can(builder.world, i, kind, plan.tool)]
            draft = builder.draft(rng.choice(intents), stance, kind, plan.tool)
        if draft is not None and _matches(draft.coordinates, plan) and not any(
                _matches(draft.coordinates, other) for other in others):
            return draft
    return None


_CAN: dict[tuple[str, str, str | None], bool] = {}


def _can(world: World, intent: Intent, kind: str, tool: str | None = None) -> bool:
    key = (intent.name, kind, tool)
    if key not in _CAN:
        calls = world.shape(intent)
        _CAN[key] = any(tool is None or calls[i][0] == tool
                        for i in eligible(kind, calls, intent))
    return _CAN[key]


def _background_draft(builder: _Builder, plans: Sequence[_Plan]) -> _Draft:
    """A conversation in no planted situation."""
    rng = builder.rng
    draft: _Draft | None = None
    for _ in range(60):
        intent = rng.choice(INTENTS)
        stance = _pick(rng, _BACKGROUND_STANCES)
        kind = _pick(rng, _BACKGROUND_KINDS) if rng.random() < _BACKGROUND_PERTURBED else None
        draft = builder.draft(intent, stance, kind)
        if draft is not None and not any(_matches(draft.coordinates, p) for p in plans):
            return draft
    # a plain, ordinary conversation of an intent no plan names as its focal tool
    for intent in INTENTS:
        draft = builder.draft(intent, "ordinary", None)
        if draft is not None and not any(_matches(draft.coordinates, p) for p in plans):
            return draft
    raise RuntimeError("no background conversation fits outside the planted situations")
