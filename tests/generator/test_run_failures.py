"""A run whose parts fail says so, stops, and keeps its secrets.

A grader that raises leaves rollouts stored ungraded and stops the run after ten in a
row (exit 1); credentials in a spec's URL never reach the store or the record; a key a
server echoes back is masked in errors.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.backends._http import mask_key
from generator.backends._spec import redact_secrets
from tests.generator.conftest import ReadRollouts, RunCli, StoreCopy
from tests.support.openai_loopback import ErrorReply, OpenAILoopback
from tracemill.store import open_store

pytestmark = pytest.mark.integration

_GRADERS = '''
def broken(rollout):
    raise RuntimeError("the grading service is down")


def lenient(rollout):
    return {"reward": 1.0, "reason": "fine"}
'''


@pytest.fixture
def graders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    folder = tmp_path / "graders_pkg"
    folder.mkdir()
    (folder / "my_graders.py").write_text(_GRADERS)
    monkeypatch.syspath_prepend(str(folder))
    yield "my_graders"
    sys.modules.pop("my_graders", None)


def test_a_failing_grader_leaves_rollouts_ungraded_and_stops_the_run(
        run_cli: RunCli, store_copy: StoreCopy, read_rollouts: ReadRollouts,
        graders: str) -> None:
    db = store_copy("broken-grader.duckdb")
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json", "--agent",
                      "offline:0", "--budget", "60", "--concurrency", "2",
                      "--grader", f"python:{graders}:broken"])
    assert result.code == 1
    assert "no rollout could be graded" in result.err
    record = json.loads(result.out)
    assert record["stop_reason"] == "grader_failing"
    assert "grader_errors" in record["degraded"]
    assert "the grading service is down" in record["last_errors"]["grader"]
    rows = read_rollouts(db)
    # stored, ungraded, with the grader's error: the transcripts are not thrown away
    assert 10 <= len(rows) <= 12  # ten in a row, plus the one in flight beside them
    assert all(not row["graded"] and row["error"].startswith("grader:") for row in rows)
    assert record["lost"] == []


def test_the_grader_decides_only_when_every_conduct_check_passed(
        run_cli: RunCli, store_copy: StoreCopy, read_rollouts: ReadRollouts,
        graders: str) -> None:
    db = store_copy("lenient.duckdb")
    result = run_cli(["generate", "--db", str(db), "--no-progress", "--json", "--agent",
                      "offline:0.5", "--budget", "40", "--grader", f"python:{graders}:lenient"])
    assert result.code == 0, result.err
    rows = read_rollouts(db)
    failed_checks = [r for r in rows
                     if not all(c["passed"] for c in json.loads(r["checks"]))]
    assert failed_checks, "a 50% mistake rate plants failures"
    for row in rows:
        if row in failed_checks:
            assert row["passed"] is False and row["labeled_by"] == "conduct-checks/1"
        else:
            assert row["passed"] is True and "python:my_graders:lenient" in row["labeled_by"]


def test_credentials_in_a_spec_url_are_never_stored(run_cli: RunCli,
                                                     store_copy: StoreCopy) -> None:
    db = store_copy("secret-url.duckdb")
    with OpenAILoopback(default=ErrorReply.server_error()) as server:
        host = server.base_url.split("://", 1)[1]
        spec = f"vllm:m@http://bob:hunter2@{host}?api_key=QSECRET"
        result = run_cli(["generate", "--db", str(db), "--no-progress", "--json",
                          "--agent", spec, "--budget", "2", "--max-retries", "0"])
        paths = {request.path for request in server.requests}
    assert result.code == 1  # every call failed: nothing graded
    assert paths and all(path.startswith("/v1/chat/completions") for path in paths)
    store = open_store(db, read_only=True)
    try:
        stored = json.dumps(store.query(
            "SELECT config, record, plan FROM generation_runs")) + json.dumps(store.query(
                "SELECT agent, error, lineage FROM rollouts"))
    finally:
        store.close()
    for secret in ("hunter2", "QSECRET"):
        assert secret not in stored
        assert secret not in result.out and secret not in result.err
    assert "***" in stored


def test_secrets_are_masked_in_text() -> None:
    assert redact_secrets("vllm:m@https://u:p@host/v1?key=abc&x=1") == \
        "vllm:m@https://***@host/v1?***"
    assert redact_secrets("openai:gpt-4o-mini") == "openai:gpt-4o-mini"
    key = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX"
    echoed = f"Incorrect API key provided: {key[:3]}...{key[-10:]} and {key}"
    masked = mask_key(echoed, key)
    assert key not in masked and key[-10:] not in masked
    assert mask_key("the key sk-x is wrong, sk-xyz stays", "sk-x") == \
        "the key *** is wrong, sk-xyz stays"


# --------------------------------------------------------------------------- commits


def test_a_batch_still_being_written_when_the_run_ends_is_in_its_record(
        tmp_path: Path) -> None:
    """The second-run record bug (``100 written this time (+-96 earlier) ... 4 graded``):
    the periodic flush had taken 96 rows and was still writing them (slow on a store that
    already held a run) when the last rollout finished; the flusher was cancelled, the
    last 4 rows were written, and the record was read from the store before the 96 were
    committed. ``close()`` must return only once every row handed in is committed."""
    import asyncio
    import threading

    import duckdb

    from generator.execute import RolloutWriter

    db = tmp_path / "rows.duckdb"
    connection = duckdb.connect(str(db))
    connection.execute("CREATE TABLE rows (idx INTEGER)")
    first_batch_may_commit = threading.Event()
    batches: list[int] = []

    def insert(rows: list[dict[str, object]]) -> None:
        batches.append(len(rows))
        if len(batches) == 1:  # the first batch is slow, as on a store holding a run
            assert first_batch_may_commit.wait(10)
        cursor = connection.cursor()
        try:
            cursor.executemany("INSERT INTO rows VALUES (?)", [[row["idx"]] for row in rows])
        finally:
            cursor.close()

    async def run() -> int:
        writer = RolloutWriter(insert, every_s=0.01)
        writer.start()
        for index in range(96):
            await writer.add({"idx": index})
        while not batches:  # the periodic flush took the 96 and is writing them
            await asyncio.sleep(0.005)
        for index in range(96, 100):
            await writer.add({"idx": index})
        threading.Timer(0.3, first_batch_may_commit.set).start()
        await writer.close()
        (count,) = connection.execute("SELECT count(*) FROM rows").fetchone() or (0,)
        return int(count)

    try:
        assert asyncio.run(run()) == 100
        assert batches[0] == 96 and sum(batches) == 100
    finally:
        connection.close()
