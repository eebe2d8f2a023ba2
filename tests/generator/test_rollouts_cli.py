"""``tracemill rollouts`` and ``rollouts show``: stored rollouts as a person reads them.

Every test runs a real offline ``generate`` on its own copy of the production store and
reads the rollouts back through the real command line, checking what it prints against
the rows the run stored.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from tests.generator.conftest import CliResult, ReadRollouts, RunCli, StoreCopy
from tracemill.cli import build_parser, main

pytestmark = pytest.mark.integration


def _generate(run_cli: RunCli, db: Path, *args: str) -> dict[str, Any]:
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json", *args])
    assert result.code == 0, result.err
    record: dict[str, Any] = result.json()
    return record


def _rollouts(run_cli: RunCli, db: Path, *args: str) -> CliResult:
    return run_cli(["rollouts", "--db", str(db), *args])


def _outcome(row: dict[str, Any]) -> str:
    if not row["graded"]:
        return "ungraded"
    return "pass" if row["passed"] else "fail"


@pytest.fixture
def two_runs(run_cli: RunCli, store_copy: StoreCopy,
             read_rollouts: ReadRollouts) -> tuple[Path, list[dict[str, Any]],
                                                   list[dict[str, Any]]]:
    """A store with two offline runs (the second one planting more mistakes)."""
    db = store_copy("rollouts.duckdb")
    records = [_generate(run_cli, db, "--agent", "offline", "--budget", "30", "--seed", "3"),
               _generate(run_cli, db, "--agent", "offline:0.5", "--budget", "24",
                         "--seed", "4")]
    return db, records, read_rollouts(db)


def test_the_list_shows_every_rollout_of_the_store(run_cli: RunCli, two_runs: Any) -> None:
    db, records, rows = two_runs
    listed = _rollouts(run_cli, db, "--json", "--limit", "500")
    assert listed.code == 0, listed.err
    items = {item["rollout_id"]: item for item in listed.json()}
    assert set(items) == {row["rollout_id"] for row in rows}
    assert len(rows) == records[0]["written"] + records[1]["written"]
    for row in rows:
        item = items[row["rollout_id"]]
        assert item["run_id"] == row["run_id"] and item["index"] == row["idx"]
        assert item["purpose"] == row["purpose"]
        assert item["situation"] == (row["cell"] or row["purpose"])
        assert item["axes"] == json.loads(row["situation"])
        assert item["outcome"] == _outcome(row)
        assert item["failure_class"] == row["failure_class"]
        assert item["mutation"] == json.loads(row["lineage"])["mutation"]["kind"]
        assert item["mutation_fired"] == row["mutation_fired"]
        assert item["turns"] == sum(m["role"] == "user" for m in json.loads(row["messages"]))
        # each listed rollout comes in full, as `rollouts show ID --json` gives it
        assert len(item["messages"]) == len(json.loads(row["messages"]))
        assert [c["name"] for c in item["checks"]] == [
            c["name"] for c in json.loads(row["checks"])]
    # the newest run comes first
    assert next(iter(items.values()))["run_id"] == records[1]["run_id"]

    text = _rollouts(run_cli, db, "--limit", "500")
    assert text.code == 0, text.err
    lines = text.out.strip().splitlines()
    header = lines[0].split()
    assert header == ["ROLLOUT", "RUN", "PURPOSE", "SITUATION", "MUTATION", "FIRED",
                      "OUTCOME", "FAILURE", "TURNS"]
    assert len(lines) == 1 + len(rows)
    for line in lines[1:]:
        rollout_id = line.split()[0]
        item = items[rollout_id]
        assert item["outcome"] in line.split() and line.split()[-1] == str(item["turns"])


def test_filters_narrow_the_list(run_cli: RunCli, two_runs: Any) -> None:
    db, records, rows = two_runs

    def ids(*args: str) -> set[str]:
        result = _rollouts(run_cli, db, "--json", "--limit", "500", *args)
        assert result.code == 0, result.err
        return {item["rollout_id"] for item in result.json()}

    older = records[0]["run_id"]
    assert ids("--run", older) == {r["rollout_id"] for r in rows if r["run_id"] == older}
    for outcome in ("pass", "fail", "ungraded"):
        assert ids("--outcome", outcome) == {r["rollout_id"] for r in rows
                                            if _outcome(r) == outcome}
    assert ids("--outcome", "fail"), "the offline runs must fail some rollouts"
    fired = {"fired": True, "not_fired": False, "none": None}
    for flag, value in fired.items():
        assert ids("--mutation", flag) == {r["rollout_id"] for r in rows
                                          if r["mutation_fired"] is value}
    cell = next(r["cell"] for r in rows if r["cell"])
    assert ids("--situation", cell) == {r["rollout_id"] for r in rows if r["cell"] == cell}
    tool_part = cell.split(" & ")[0]
    assert ids("--situation", tool_part) == {r["rollout_id"] for r in rows
                                             if r["cell"] and tool_part in r["cell"]}
    # a situation of the failure map by its id (the plan records it in the lineage)
    situation_ids = {json.loads(r["lineage"])["cell"]["situation_id"] for r in rows
                     if r["cell"]}
    situation_id = sorted(situation_ids)[0]
    assert ids("--situation", situation_id) == {
        r["rollout_id"] for r in rows
        if r["cell"] and json.loads(r["lineage"])["cell"]["situation_id"] == situation_id}
    both = ids("--run", older, "--outcome", "fail")
    assert both == {r["rollout_id"] for r in rows
                    if r["run_id"] == older and _outcome(r) == "fail"}
    assert ids("--situation", "no_such_axis=nothing") == set()

    limited = _rollouts(run_cli, db, "--limit", "5")
    assert limited.code == 0
    assert len(limited.out.strip().splitlines()) == 1 + 5 + 1
    assert "--limit N shows more" in limited.out
    nothing = _rollouts(run_cli, db, "--situation", "no_such_axis=nothing")
    assert nothing.code == 0 and "no rollouts match" in nothing.out


def test_show_prints_the_transcript_lineage_mutation_and_grades(
        run_cli: RunCli, two_runs: Any, tmp_path: Path) -> None:
    db, _records, rows = two_runs
    failed = next(r for r in rows if _outcome(r) == "fail" and json.loads(r["events"])
                  and json.loads(r["lineage"])["source_conversations"])
    rollout_id = failed["rollout_id"]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"rollout_id": rollout_id, "passed": False, "kind": "human",
                                  "labeled_by": "alice", "note": "made up the order"}) + "\n")
    assert run_cli(["label", "--db", str(db), str(labels)]).code == 0

    shown = _rollouts(run_cli, db, "show", rollout_id)
    assert shown.code == 0, shown.err
    text = shown.out
    assert text.startswith(f"rollout {rollout_id}: fail ({failed['failure_class']})")
    lineage = json.loads(failed["lineage"])
    for conversation in lineage["source_conversations"]:
        assert conversation in text
    assert lineage["mutation"]["detail"] in text
    messages = json.loads(failed["messages"])
    for message in messages:
        for line in (message.get("content") or "").splitlines():
            assert line in text
    for event in json.loads(failed["events"]):
        assert f"{event['tool']}({event['arguments']})" in text
        assert f"[tool {event['tool']} -> {event['status']}" in text
        assert event["result"] in text
    for check in json.loads(failed["checks"]):
        assert f"{check['name']}: {check['reason']}" in text
    assert f"labeled by {failed['labeled_by']}" in text
    assert "human label by alice" in text and "made up the order" in text

    as_json = _rollouts(run_cli, db, "show", rollout_id, "--json")
    assert as_json.code == 0, as_json.err
    body = as_json.json()
    assert body["rollout_id"] == rollout_id and body["outcome"] == "fail"
    assert body["source_conversations"] == lineage["source_conversations"]
    assert body["mutation_plan"]["kind"] == lineage["mutation"]["kind"]
    assert body["mutation_fired"] == failed["mutation_fired"]
    assert [m["role"] for m in body["messages"]] == [m["role"] for m in messages]
    calls = [call for m in body["messages"] if m["role"] == "assistant"
             for call in m.get("tool_calls", [])]
    events = json.loads(failed["events"])
    assert [(c["type"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("function", e["tool"], e["arguments"]) for e in events]
    tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages] == [
        (e["call_id"], e["result"]) for e in events]
    assert [c["name"] for c in body["checks"]] == [c["name"] for c in json.loads(
        failed["checks"])]
    assert body["labels"][0]["labeled_by"] == "alice"


def test_the_run_record_names_failing_rollouts_and_how_to_read_them(
        run_cli: RunCli, store_copy: StoreCopy, read_rollouts: ReadRollouts) -> None:
    db = store_copy("record.duckdb")
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--agent", "offline:0.5",
                      "--budget", "30", "--seed", "5"])
    assert result.code == 0, result.err
    rows = read_rollouts(db)
    failing = [r["rollout_id"] for r in rows if _outcome(r) == "fail"]
    assert failing
    (line,) = [line for line in result.out.splitlines() if "failing rollouts:" in line]
    for rollout_id in failing[:5]:
        assert rollout_id in line
    run_id = rows[0]["run_id"]
    assert f"tracemill rollouts --run {run_id} --outcome fail" in result.out
    assert "tracemill rollouts show ROLLOUT_ID" in result.out
    # what it says to run works
    shown = _rollouts(run_cli, db, "show", failing[0])
    assert shown.code == 0 and failing[0] in shown.out


@pytest.mark.parametrize(("args", "needles"), [
    (["show", "no-such-run:0"], ["'no-such-run:0'", "RUN_ID:INDEX", "tracemill rollouts"]),
    (["--run", "no-such-run"], ["'no-such-run'", "tracemill runs"]),
    (["list", "everything"], ["tracemill rollouts show ROLLOUT_ID"]),
    (["show"], ["tracemill rollouts show ROLLOUT_ID"]),
    (["--limit", "0"], ["--limit"]),
])
def test_unknown_ids_are_one_clear_line(run_cli: RunCli, store_copy: StoreCopy,
                                        args: list[str], needles: list[str]) -> None:
    db = store_copy("unknown.duckdb")
    _generate(run_cli, db, "--agent", "offline", "--budget", "5")
    result = _rollouts(run_cli, db, *args)
    assert result.code == 2
    assert result.out == "" and "Traceback" not in result.err
    (line,) = result.err.strip().splitlines()
    assert line.startswith("tracemill rollouts: error: ")
    for needle in needles:
        assert needle in line


def test_an_empty_store_says_how_to_make_rollouts(run_cli: RunCli, store_copy: StoreCopy) -> None:
    result = _rollouts(run_cli, store_copy("empty.duckdb"))
    assert result.code == 0 and "no rollouts yet" in result.out


def test_rollouts_help_documents_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["rollouts", "--help"], environ={})
    assert exit_info.value.code == 0
    printed = " ".join(capsys.readouterr().out.split())
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    rollouts = sub.choices["rollouts"]
    options = set()
    for action in rollouts._actions:
        assert action.help and action.help != argparse.SUPPRESS, action.dest
        options.update(action.option_strings)
        assert " ".join(action.help.split()[:3]) in printed, action.dest
    assert {"--run", "--situation", "--outcome", "--mutation", "--json", "--limit"} <= options
