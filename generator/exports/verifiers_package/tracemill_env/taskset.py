# mypy: ignore-errors
"""Tasks, rewards and the taskset of the tracemill environment.

Each task is one world tracemill's rollouts ran in (a situation of the failure map: the
person's facts, the record's state, the scheduled tool faults). The agent gets the
person's opening message and the run's system prompt; the tools answer from the task's
world (:mod:`.servers.tool`). Two rewards score a finished trace by replaying its tool
calls through a fresh world of the task:

- ``end_state`` (weight 0.5): 1 when the records the calls created, updated or deleted are
  exactly those one of the task's passing tracemill rollouts left, else 0; not recorded
  for a task no rollout passed (there is no reference end state to compare with);
- ``conduct`` (weight 0.5): tracemill's conduct checks (an invented identifier, a claimed
  success after a failed call, an action without its tool call, a call loop, ...): 1 when
  every check passes, else 0. Each check is also a metric (``check/<name>``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import Field

from . import world
from .servers.tool import TracemillState, TracemillToolset


class TracemillData(vf.TaskData):
    """One world of the export, with what tracemill knew about it."""

    run_id: str
    """The generation run that planned it (its tools)."""
    situation_key: str
    """The situation it shows (what tracemill's split is by)."""
    side: Literal["train", "held_out"]
    """The side of tracemill's split it lies on."""
    item: dict[str, Any]
    """The plan item its world is rebuilt from."""
    references: list[list[list[str]]] = Field(default_factory=list)
    """End states its passing rollouts left: [tool, effect, record] per change."""
    rollouts: list[dict[str, Any]] = Field(default_factory=list)
    """The exported rollouts that ran in it (id, passed, reward, labeled_by)."""


class TracemillTaskConfig(vf.TaskConfig):
    """Knobs of each task (``--env.taskset.task.*``)."""

    tools: vf.ToolsetConfig = vf.ToolsetConfig()
    """Where the world's tool server runs."""


def _messages(trace: vf.Trace) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in trace.messages:
        row: dict[str, Any] = {"role": message.role}
        if isinstance(message, vf.AssistantMessage):
            row["content"] = message.content
            row["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                 for c in message.tool_calls or ()]
        else:
            content = message.content
            row["content"] = content if isinstance(content, str) else "\n".join(
                part.text for part in content if isinstance(part, vf.TextContentPart))
            if isinstance(message, vf.ToolMessage):
                row["tool_call_id"] = message.tool_call_id
                row["name"] = message.name
        out.append(row)
    return out


class TracemillTask(vf.Task[TracemillData, TracemillState, TracemillTaskConfig]):
    """A world to act in; scored on its end state and tracemill's conduct checks."""

    @property
    def key(self) -> str:
        return self.data.id or self.hash

    @classmethod
    def toolsets(cls, config: TracemillTaskConfig) -> list[vf.Toolset]:
        return [TracemillToolset(config.tools)]

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        trace.state.run_id = self.data.run_id
        trace.state.item = self.data.item
        trace.state.calls = []

    def _graded(self, trace: vf.Trace) -> tuple[Any, tuple[world.Effect, ...]]:
        cached = trace.info.get("tracemill")
        if cached is None:
            grade, end = world.grade(self.data.item, self.data.run_id, _messages(trace))
            cached = trace.info["tracemill"] = {
                "passed": grade.passed, "reward": grade.reward,
                "failure_class": grade.failure_class, "reason": grade.reason,
                "checks": {c.name: c.passed for c in grade.checks},
                "end_state": [list(e) for e in end]}
        return cached, tuple(tuple(e) for e in cached["end_state"])

    @vf.reward(weight=0.5)
    async def end_state(self, trace: vf.Trace) -> float | dict[str, float]:
        if not self.data.references:
            return {}  # no passing rollout: no reference end state, nothing recorded
        _, end = self._graded(trace)
        wanted = {tuple(tuple(e) for e in ref) for ref in self.data.references}
        return 1.0 if end in wanted else 0.0

    @vf.reward(weight=0.5)
    async def conduct(self, trace: vf.Trace) -> float:
        graded, _ = self._graded(trace)
        return 1.0 if graded["passed"] else 0.0

    @vf.metric
    async def checks(self, trace: vf.Trace) -> dict[str, float]:
        graded, _ = self._graded(trace)
        return {f"check/{name}": float(ok) for name, ok in graded["checks"].items()}


class TracemillConfig(vf.TasksetConfig):
    """Which side of tracemill's split loads (``--env.taskset.split``)."""

    split: Literal["train", "held_out"] = "train"
    """train (decontaminated against the held-out side) or held_out (for evaluation)."""
    task: TracemillTaskConfig = TracemillTaskConfig()


class TracemillTaskset(vf.Taskset[TracemillTask, TracemillConfig]):
    """The exported worlds of one side of the split."""

    def load(self) -> Iterator[TracemillTask]:
        data = resources.files(__package__).joinpath("data", f"{self.config.split}.jsonl")
        with data.open("r", encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield TracemillTask(TracemillData(**json.loads(line)), self.config.task)
