"""Generation runs through the admin API, as the service runs them: what a job says while
its run goes on (run id and progress, for a resumed run too) and what stopping it keeps.

The app and its scheduler run in-process over a real processed store; the agent under
test is a real ``python:`` agent that takes a moment per reply, so that rollouts are in
flight when a stop request comes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from generator.rollout_store import start_run
from generator.schedule import ServiceJobs, record_failure
from tracemill.api import build_app
from tracemill.config import Settings
from tracemill.store import Store, open_store

REPLY_S = 0.1
"""How long the agent takes per reply."""


async def slow_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """An agent that answers in words after a moment."""
    await asyncio.sleep(REPLY_S)
    return "I have looked into it; it is done. Anything else?"


@pytest.fixture
def service(db: Path) -> Iterator[tuple[TestClient, Store]]:
    store = open_store(db)
    settings = Settings(db=db, agent=f"python:{__name__}:slow_agent", concurrency=4,
                        max_turns=2, saturation_window=0, seed=2)
    jobs = ServiceJobs(settings, store, {})
    jobs.start()
    try:
        yield TestClient(build_app(settings, store, jobs), base_url="http://127.0.0.1"), store
    finally:
        jobs.shutdown()
        store.close()


def _job(client: TestClient, job_id: str) -> dict[str, Any]:
    answer = client.get(f"/api/v1/jobs/{job_id}")
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _follow(client: TestClient, job_id: str, until: Any, seconds: float = 120
            ) -> list[dict[str, Any]]:
    """Every answer of GET /jobs/{id} until ``until(answer)``."""
    seen = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen.append(_job(client, job_id))
        if until(seen[-1]):
            return seen
        time.sleep(0.02)
    raise AssertionError(f"timed out following job {job_id}: last {seen[-1:]}")


def _ended(job: dict[str, Any]) -> bool:
    return job["state"] in ("finished", "failed", "stopped")


def test_a_stopped_run_keeps_its_rollouts_and_a_resumed_run_shows_its_progress(
        service: tuple[TestClient, Store]) -> None:
    client, _store = service
    first = client.post("/api/v1/runs", json={"budget": "60"})
    assert first.status_code == 202, first.text
    job_id = first.json()["job_id"]
    # the run id and the finished count arrive while it runs, before anything ends
    running = _follow(client, job_id, lambda j: j["finished"] >= 8)[-1]
    assert running["state"] == "running" and running["run_id"] is not None
    run_id = running["run_id"]

    asked = time.monotonic()
    stopping = client.post(f"/api/v1/jobs/{job_id}/stop")
    assert stopping.status_code == 200 and stopping.json()["state"] in ("stopping", "stopped")
    stopped = _follow(client, job_id, _ended)[-1]
    assert time.monotonic() - asked < 30  # the rollouts in flight, not a grace period
    assert stopped["state"] == "stopped" and stopped["run_id"] == run_id
    assert stopped["error"] is None
    record = client.get(f"/api/v1/runs/{run_id}").json()
    assert record["stop_reason"] == "interrupted" and record["lost"] == []
    # the rollouts that were in flight when the stop came were finished and stored
    assert record["budget"]["rollouts_started"] == record["written"] == stopped["rollouts"]
    assert stopped["finished"] == stopped["rollouts"] < 60
    assert [(r["state"], r["stop_reason"]) for r in client.get("/api/v1/runs").json()
            if r["run_id"] == run_id] == [("running", "interrupted")]  # resumable

    # the same budget again resumes that run: the job names it and counts its rollouts
    # from the start (the run keeps its first start time, so no guess by time finds it)
    again = client.post("/api/v1/runs", json={"budget": "60"}).json()
    seen = _follow(client, again["job_id"], _ended)
    during = [j for j in seen if j["state"] == "running" and j["run_id"] is not None]
    assert during, seen
    assert {j["run_id"] for j in during} == {run_id}
    assert all(j["rollouts"] >= stopped["rollouts"] for j in during)
    assert all(j["finished"] >= stopped["rollouts"] for j in during)
    finished = [j["finished"] for j in seen if j["run_id"] is not None]
    assert finished == sorted(finished) and len(set(finished)) > 3, finished
    done = seen[-1]
    assert done["state"] == "finished" and done["run_id"] == run_id
    assert done["rollouts"] == done["finished"] == 60
    resumed = client.get(f"/api/v1/runs/{run_id}").json()
    assert resumed["resumed"] and resumed["previously_stored"] == stopped["rollouts"]
    assert [(r["run_id"], r["state"]) for r in client.get("/api/v1/runs").json()] == [
        (run_id, "finished")]


def test_a_failure_marks_the_run_it_worked_on_not_runs_started_meanwhile(
        db: Path) -> None:
    """On a lake other processes start runs too; a resumed run started before the job."""
    store = open_store(db)
    try:
        cursor = store.cursor()
        try:
            start_run(cursor, "resumed-run", "fp-a", 1, {}, {}, "{}")
            job_started = time.time_ns()
            start_run(cursor, "another-process", "fp-b", 1, {}, {}, "{}")
        finally:
            cursor.close()
        marked = record_failure(store, Settings(db=db, agent="offline"), "10", job_started,
                                "the store went away", "resumed-run")
        states = dict(store.query("SELECT run_id, state FROM generation_runs"))
    finally:
        store.close()
    assert marked == "resumed-run"
    assert states == {"resumed-run": "failed", "another-process": "running"}


def test_shutting_the_service_down_stops_a_run_and_leaves_it_resumable(db: Path) -> None:
    """``serve`` on SIGTERM calls ``shutdown``: a run under way is stopped like a stop
    request (its rollouts in flight finish and are stored), not waited for to the end."""
    store = open_store(db)
    settings = Settings(db=db, agent=f"python:{__name__}:slow_agent", concurrency=4,
                        max_turns=2, saturation_window=0, seed=2)
    jobs = ServiceJobs(settings, store, {})
    jobs.start()
    try:
        client = TestClient(build_app(settings, store, jobs), base_url="http://127.0.0.1")
        job_id = client.post("/api/v1/runs", json={"budget": "600"}).json()["job_id"]
        running = _follow(client, job_id, lambda j: j["finished"] >= 4)[-1]
        asked = time.monotonic()
        jobs.shutdown()
        assert time.monotonic() - asked < 30  # 600 rollouts would take far longer
        record = client.get(f"/api/v1/runs/{running['run_id']}").json()
        assert record["stop_reason"] == "interrupted" and record["lost"] == []
        assert record["budget"]["rollouts_started"] == record["written"] < 600
    finally:
        jobs.shutdown()
        store.close()
