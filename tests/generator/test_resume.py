"""A generation run that dies is resumed, not redone; a finished one is never resumed.

The crash is real: ``python -m tracemill generate`` runs as its own process and is killed
with SIGKILL while it commits rollouts (no handler, no cleanup, a DuckDB write-ahead log
left behind), then the same command runs again, as a cron job's next attempt would.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from generator.backends import BackendOptions
from generator.budget import BudgetLedger
from generator.commands import run_config
from generator.execute import Execution, RolloutWriter
from generator.plan import PlanOptions, build_plan, load_plan_inputs
from generator.roles import Roles
from generator.run import run_generation
from generator.run_config import plan_capacity
from tests.generator.conftest import CliResult, ReadRollouts, RunCli, StoreCopy
from tracemill.config import Settings
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


def test_a_stopped_run_keeps_what_was_in_flight_and_its_resumption_reports_progress(
        store_copy: StoreCopy) -> None:
    """A stop request lets the rollouts in flight finish and be stored (they were paid
    for), leaves the run resumable, and ``on_progress`` names the run and counts its
    finished rollouts from the first moment: for the resumed run too, starting from what
    the stopped invocation stored."""
    db = store_copy("stopped.duckdb")
    settings = Settings(db=db, agent="offline", budget="60", seed=3, concurrency=4,
                        saturation_window=0)
    store = open_store(db)
    try:
        stop = threading.Event()
        first: list[tuple[str, int]] = []

        def stop_after_ten(run_id: str, finished: int) -> None:
            first.append((run_id, finished))
            if finished >= 10:
                stop.set()

        stopped = asyncio.run(run_generation(store, run_config(settings), {}, progress=False,
                                             on_progress=stop_after_ten, stop=stop))
        run_id = stopped.run_id
        assert stopped.stop_reason == "interrupted"
        # the rollouts in flight when the stop came finished and were stored: every
        # rollout started was written, none was thrown away
        assert 10 <= stopped.written <= 13
        assert stopped.budget.rollouts_started == stopped.written and stopped.lost == []
        assert first == [(run_id, n) for n in range(stopped.written + 1)]
        assert store.query("SELECT state, count(*) FILTER (WHERE r.run_id IS NOT NULL) "
                           "FROM generation_runs g LEFT JOIN rollouts r USING (run_id) "
                           "GROUP BY state") == [("running", stopped.written)]

        again: list[tuple[str, int]] = []
        resumed = asyncio.run(run_generation(store, run_config(settings), {}, progress=False,
                                             on_progress=lambda r, n: again.append((r, n))))
    finally:
        store.close()
    assert resumed.run_id == run_id and resumed.resumed
    assert resumed.previously_stored == stopped.written
    assert resumed.written == 60 - stopped.written and resumed.stop_reason == "plan_done"
    # the run id before the first rollout, then one more finished rollout at a time
    assert again == [(run_id, n) for n in range(stopped.written, 61)]
    assert _query(db, "SELECT run_id, state FROM generation_runs") == [(run_id, "finished")]
    assert _query(db, "SELECT count(DISTINCT idx) FROM rollouts") == [(60,)]


async def hanging_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """An agent whose endpoint never answers."""
    await asyncio.sleep(3600)
    return "never"


def test_rollouts_still_running_after_the_stop_grace_are_cancelled(
        store_copy: StoreCopy) -> None:
    """The fallback of a stop: rollouts that hang are not waited for forever."""
    db = store_copy("hanging.duckdb")
    settings = Settings(db=db, agent=f"python:{__name__}:hanging_agent", budget="20",
                        concurrency=3, saturation_window=0)
    config = run_config(settings)
    options = config.backend or BackendOptions()
    store = open_store(db)
    try:
        cursor = store.cursor()
        try:
            plan = build_plan(load_plan_inputs(cursor), plan_capacity(config, options.prices),
                              PlanOptions(seed=config.seed))
        finally:
            cursor.close()
    finally:
        store.close()
    stored: list[object] = []
    stop = threading.Event()

    async def stopped_soon() -> tuple[str, Execution, float]:
        roles = Roles(config, {}, options)
        try:
            execution = Execution(RolloutWriter(stored.extend), config, roles, plan,
                                  BudgetLedger(config.budget), options.prices, "r-hang",
                                  frozenset(), False, stop=stop, stop_grace_s=0.5)
            asyncio.get_running_loop().call_later(0.3, stop.set)
            began = time.monotonic()
            reason = await execution.run()
            return reason, execution, time.monotonic() - began
        finally:
            await roles.aclose()

    reason, execution, took = asyncio.run(stopped_soon())
    assert reason == "interrupted"
    assert 0.8 <= took < 10  # the grace was given, then the three in flight cancelled
    assert execution.finished == [] and stored == []
    assert len(execution.lost) == 3
    assert all("cancelled 0.5 s after the stop request" in x for x in execution.lost)
