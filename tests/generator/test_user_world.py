"""``--world``: a team's own staging system answers the agent's tool calls.

The staging system is tests/support/staging_world.py, a dict-backed order service
written to the contract of generator/worlds.py. A full offline run goes through the real
command line with it as a Python function and as an HTTP endpoint; every tool call the
simulation would have answered must reach it, the conduct checks must read its answers,
and the planned mutations it cannot build must be recorded as not applicable.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.checks import CHECKS_STAMP
from generator.records import (
    Cell,
    Fault,
    Goal,
    Mutation,
    Persona,
    PlannedRollout,
    ToolCall,
    ToolSpec,
)
from generator.worlds import FAULTLESS_STATES, build_worlds
from tests.generator.conftest import ReadRollouts, RunCli, StoreCopy
from tests.support import staging_world
from tracemill.store import open_store

pytestmark = pytest.mark.integration

SPEC = "python:tests.support.staging_world:answer"
_ADAPTER = frozenset({"unknown_tool", "rejected", "timeout", "error", "permission_denied",
                      "not_found", "malformed_result", "stale_result"})


@pytest.fixture(autouse=True)
def fresh_staging() -> Iterator[None]:
    staging_world.reset()
    yield
    staging_world.reset()


def _generate(run_cli: RunCli, db: Path, *args: str) -> dict[str, Any]:
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json", *args])
    assert result.code == 0, result.err
    record: dict[str, Any] = result.json()
    return record


def _expected_fired(row: dict[str, Any]) -> bool | None:
    mutation = json.loads(row["lineage"])["mutation"]
    if mutation["world_state"] not in FAULTLESS_STATES or not mutation["faults"]:
        return None
    return any(event["mutated"] for event in json.loads(row["events"]))


def test_a_staging_world_answers_every_call_of_a_full_run(
        run_cli: RunCli, store_copy: StoreCopy, read_rollouts: ReadRollouts) -> None:
    db = store_copy("staging.duckdb")
    record = _generate(run_cli, db, "--agent", "offline:0.3", "--budget", "80", "--seed", "4",
                       "--world", SPEC, "--fault-rate", "0.5")
    rows = read_rollouts(db)
    assert record["world"] == SPEC and len(rows) == record["written"] == 80

    served = Counter(rollout_id for rollout_id, _tool, _arguments in staging_world.CALLS)
    statuses: Counter[str] = Counter()
    for row in rows:
        events = json.loads(row["events"])
        reached = [e for e in events if e["status"] not in ("unknown_tool", "rejected")
                   and not (e["mutated"] and e["status"] not in ("malformed_result",
                                                                   "stale_result"))]
        # every call that was not a fault or a malformed call reached staging, in order
        assert served[row["rollout_id"]] == len(reached), row["rollout_id"]
        for event in events:
            statuses[event["status"]] += 1
            if event["status"] == "ok":
                assert json.loads(event["result"])["served_by"] == "staging"
            else:
                assert event["status"] in _ADAPTER
        assert row["mutation_fired"] is _expected_fired(row)
    assert statuses["ok"] > 0 and statuses["not_found"] > 0 and statuses["error"] > 0

    # the checks read staging's answers like the simulation's
    graded = [row for row in rows if row["graded"]]
    assert graded and {row["labeled_by"] for row in graded} == {CHECKS_STAMP}
    assert all(json.loads(row["checks"]) for row in graded)
    # a rollout whose staging call failed and whose agent said it was done fails
    after_failure = [row for row in graded
                     if "claimed_success_after_failure" in row["planted"]
                     and any(e["status"] != "ok" for e in json.loads(row["events"]))]
    assert after_failure, "the offline agent plants success claimed after a failed call"
    for row in after_failure:
        assert not row["passed"], row["rollout_id"]
    assert any(check["name"] == "claimed_success_after_failure" and not check["passed"]
               for row in after_failure for check in json.loads(row["checks"]))

    # what the record says about mutations matches the stored marks, per purpose
    for purpose, counts in record["mutations"].items():
        mine = [row for row in rows if row["purpose"] == purpose]
        assert counts == {
            "fired": sum(row["mutation_fired"] is True for row in mine),
            "not_fired": sum(row["mutation_fired"] is False for row in mine),
            "not_applicable": sum(row["mutation_fired"] is None for row in mine)}
    assert any(row["mutation_fired"] is None and json.loads(row["lineage"])["mutation"][
        "world_state"] not in FAULTLESS_STATES for row in rows)
    assert any("your own world" in warning and SPEC in warning
               for warning in record["warnings"])
    unfired = [row["rollout_id"] for row in rows if row["mutation_fired"] is False]
    assert record["unfired_rollouts"] == unfired[:50]
    if unfired:
        assert any("not counted as showing their situation" in warning
                   for warning in record["warnings"])


def test_an_http_world_answers_like_a_python_one(run_cli: RunCli, store_copy: StoreCopy,
                                                 read_rollouts: ReadRollouts) -> None:
    db = store_copy("http.duckdb")
    with staging_world.serve_http() as url:
        record = _generate(run_cli, db, "--agent", "offline", "--budget", "30", "--seed", "6",
                           "--world", url)
    assert record["world"] == url
    rows = read_rollouts(db)
    events = [e for row in rows for e in json.loads(row["events"])]
    ok = [e for e in events if e["status"] == "ok"]
    assert ok and all(json.loads(e["result"])["served_by"] == "staging" for e in ok)
    missing = [e for e in events if e["status"] == "not_found" and not e["mutated"]]
    assert missing and all("not found" in json.loads(e["result"])["error"] for e in missing)
    assert len(staging_world.CALLS) == sum(
        1 for e in events if not e["mutated"] or e["status"] in ("malformed_result",
                                                                 "stale_result")
        if e["status"] not in ("unknown_tool", "rejected"))


@pytest.mark.parametrize(("spec", "needles"), [
    ("python:nosuch_world_mod:answer", ["'nosuch_world_mod'", "PYTHONPATH"]),
    ("python:tests.support.staging_world:nothing", ["no attribute 'nothing'"]),
    ("python:tests.support.staging_world:CALLS", ["not a callable"]),
    ("python:tests.support.staging_world", ["python:pkg.module:function"]),
    ("staging:orders", ["unknown kind 'staging'", "simulated", "http://"]),
    ("http:orders", ["full URL"]),
])
def test_a_bad_world_spec_is_one_clear_line(run_cli: RunCli, store_copy: StoreCopy,
                                            spec: str, needles: list[str]) -> None:
    db = store_copy("bad-world.duckdb")
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--agent", "offline",
                      "--world", spec])
    assert result.code == 2 and result.out == ""
    assert "Traceback" not in result.err
    (line,) = result.err.strip().splitlines()
    assert line.startswith("tracemill generate: error: ")
    for needle in needles:
        assert needle in line
    store = open_store(db, read_only=True)
    try:
        assert store.query("SELECT count(*) FROM generation_runs") == [(0,)]
    finally:
        store.close()


# --------------------------------------------------------------------------- the adapter


_TOOLS = (ToolSpec("lookup_order", "Look an order up.",
                   {"type": "object", "properties": {"order_id": {"type": "string"}}}),
          ToolSpec("issue_refund", "Refund an order.",
                   {"type": "object", "properties": {"order_id": {"type": "string"}}}))


def _plan(world_state: str = "entity_exists", faults: tuple[Fault, ...] = ()) -> PlannedRollout:
    return PlannedRollout(
        index=7, purpose="target", cell=Cell("tool", "issue_refund", "world_state", world_state),
        cell_status="new", situation={"tool": "issue_refund", "world_state": world_state},
        seed=11, goal=Goal("Refund A-1", "issue_refund", {"order_id": "A-1"}),
        persona=Persona("Ana", "plain", "polite", 3, "short", "ordinary"),
        mutation=Mutation("tool_fault" if faults else "world_state", "planned", world_state,
                          faults))


def _call(name: str, arguments: str, number: int = 1) -> ToolCall:
    return ToolCall(f"call_{number}", name, arguments)


def test_the_adapter_answers_faults_and_bad_calls_itself() -> None:
    worlds = build_worlds(SPEC)
    world = worlds.for_rollout(_plan(faults=(Fault("issue_refund", "timeout", 2),)), _TOOLS,
                               "run-1")
    assert world.mutation_fired is False
    looked = world.call(_call("lookup_order", '{"order_id": "A-1"}'))
    assert looked.status == "ok" and json.loads(looked.result)["served_by"] == "staging"
    assert "A-1" in world.known_ids
    first = world.call(_call("issue_refund", '{"order_id": "A-1"}', 2))
    assert first.status == "ok" and not first.mutated
    second = world.call(_call("issue_refund", '{"order_id": "A-1"}', 3))
    assert (second.status, second.mutated) == ("timeout", True)
    assert world.mutation_fired is True
    assert world.call(_call("delete_everything", "{}", 4)).status == "unknown_tool"
    assert world.call(_call("lookup_order", "[1, 2", 5)).status == "rejected"
    missing = world.call(_call("lookup_order", '{"order_id": "A-2"}', 6))
    assert missing.status == "not_found"
    assert json.loads(missing.result) == {"error": "order 'A-2' not found"}
    # staging saw only the calls that reached it, with the rollout's context
    assert [(rid, tool) for rid, tool, _ in staging_world.CALLS] == [
        ("run-1:7", "lookup_order"), ("run-1:7", "issue_refund"), ("run-1:7", "lookup_order")]


def test_world_states_staging_cannot_build_are_not_applicable() -> None:
    worlds = build_worlds(SPEC)
    for state in ("missing", "already_acted_on", "duplicate"):
        world = worlds.for_rollout(_plan(state, (Fault("issue_refund", "timeout"),)), _TOOLS,
                                   "run-2")
        world.call(_call("issue_refund", '{"order_id": "A-1"}'))
        assert world.mutation_fired is None
    plain = worlds.for_rollout(_plan(), _TOOLS, "run-2")
    plain.call(_call("lookup_order", '{"order_id": "A-1"}'))
    assert plain.mutation_fired is None  # nothing was planned to take effect


def test_spoiling_faults_pass_the_real_answer_on_spoiled() -> None:
    worlds = build_worlds(SPEC)
    cut = worlds.for_rollout(_plan(faults=(Fault("lookup_order", "malformed_result"),)),
                             _TOOLS, "run-3")
    event = cut.call(_call("lookup_order", '{"order_id": "A-1"}'))
    assert (event.status, event.mutated) == ("malformed_result", True)
    assert event.result.startswith('{"order_id":"A-1"') and not event.result.endswith("}")
    assert cut.mutation_fired is True
    stale = worlds.for_rollout(_plan(faults=(Fault("lookup_order", "stale_result"),)),
                               _TOOLS, "run-3")
    missing = stale.call(_call("lookup_order", '{"order_id": "A-9"}'))
    assert (missing.status, missing.mutated) == ("not_found", False)  # nothing to go stale
    assert stale.mutation_fired is False
    # a tool condition that is no fault schedules nothing
    calm = worlds.for_rollout(_plan(faults=(Fault("lookup_order", "success"),)), _TOOLS,
                              "run-3")
    assert calm.call(_call("lookup_order", '{"order_id": "A-1"}')).status == "ok"
    assert calm.mutation_fired is None
    assert len(staging_world.CALLS) == 3
