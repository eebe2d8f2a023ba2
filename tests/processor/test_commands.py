"""The processor's commands as a user runs them: map, conversations, report gate.

A synthetic production stream (tests/support/synthetic.py: planted new, persistent and
fixed situations over two model versions) goes through the real collector pipeline into
a real DuckDB file; ``tracemill`` commands run on it in-process (``main``) and, for the
running-collector path, against a real ``tracemill serve`` subprocess.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

from processor.conversation_records import ConversationRecord
from processor.map_records import STATUS_ORDER, SituationRecord
from tests.collector.test_durability import ServeProcess
from tests.support.pipeline import store_requests
from tests.support.synthetic import SyntheticStream, production_stream
from tracemill.cli import main
from tracemill.store import open_store

ENV = {"TRACEMILL_DECODE_WORKERS": "0"}


@pytest.fixture(scope="module")
def stream() -> SyntheticStream:
    return production_stream(seed=5, conversations_per_version=400)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory, stream: SyntheticStream) -> Path:
    """The stream stored and processed once (``tracemill process``)."""
    db = tmp_path_factory.mktemp("commands") / "production.duckdb"
    store_requests(db, stream.requests)
    assert main(["process", "--db", str(db)], environ=ENV) == 0
    return db


@pytest.fixture
def db(prepared: Path, tmp_path: Path) -> Path:
    """A copy of the processed store for one test."""
    copy = tmp_path / "store.duckdb"
    shutil.copy(prepared, copy)
    return copy


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), environ=ENV)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def stored(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    store = open_store(db)
    try:
        return store.query(sql, params)
    finally:
        store.close()


def situations_json(capsys: pytest.CaptureFixture[str], db: Path) -> list[SituationRecord]:
    code, out, err = run(capsys, "map", "--db", str(db), "--json")
    assert code == 0, err
    return [SituationRecord(**record) for record in json.loads(out)]


# --------------------------------------------------------------------------- map


def test_map_prints_situations_worst_first(db: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    records = situations_json(capsys, db)
    assert {r.status for r in records} >= {"new", "persistent", "fixed"}
    ranks = [STATUS_ORDER[r.status] for r in records]
    assert ranks == sorted(ranks)
    stored_members = stored(db, "SELECT situation_id, list(conversation_id ORDER BY "
                                "conversation_id) FROM situation_members GROUP BY ALL")
    assert {r.situation_id: sorted(r.member_ids) for r in records} == dict(stored_members)
    for record in records:
        assert record.conversations == len(record.member_ids)
        assert set(record.examples) <= set(record.member_ids)
        now = record.latest
        assert now.fail_rate == (now.failed / now.graded if now.graded else None)
        if now.interval is not None:
            assert now.interval.low <= (now.fail_rate or 0.0) <= now.interval.high

    code, text, _ = run(capsys, "map", "--db", str(db))
    assert code == 0
    assert "comparing v2 with v1" in text
    first = records[0]
    # label, status, both periods with n and interval, and the reason
    block = text[text.index(first.label) - len(first.status) - 2:]
    assert block.startswith(first.status.upper())
    assert f"v2: {first.latest.failed}/{first.latest.graded} = " in block
    assert f"v1: {first.previous.failed}/{first.previous.graded} = " in block
    assert first.reason in block
    # each situation's heading (a label also appears in the reasons of those judged without it)
    headings = [f"{r.status.upper()}  {r.label}  [{r.situation_id}]" for r in records]
    positions = [text.index(heading) for heading in headings if heading in text]
    assert len(positions) == min(len(records), text.count("  [s-")) and \
        positions == sorted(positions)


def test_one_situation_with_its_conversations(db: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    record = situations_json(capsys, db)[0]
    code, text, _ = run(capsys, "map", "--db", str(db), "--situation", record.situation_id)
    assert code == 0
    assert record.label in text and "examples:" in text
    for example in record.examples:
        assert example in text
    code, out, _ = run(capsys, "map", "--db", str(db), "--situation", record.situation_id,
                       "--conversations")
    assert code == 0
    assert out.split() == record.member_ids
    # members are reachable from conversations as well
    code, out, _ = run(capsys, "conversations", "--db", str(db), "--json", "--situation",
                       record.situation_id, "--limit", "1000")
    assert code == 0
    members = [ConversationRecord(**json.loads(line)) for line in out.splitlines()]
    assert sorted(m.conversation_id for m in members) == sorted(record.member_ids)
    assert all(record.situation_id in m.situations for m in members)

    code, _, err = run(capsys, "map", "--db", str(db), "--situation", "s-0000000000")
    assert code == 2
    assert "no situation 's-0000000000'" in err and record.situation_id in err


def test_cells_keep_their_detail(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "map", "--db", str(db), "--cells", "--json", "--all")
    assert code == 0
    cells = json.loads(out)
    (count,) = stored(db, "SELECT count(*) FROM failure_map")[0]
    assert len(cells) == count
    code, text, _ = run(capsys, "map", "--db", str(db), "--cells")
    assert code == 0 and text.startswith("status")


def test_running_collector_answers_the_same_records(prepared: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`map --json` through a running `tracemill serve` prints the records it prints
    offline: one schema, the same situations and members."""
    db = tmp_path / "served.duckdb"
    shutil.copy(prepared, db)
    offline = situations_json(capsys, db)
    assert offline
    server = ServeProcess(db, tmp_path, "--process-every", "0.5")
    try:
        deadline = time.monotonic() + 60
        answered: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not answered:
            result = subprocess.run(
                [sys.executable, "-m", "tracemill", "map", "--db", str(db), "--json",
                 "--http-address", server.http], capture_output=True, text=True, timeout=60)
            assert result.returncode == 0, result.stderr
            answered = json.loads(result.stdout)
            time.sleep(0.3)
        text = subprocess.run(
            [sys.executable, "-m", "tracemill", "map", "--db", str(db), "--http-address",
             server.http], capture_output=True, text=True, timeout=60)
    finally:
        server.process.terminate()
        server.process.communicate(timeout=60)
    served = [SituationRecord(**record) for record in answered]

    def comparable(records: list[SituationRecord]) -> list[dict[str, Any]]:
        return [r.model_dump(exclude={"computed_unix_nano"}) for r in records]

    assert comparable(served) == comparable(offline)
    assert [set(record) for record in answered] == [
        set(r.model_dump(mode="json")) for r in offline]
    assert "from the running collector" in text.stderr and offline[0].label in text.stdout


