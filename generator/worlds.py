"""What answers the agent's tool calls: tracemill's simulated world, or your own.

``--world`` picks it by a spec string, found by its scheme in :data:`_FACTORIES`:

===========================  ==================================================================
spec                         world
===========================  ==================================================================
``simulated`` (default)      :class:`generator.world.World`, built from the tool schemas per
                             rollout, with the plan's world state and faults
``python:pkg.module:func``   your function answers every call (your staging system)
``http://host/path``         each call is POSTed as JSON to your endpoint
===========================  ==================================================================

The contract of a Python world::

    def answer(tool: str, arguments: dict, *, rollout: RolloutContext) -> str | dict | list:
        ...

It is called once per tool call, in a worker thread (it may block on your staging
system). A returned ``str`` is the result text as the agent sees it; a ``dict`` or
``list`` is sent as JSON. A ``dict`` with a truthy ``"error"`` key is a failed call
(status ``error``). An exception is a failed call too, answered to the agent as
``{"error": "..."}``: ``LookupError`` (``KeyError``...) as ``not_found``,
``PermissionError`` as ``permission_denied``, ``TimeoutError`` as ``timeout``, anything
else as ``error``. :class:`RolloutContext` says which rollout is calling (its id, seed,
what the person knows), so that a staging system can keep rollouts apart.

An HTTP world gets ``{"tool": ..., "arguments": {...}, "rollout": {...}}`` (the context
as JSON) and answers with the result body: JSON or text. Status 404 is ``not_found``,
403 ``permission_denied``, 408 / 504 and a timeout are ``timeout``, any other status of
400 or more is ``error``.

Calls that never reach your system: a tool that was not offered (``unknown_tool``),
arguments that are not a JSON object (``rejected``), and the plan's scheduled tool faults,
which the adapter answers itself (a fault needs no world state, so it fires here as in
the simulation; ``malformed_result`` cuts your answer short and ``stale_result`` passes it
on marked stale). A world state the plan wants (``missing``, ``already_acted_on``, ...)
cannot be put into your system from here: such rollouts record ``mutation_fired`` None
and the run record says so. The conduct checks read your results as they read the
simulation's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import httpx
import orjson

from generator.backends.python_callable import load_callable
from generator.errors import SpecError
from generator.records import PlannedRollout, ToolCall, ToolSpec, ToolWorld, WorldEvent
from generator.simulate import simulated_world
from generator.world import FAULT_CONDITIONS

_SPOILERS = frozenset({"malformed_result", "stale_result"})
"""Faults that spoil your world's real answer instead of replacing it."""

FAULTLESS_STATES = frozenset({"entity_exists", "unknown"})
"""World states that need nothing done to the world (the record is simply there)."""


@dataclass(frozen=True)
class RolloutContext:
    """Which rollout a tool call of your own world comes from."""

    rollout_id: str
    """``run_id:index`` (what ``tracemill rollouts show`` takes)."""
    run_id: str
    """The generation run."""
    index: int
    """The rollout's position in the run's plan."""
    seed: int
    """The rollout's seed."""
    call_number: int
    """1 for the rollout's first tool call, 2 for the next, ..."""
    situation: Mapping[str, str]
    """The six axis values the rollout was planned to show."""
    facts: Mapping[str, str]
    """What the simulated person knows and may tell (``{"order_id": "#W8178512"}``)."""
    world_state: str
    """The world state the plan wanted (only the simulation can build it)."""


Answer = tuple[str, str]
"""``(status, result text)`` of one call answered by a team's world."""


class WorldSource(Protocol):
    """Builds the world of each rollout of one run."""

    spec: str
    """The ``--world`` spec it was built from."""
    blocking: bool
    """True when its calls may block (run off the event loop)."""
    note: str | None
    """What the run record should say about it (None for the simulation)."""

    def for_rollout(self, plan: PlannedRollout, tools: Sequence[ToolSpec],
                    run_id: str) -> ToolWorld:
        """A fresh world for one rollout."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class SimulatedWorlds:
    """tracemill's own simulated world, one per rollout."""

    spec = "simulated"
    blocking = False
    note: str | None = None

    def for_rollout(self, plan: PlannedRollout, tools: Sequence[ToolSpec],
                    run_id: str) -> ToolWorld:
        return simulated_world(plan, tools)

    def close(self) -> None:
        return None


