"""A generation run that dies is resumed, not redone; a finished one is never resumed.

The crash is real: ``python -m tracemill generate`` runs as its own process and is killed
with SIGKILL while it commits rollouts (no handler, no cleanup, a DuckDB write-ahead log
left behind), then the same command runs again, as a cron job's next attempt would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.generator.conftest import CliResult, ReadRollouts, RunCli, StoreCopy
from tracemill.store import open_store

pytestmark = pytest.mark.integration

_BATCHES_BEFORE_KILL = 3
"""Kill once the run has logged this many committed batches of rollouts (the store cannot
be opened to look while the writer holds its lock)."""


def _environment() -> dict[str, str]:
    """The machine's environment without tracemill settings or model keys."""
    return {key: value for key, value in os.environ.items()
            if not key.startswith("TRACEMILL_") and not key.endswith("_API_KEY")}


def _query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    store = open_store(db, read_only=True)
    try:
        return store.query(sql)
    finally:
        store.close()


def _kill_while_writing(command: list[str], cwd: Path) -> None:
    """Start ``command`` and SIGKILL it once it has logged a few committed batches."""
    log = cwd / "first.err"
    with (cwd / "first.out").open("wb") as out, log.open("wb") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=cwd,
                                   env=_environment())
        try:
            deadline = time.monotonic() + 90
            while process.poll() is None and time.monotonic() < deadline:
                if log.read_text(errors="replace").count('"stored rollouts"') >= \
                        _BATCHES_BEFORE_KILL:
                    break
                time.sleep(0.05)
            assert process.poll() is None, (
                "the run ended before it could be killed: "
                + log.read_text(errors="replace")[-2000:])
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.kill()
            process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.slow
def test_a_killed_run_is_resumed_to_exactly_its_budget(store_copy: StoreCopy,
                                                       tmp_path: Path) -> None:
    db = store_copy("crash.duckdb")
    # --saturation-window 0: the run must go to its budget, not stop when the squares fill
    command = [sys.executable, "-m", "tracemill", "generate", "--db", str(db),
               "--agent", "offline", "--budget", "4000", "--seed", "1",
               "--saturation-window", "0", "--no-progress", "--json"]
    _kill_while_writing([*command, "--log-level", "debug"], tmp_path)

    (crashed,) = _query(db, "SELECT run_id, state, record IS NULL FROM generation_runs")
    run_id = crashed[0]
    assert crashed[1:] == ("running", True)
    ((stored_before,),) = _query(db, "SELECT count(*) FROM rollouts")
    assert 0 < stored_before < 4000

    again = subprocess.run(command, capture_output=True, cwd=tmp_path, env=_environment(),
                           timeout=300, check=False)
    assert again.returncode == 0, again.stderr.decode(errors="replace")[-2000:]
    record = json.loads(again.stdout)
    assert record["run_id"] == run_id
    assert record["resumed"] is True
    assert record["previously_stored"] == stored_before
    assert record["written"] == 4000 - stored_before
    assert record["stop_reason"] == "plan_done"
    # the ledger counts what the killed process spent
    assert record["budget"]["kind"] == "rollouts"
    assert record["budget"]["spent"] == 4000
    assert record["lost"] == []

    assert _query(db, "SELECT count(*), count(DISTINCT idx), min(idx), max(idx), "
                      "count(DISTINCT run_id) FROM rollouts") == [(4000, 4000, 0, 3999, 1)]
    assert _query(db, "SELECT run_id, state FROM generation_runs") == [(run_id, "finished")]


def _generate(run_cli: RunCli, db: Path, *args: str) -> CliResult:
    return run_cli(["generate", "--db", str(db), "--no-progress", "--json", *args])


def test_a_finished_run_is_not_resumed(run_cli: RunCli, store_copy: StoreCopy,
                                       read_rollouts: ReadRollouts) -> None:
    db = store_copy("again.duckdb")
    command = ("--agent", "offline", "--budget", "20", "--seed", "4")
    records = []
    # three in a row: finished runs with the same options, some within the same second
    for _ in range(3):
        result = _generate(run_cli, db, *command)
        assert result.code == 0, result.err
        records.append(result.json())
    for record in records:
        assert record["resumed"] is False
        assert record["previously_stored"] == 0
        assert record["written"] == 20
    run_ids = [record["run_id"] for record in records]
    assert len(set(run_ids)) == 3
    assert sorted(_query(db, "SELECT run_id, state FROM generation_runs")) == sorted(
        (run_id, "finished") for run_id in run_ids)
    rows = read_rollouts(db)
    assert len(rows) == 60
    assert {run_id: sum(row["run_id"] == run_id for row in rows) for run_id in run_ids} == {
        run_id: 20 for run_id in run_ids}


def test_resume_with_other_options_is_refused(run_cli: RunCli, store_copy: StoreCopy) -> None:
    db = store_copy("refused.duckdb")
    first = _generate(run_cli, db, "--agent", "offline", "--budget", "20", "--seed", "4")
    assert first.code == 0, first.err
    run_id = first.json()["run_id"]

    other = _generate(run_cli, db, "--agent", "offline", "--budget", "30", "--seed", "4",
                      "--resume", run_id)
    assert other.code != 0 and other.out == ""
    (line,) = other.err.strip().splitlines()
    assert line.startswith("tracemill generate: error: ")
    assert run_id in line and "other options" in line and "tracemill runs" in line

    unknown = _generate(run_cli, db, "--agent", "offline", "--resume", "20990101T000000-nosuch")
    assert unknown.code != 0 and "Traceback" not in unknown.err
    assert "'20990101T000000-nosuch'" in unknown.err and "tracemill runs" in unknown.err
    # neither refusal touched the store
    assert _query(db, "SELECT run_id, state FROM generation_runs") == [(run_id, "finished")]
    assert _query(db, "SELECT count(*) FROM rollouts") == [(20,)]