def test_a_collector_that_does_not_process_still_answers_the_map(prepared: Path,
                                                               tmp_path: Path) -> None:
    """`serve` without --process-every: `map` through it asks the service to process first,
    so it answers the current map (never an empty map that would say nothing fails)."""
    db = tmp_path / "unscheduled.duckdb"
    shutil.copy(prepared, db)
    server = ServeProcess(db, tmp_path)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "tracemill", "map", "--db", str(db), "--json",
             "--http-address", server.http], capture_output=True, text=True, timeout=120)
    finally:
        server.process.terminate()
        server.process.communicate(timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert [record["label"] for record in json.loads(result.stdout)]


# --------------------------------------------------------------------------- conversations


def test_conversations_table_has_a_header(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "conversations", "--db", str(db), "--limit", "3")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:4] == ["conversation", "outcome", "version", "tool"]
    assert len(rows) == 3


def test_json_records_are_openai_chat_messages(db: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "conversations", "--db", str(db), "--json", "--limit", "200")
    assert code == 0
    records = [ConversationRecord(**json.loads(line)) for line in out.splitlines()]
    assert len(records) == 200
    adapter = TypeAdapter(list[ChatCompletionMessageParam])
    with_calls = 0
    for record in records:
        adapter.validate_python(record.messages)  # loadable as the SDK's chat messages
        called: set[str] = set()
        for message in record.messages:
            if message["role"] == "assistant":
                for call in message.get("tool_calls", []):
                    assert call["type"] == "function"
                    json.loads(call["function"]["arguments"])  # JSON text as sent
                    called.add(call["id"])
            if message["role"] == "tool":
                assert message["tool_call_id"] in called  # answers an earlier call
        with_calls += bool(called)
        tools_called = [m["name"] for m in record.messages if m["role"] == "tool"]
        assert record.steps == [] or [s["tool"] for s in record.steps] == tools_called
        assert record.messages[0]["role"] == "system"
        users = [m["content"] for m in record.messages if m["role"] == "user"]
        assert users[0] == record.first_ask
        assert {record.tool, record.tool_condition, record.world_state, record.history,
                record.user_stance, record.policy_rule}.isdisjoint({None, ""})
    assert with_calls > 100