_EXTERNAL_NOTE = ("tool calls were answered by your own world ({spec}), which tracemill "
                  "cannot put into a planned world state (missing, already acted on, ...): "
                  "those rollouts record mutation_fired as not applicable; scheduled tool "
                  "faults were injected by tracemill and fire as usual")


class ExternalWorld:
    """A team's world behind the :class:`~generator.records.ToolWorld` surface, for one
    rollout: faults and malformed calls are answered here, the rest by ``answer``."""

    def __init__(self, answer: Callable[[str, dict[str, Any], RolloutContext], Answer],
                 tools: Sequence[ToolSpec], plan: PlannedRollout, run_id: str) -> None:
        self._answer = answer
        self._tools = {tool.name for tool in tools}
        self._plan = plan
        self._run_id = run_id
        self._calls = 0
        self._per_tool: dict[str, int] = {}
        self._first_tool: str | None = None
        self._faults = [f for f in plan.mutation.faults if f.condition in FAULT_CONDITIONS]
        self._fired: set[int] = set()
        self._mutated = False
        self._known: set[str] = set()

    @property
    def known_ids(self) -> frozenset[str]:
        return frozenset(self._known)

    @property
    def mutation_fired(self) -> bool | None:
        """Whether a scheduled fault fired; None when the plan wanted a world state this
        adapter cannot build, or nothing at all."""
        if self._plan.mutation.world_state not in FAULTLESS_STATES or not self._faults:
            return None
        return self._mutated

    def call(self, call: ToolCall) -> WorldEvent:
        self._calls += 1
        if call.name not in self._tools:
            return self._event(call, "unknown_tool", {
                "error": f"There is no tool named {call.name!r}",
                "available_tools": sorted(self._tools)})
        try:
            arguments = orjson.loads(call.arguments or "{}")
        except orjson.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            return self._event(call, "rejected", {
                "error": "arguments must be a JSON object of the tool's parameters"})
        count = self._per_tool[call.name] = self._per_tool.get(call.name, 0) + 1
        self._first_tool = self._first_tool or call.name
        spoil = None
        for index, fault in enumerate(self._faults):
            target = self._first_tool if fault.tool == "*" else fault.tool
            if index not in self._fired and target == call.name and fault.on_call == count:
                self._fired.add(index)
                if fault.condition in _SPOILERS:
                    spoil = fault.condition
                    break
                return self._event(call, fault.condition, {
                    "error": fault.condition,
                    "message": f"The {call.name} service failed ({fault.condition})."},
                    mutated=True)
        context = RolloutContext(
            rollout_id=f"{self._run_id}:{self._plan.index}", run_id=self._run_id,
            index=self._plan.index, seed=self._plan.seed, call_number=self._calls,
            situation=dict(self._plan.situation), facts=dict(self._plan.goal.facts),
            world_state=self._plan.mutation.world_state)
        status, text = self._answer(call.name, arguments, context)
        if status == "ok":
            _collect_ids(text, self._known)
        if spoil == "malformed_result":  # cut before its end: never valid JSON
            status, text = spoil, text[: max(1, len(text) * 3 // 5)]
        elif spoil == "stale_result" and status == "ok":  # as a cache that stopped updating
            status = spoil
        else:
            spoil = None  # a failed answer has nothing to go stale
        self._mutated = self._mutated or spoil is not None
        return WorldEvent(call_id=call.id, tool=call.name, arguments=call.arguments,
                          status=status, result=text, mutated=spoil is not None)

    def _event(self, call: ToolCall, status: str, body: object,
               mutated: bool = False) -> WorldEvent:
        self._mutated = self._mutated or mutated
        return WorldEvent(call_id=call.id, tool=call.name, arguments=call.arguments,
                          status=status, result=orjson.dumps(body).decode(), mutated=mutated)


def _collect_ids(text: str, into: set[str]) -> None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(inner, str | int) and not isinstance(inner, bool) and (
                        key == "id" or key.endswith(("_id", "Id"))):
                    into.add(str(inner))
                else:
                    stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)


def _body(value: object) -> Answer:
    """A returned value as (status, text)."""
    if isinstance(value, str):
        return "ok", value
    if isinstance(value, Mapping | list | tuple):
        failed = isinstance(value, Mapping) and bool(value.get("error"))
        try:
            text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError as exc:
            return "error", orjson.dumps({"error": f"the world's answer is not JSON: {exc}"}
                                         ).decode()
        return ("error" if failed else "ok"), text
    return "error", orjson.dumps({"error": "the world answered a "
                                           f"{type(value).__name__}, not a str or dict"}).decode()


def _failure(exc: BaseException) -> Answer:
    if isinstance(exc, LookupError):
        status = "not_found"
    elif isinstance(exc, PermissionError):
        status = "permission_denied"
    elif isinstance(exc, TimeoutError):
        status = "timeout"
    else:
        status = "error"
    message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return status, orjson.dumps({"error": message or type(exc).__name__}).decode()


class CallableWorlds:
    """``python:pkg.module:function``: a function of the team answers every call."""

    blocking = True

    def __init__(self, spec: str, target: str) -> None:
        self.spec = spec
        self.note: str | None = _EXTERNAL_NOTE.format(spec=spec)
        self._fn: Callable[..., object] = load_callable(target, spec)
        if asyncio.iscoroutinefunction(self._fn):
            raise SpecError(f"world {spec!r}: the world function must be a plain function "
                            "(it runs in a worker thread), not a coroutine function")

    def _answer(self, tool: str, arguments: dict[str, Any], rollout: RolloutContext) -> Answer:
        try:
            value = self._fn(tool, arguments, rollout=rollout)
        except Exception as exc:  # the team's failure is the agent's failed call
            return _failure(exc)
        return _body(value)

    def for_rollout(self, plan: PlannedRollout, tools: Sequence[ToolSpec],
                    run_id: str) -> ToolWorld:
        return ExternalWorld(self._answer, tools, plan, run_id)

    def close(self) -> None:
        return None


_HTTP_STATUS = {404: "not_found", 403: "permission_denied", 401: "permission_denied",
                408: "timeout", 504: "timeout"}


class HttpWorlds:
    """``http(s)://...``: each call POSTed as ``{tool, arguments, rollout}`` JSON."""

    blocking = True

    def __init__(self, spec: str, *, timeout_s: float = 30.0) -> None:
        self.spec = spec
        self.note: str | None = _EXTERNAL_NOTE.format(spec=spec)
        self._url = spec
        self._client = httpx.Client(timeout=timeout_s)

    def _answer(self, tool: str, arguments: dict[str, Any], rollout: RolloutContext) -> Answer:
        payload = {"tool": tool, "arguments": arguments, "rollout": asdict(rollout)}
        try:
            response = self._client.post(self._url, content=orjson.dumps(payload),
                                         headers={"content-type": "application/json"})
        except httpx.TimeoutException:
            return "timeout", orjson.dumps({"error": "the world endpoint timed out"}).decode()
        except httpx.HTTPError as exc:
            return "error", orjson.dumps({"error": f"the world endpoint failed: {exc}"}
                                         ).decode()
        text = response.text
        if response.status_code >= 400:
            status = _HTTP_STATUS.get(response.status_code, "error")
            return status, text or orjson.dumps({"error": f"HTTP {response.status_code}"}
                                                ).decode()
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return "ok", text
        return _body(value) if isinstance(value, dict | list) else ("ok", text)

    def for_rollout(self, plan: PlannedRollout, tools: Sequence[ToolSpec],
                    run_id: str) -> ToolWorld:
        return ExternalWorld(self._answer, tools, plan, run_id)

    def close(self) -> None:
        self._client.close()


def _simulated(spec: str, rest: str) -> WorldSource:
    if rest:
        raise SpecError(f"world {spec!r}: write just 'simulated'")
    return SimulatedWorlds()


def _python(spec: str, rest: str) -> WorldSource:
    return CallableWorlds(spec, rest)


def _http(spec: str, rest: str) -> WorldSource:
    if not rest.startswith("//") or len(rest) <= 2:
        raise SpecError(f"world {spec!r}: write the endpoint's full URL, "
                        "http://host:port/path")
    return HttpWorlds(spec)


_FACTORIES: Mapping[str, Callable[[str, str], WorldSource]] = {
    "simulated": _simulated, "python": _python, "http": _http, "https": _http,
}


def build_worlds(spec: str) -> WorldSource:
    """The world source a ``--world`` spec names (:class:`SpecError` when it names none)."""
    scheme, _, rest = spec.strip().partition(":")
    factory = _FACTORIES.get(scheme)
    if factory is None:
        raise SpecError(f"world {spec!r}: unknown kind {scheme!r}; use simulated, "
                        "python:pkg.module:function or http://host:port/path")
    return factory(spec, rest)


__all__ = ["CallableWorlds", "ExternalWorld", "HttpWorlds", "RolloutContext",
           "SimulatedWorlds", "WorldSource", "build_worlds"]
