# mypy: ignore-errors
"""The exported verifiers environment, loaded by verifiers 0.4 itself (offline).

Runs inside the separate verifiers virtual environment (verifiers needs openai 2.x, the
project's test environment pins 3.x): ``tests/generator/test_exports_verifiers.py`` exports
a real store, writes the cases (rollouts read back from the store) and runs this file
there; ``.ci/verifiers`` builds that environment. Elsewhere it skips, naming both.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

CASES = os.environ.get("TRACEMILL_VERIFIERS_CASES")
pytestmark = pytest.mark.skipif(
    not CASES, reason="runs inside .venv-verifiers, driven by "
    "tests/generator/test_exports_verifiers.py (build it with .ci/verifiers)")


@pytest.fixture(scope="module")
def cases() -> dict[str, Any]:
    assert CASES
    loaded: dict[str, Any] = json.loads(Path(CASES).read_text())
    return loaded


def _env(split: str) -> Any:
    import verifiers.v1 as vf

    config = vf.resolve_env_config({"taskset": {"id": "tracemill-env", "split": split}})
    return vf.load_environment(config)


def _vf_messages(messages: list[dict[str, Any]]) -> list[Any]:
    import verifiers.v1 as vf

    out: list[Any] = []
    for m in messages:
        if m["role"] == "system":
            out.append(vf.SystemMessage(content=m["content"] or ""))
        elif m["role"] == "user":
            out.append(vf.UserMessage(content=m["content"] or ""))
        elif m["role"] == "assistant":
            calls = [vf.ToolCall(id=c["id"], name=c["function"]["name"],
                                 arguments=c["function"]["arguments"])
                     for c in m.get("tool_calls") or ()]
            out.append(vf.AssistantMessage(content=m.get("content"), tool_calls=calls or None))
        else:
            out.append(vf.ToolMessage(tool_call_id=m["tool_call_id"], content=m["content"],
                                      name=m.get("name")))
    return out


def _trace(task: Any, messages: list[dict[str, Any]]) -> Any:
    import verifiers.v1 as vf

    trace = vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data,
                                       key=task.key, hash=task.hash),
                     agent=vf.AgentInfo(config=vf.AgentConfig()))
    for i, message in enumerate(_vf_messages(messages)):
        trace.nodes.append(vf.MessageNode(parent=i - 1 if i else None, message=message,
                                          sampled=message.role == "assistant"))
    return trace


def test_load_environment_finds_the_taskset_alone(cases: dict[str, Any]) -> None:
    import tracemill_env

    assert tracemill_env.__all__ == ["TracemillTaskset"]
    for side in ("train", "held_out"):
        env = _env(side)
        assert type(env.taskset).__name__ == "TracemillTaskset"
        tasks = list(env.taskset)
        assert [t.data.id for t in tasks] == cases["task_ids"][side]
        for task in tasks:
            assert task.data.side == side and task.key == task.data.id
            assert task.data.prompt and task.data.prompt[0].role == "user"
            assert [type(s).__name__ for s in task.toolsets(task.config)] == [
                "TracemillToolset"]


def test_a_trace_of_an_exported_rollout_scores_as_tracemill_graded_it(
        cases: dict[str, Any]) -> None:
    tasks = {t.data.id: t for side in ("train", "held_out") for t in _env(side).taskset}
    scored = {True: 0, False: 0}
    for case in cases["rollouts"]:
        task = tasks[case["task_id"]]
        trace = _trace(task, case["messages"])
        asyncio.run(task.score(trace))
        conduct = trace.rewards["conduct"]
        assert conduct is not None and conduct.weight == 0.5
        assert conduct.score == (1.0 if case["passed"] else 0.0), case["rollout_id"]
        assert trace.metrics  # one per conduct check
        assert all(k.startswith("check/") for k in trace.metrics)
        assert (min(trace.metrics.values()) == 1.0) == case["passed"]
        end = trace.rewards.get("end_state")
        if task.data.references:
            assert end is not None
            if case["passed"]:  # its own end state is one of the references
                assert end.score == 1.0, case["rollout_id"]
            assert trace.info["tracemill"]["end_state"] == case["effects"]
        else:
            assert end is None  # no passing rollout: nothing to compare with
        scored[case["passed"]] += 1
    assert scored[True] and scored[False]


def test_doing_nothing_leaves_the_wrong_end_state(cases: dict[str, Any]) -> None:
    tasks = {t.data.id: t for side in ("train", "held_out") for t in _env(side).taskset}
    changed = [t for t in tasks.values() if t.data.references
               and all(ref for ref in t.data.references)]
    assert changed, "the export must hold tasks whose passing rollouts changed a record"
    for task in changed:
        opening = task.data.prompt[0].content
        trace = _trace(task, [{"role": "user", "content": opening},
                              {"role": "assistant", "content": "All done, it is sorted."}])
        asyncio.run(task.score(trace))
        assert trace.rewards["end_state"].score == 0.0


def test_the_toolset_answers_from_the_world(cases: dict[str, Any]) -> None:
    import verifiers.v1 as vf
    from tracemill_env.servers.tool import TracemillState, TracemillToolset

    tasks = {t.data.id: t for side in ("train", "held_out") for t in _env(side).taskset}
    toolset = TracemillToolset(vf.ToolsetConfig())
    answered = 0
    for case in cases["rollouts"]:
        task = tasks[case["task_id"]]
        state = TracemillState(run_id=task.data.run_id, item=task.data.item)
        results = {m["tool_call_id"]: m["content"] for m in case["messages"]
                   if m["role"] == "tool"}
        for m in case["messages"]:
            for call in m.get("tool_calls") or ():
                _, text = toolset.answer(state, call["function"]["name"],
                                         json.loads(call["function"]["arguments"]))
                assert text == results[call["id"]]  # what the agent saw in tracemill
                answered += 1
    assert answered