def test_show_prints_the_conversation_in_order(db: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    ((conversation_id,),) = stored(
        db, "SELECT conversation_id FROM conversations WHERE outcome = 'fail' AND "
            "json_array_length(steps) >= 1 AND json_array_length(evaluations) >= 1 "
            "ORDER BY conversation_id LIMIT 1")
    code, out, _ = run(capsys, "conversations", "--db", str(db), "--json", "--limit", "1000")
    (record,) = [ConversationRecord(**json.loads(line)) for line in out.splitlines()
                 if json.loads(line)["conversation_id"] == conversation_id]
    code, text, _ = run(capsys, "conversations", "show", conversation_id, "--db", str(db))
    assert code == 0
    markers = ["[system]", "[user]", "[assistant → tool call]", "[tool result]",
               "evaluations:", "outcome: fail", "coordinates: tool="]
    positions = [text.index(marker) for marker in markers]
    assert positions == sorted(positions)
    assert record.first_ask is not None and record.first_ask in text
    step = record.steps[0]
    assert f"{step['tool']} (id {step['call_id']})" in text
    assert text.count("[user]") == sum(m["role"] == "user" for m in record.messages)
    for situation in record.situations:
        assert situation in text

    code, out, _ = run(capsys, "conversations", "show", conversation_id, "--db", str(db),
                       "--json")
    assert code == 0 and ConversationRecord(**json.loads(out)) == record


def test_unknown_conversation_is_a_clear_error(db: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "conversations", "show", "no-such-id", "--db", str(db))
    assert (code, out) == (2, "")
    assert "no conversation 'no-such-id'" in err and "Traceback" not in err
    code, _, err = run(capsys, "conversations", "show", "--db", str(db))
    assert code == 2 and "needs a conversation id" in err


def test_show_escapes_terminal_control_characters(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.otlp import genai_span, kv, trace_request

    span = genai_span("chat", conversation="hostile")
    span.attributes.append(kv("gen_ai.input.messages", json.dumps([
        {"role": "user", "parts": [{"type": "text", "content": "hi\x1b[2J\x1b]0;pwned\x07"}]}])))
    db = tmp_path / "hostile.duckdb"
    store_requests(db, [trace_request([span]).SerializeToString()])
    code, text, _ = run(capsys, "conversations", "show", "hostile", "--db", str(db))
    assert code == 0
    assert "\x1b" not in text and "\x07" not in text
    assert "hi\\x1b[2J" in text


def test_closed_pipe_exits_quietly(db: Path) -> None:
    """`tracemill conversations | head -1`: the reader goes away after one line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tracemill", "conversations", "--db", str(db), "--limit", "500"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**ENV, "PATH": "/usr/bin:/bin"})
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=120) == 141  # the shell's code for SIGPIPE
    assert first.startswith(b"conversation")
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


# --------------------------------------------------------------------------- report gate


def test_fail_on_new_gates_on_significant_new_situations(
        db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = situations_json(capsys, db)
    new = [r for r in records if r.status == "new" and not r.low_support]
    assert new
    code, _, err = run(capsys, "report", "--db", str(db), "--out", str(tmp_path / "r"),
                       "--fail-on", "new")
    assert code == 1
    assert f"{len(new)} situations are new" in err and new[0].label in err
    code, _, _ = run(capsys, "report", "--db", str(db), "--out", str(tmp_path / "r"),
                     "--since", "v1", "--fail-on", "any")
    assert code == 1
    code, _, err = run(capsys, "report", "--db", str(db), "--out", str(tmp_path / "r"),
                       "--since", "v9", "--fail-on", "new")
    assert code == 2 and "model version 'v9' is not in the store" in err


def test_fail_on_passes_when_nothing_fails(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.otlp import genai_span, kv, trace_request

    spans = []
    for index in range(30):
        span = genai_span(f"invoke_agent {index}", conversation=f"ok-{index}")
        span.attributes.append(kv("reward", 1.0))
        spans.append(span)
    db = tmp_path / "ok.duckdb"
    store_requests(db, [trace_request(spans).SerializeToString()])
    code, out, _ = run(capsys, "report", "--db", str(db), "--out", str(tmp_path / "r"),
                       "--fail-on", "any")
    assert code == 0
    assert "wrote" in out

