"""`tracemill serve` as one long-running service: schedule, admin API, CLI through it.

Every test runs a real ``python -m tracemill serve`` subprocess on free ports (port 0,
read back from its ready file) over a real DuckDB file that the real collector pipeline
filled with a production stream and the processor turned into a failure map. The CLI is
driven in-process while the service holds the file, then again offline once it stopped,
and both outputs are compared.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.collector.serving import ServeProcess
from tests.support.otlp import genai_span, trace_request
from tests.support.pipeline import processed_production_store
from tests.support.waiting import wait_until
from tracemill.cli import main

pytestmark = pytest.mark.integration

TOKEN = "admin-secret-123"


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("TRACEMILL_")}


@contextlib.contextmanager
def serving(db: Path, tmp: Path, *extra: str,
            env: dict[str, str] | None = None) -> Iterator[ServeProcess]:
    service = ServeProcess(db, tmp, *extra, env=env, cwd=tmp, clean_env=True,
                           log_file=tmp / f"serve-{time.monotonic_ns()}.log")
    try:
        yield service
    finally:
        code, err = service.stop()
        assert code == 0, err


@pytest.fixture(scope="module")
def production_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return processed_production_store(
        tmp_path_factory.mktemp("service") / "production.duckdb", seed=11)


@pytest.fixture
def db(production_db: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tracemill.duckdb"
    shutil.copy(production_db, target)
    return target


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str],
         environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv, environ=environ or {})
    out, err = capsys.readouterr()
    return code, out, err



def test_schedule_api_and_cli_through_it(db: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the CLI's default store is ./tracemill.duckdb: `db`
    auth = {"authorization": f"Bearer {TOKEN}"}
    with serving(db, tmp_path, "--generate-cron", "*/2 * * * * *", "--agent", "offline",
                 "--generate-budget", "3", env={"TRACEMILL_ADMIN_TOKEN": TOKEN}) as service, \
            httpx.Client(headers=auth, timeout=30) as client:
        # tokens: the admin API refuses requests without the admin token
        assert httpx.get(service.url("/status")).status_code == 401
        assert httpx.get(service.url("/map"),
                         headers={"authorization": "Bearer wrong"}).status_code == 401
        # the OpenAPI document names every route
        spec = client.get(service.url("/openapi.json")).json()
        assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
        assert {"/api/v1/status", "/api/v1/map", "/api/v1/map/situations/{situation_id}",
                "/api/v1/conversations", "/api/v1/conversations/{conversation_id}",
                "/api/v1/runs", "/api/v1/runs/{run_id}", "/api/v1/jobs/{job_id}",
                "/api/v1/rollouts", "/api/v1/rollouts/{rollout_id}",
                "/api/v1/labels"} <= set(spec["paths"])
        # no CORS: a browser on another origin gets no permission
        preflight = httpx.options(service.url("/status"), headers={
            "origin": "http://evil.example", "access-control-request-method": "GET"})
        assert "access-control-allow-origin" not in preflight.headers

        # the schedule: a cron run fires and lands in generation_runs
        status = client.get(service.url("/status")).json()
        assert [j["name"] for j in status["schedule"]] == ["generate"]
        assert status["schedule"][0]["next_run"] is not None
        finished = wait_until(lambda: [j for j in client.get(service.url("/status")).json()["jobs"]
                                  if j["state"] == "finished"], 120, "a scheduled run")
        scheduled = finished[0]
        assert scheduled["trigger"] == "schedule" and scheduled["rollouts"] == 3
        run_ids = {row["run_id"] for row in client.get(service.url("/runs")).json()}
        assert scheduled["run_id"] in run_ids

        # the map, filtered, and one situation with its members
        situations = client.get(service.url("/map")).json()
        assert situations, "the production stream has failing situations"
        new = client.get(service.url("/map"), params={"status": "new"}).json()
        assert new and {s["status"] for s in new} == {"new"}
        on_tool = client.get(service.url("/map"), params={"axis": "tool"}).json()
        assert all(any(k["axis"] == "tool" for k in s["coordinates"]) for s in on_tool)
        one = client.get(service.url(f"/map/situations/{new[0]['situation_id']}")).json()
        assert one["member_ids"] and one == new[0]
        assert client.get(service.url("/map/situations/s-nope")).status_code == 404

        # conversations: list and one with its transcript
        listed = client.get(service.url("/conversations"), params={"limit": 5}).json()
        assert len(listed) == 5
        shown = client.get(service.url(f"/conversations/{listed[0]['conversation_id']}")).json()
        assert shown == listed[0] and shown["messages"]

        # rollouts of the scheduled run, one in full; a late label on it shows up
        rollouts = client.get(service.url("/rollouts"),
                              params={"run": scheduled["run_id"]}).json()
        assert len(rollouts) == 3
        target = rollouts[0]["rollout_id"]
        posted = client.post(service.url("/labels"), json={
            "rollout_id": target, "passed": False, "labeled_by": "support-desk"})
        assert posted.status_code == 201 and posted.json() == {"stored": 1, "unknown": []}
        labels = client.get(service.url(f"/rollouts/{target}")).json()["labels"]
        assert [(x["labeled_by"], x["passed"]) for x in labels] == [("support-desk", False)]
        bad = client.post(service.url("/labels"), json={"rollout_id": target,
                                                        "labeled_by": "x"})
        assert bad.status_code == 422  # neither passed nor reward

        # a run started through the API: 202 with a job (409 while a cron run is under
        # way, so retry), then its progress until it lands with its run id
        def start() -> Any:
            answer = client.post(service.url("/runs"), json={"budget": "2"})
            assert answer.status_code in (202, 409), answer.text
            return answer.json() if answer.status_code == 202 else None

        job = wait_until(start, 60, "a free slot to start a run")
        assert job["trigger"] == "api" and job["budget"] == "2"
        done = wait_until(lambda: (j := client.get(service.url(f"/jobs/{job['job_id']}")).json())
                     ["state"] in ("finished", "failed") and j, 120, "the API-started run")
        assert done["state"] == "finished" and done["rollouts"] == 2, done
        record = client.get(service.url(f"/runs/{done['run_id']}")).json()
        assert record["run_id"] == done["run_id"]
        assert client.get(service.url("/jobs/nope")).status_code == 404

        # the CLI while the service holds the file: through the API
        env = {"TRACEMILL_API_ADDRESS": service.api, "TRACEMILL_ADMIN_TOKEN": TOKEN,
               "TRACEMILL_HTTP_ADDRESS": service.http}
        code, out, err = _cli(["runs"], capsys, env)
        assert code == 0, err
        assert scheduled["run_id"] in out and "next scheduled generation: 20" in out
        code, _, err = _cli(["conversations", "--limit", "3"], capsys,
                            {"TRACEMILL_API_ADDRESS": service.api})
        assert code == 3 and "refused the admin token" in err
        label_file = tmp_path / "late.csv"
        label_file.write_text(f"rollout_id,passed,labeled_by\n{rollouts[1]['rollout_id']},"
                              "true,cli-user\n")
        code, out, err = _cli(["label", str(label_file)], capsys, env)
        assert code == 0 and "stored 1 labels" in out, err
        labels = client.get(service.url(f"/rollouts/{rollouts[1]['rollout_id']}")).json()
        assert [x["labeled_by"] for x in labels["labels"]] == ["cli-user"]
        through_label = _cli(["rollouts", "show", target, "--json"], capsys, env)
        through = {name: _cli(argv, capsys, env) for name, argv in _reads(scheduled["run_id"],
                                                                         listed, target).items()}

    # ... and offline, once the service has stopped: the same output
    for name, argv in _reads(scheduled["run_id"], listed, target).items():
        offline = _cli(argv, capsys)
        assert offline[0] == 0 and through[name][0] == 0, (name, offline[2], through[name][2])
        assert _same(name, offline[1]) == _same(name, through[name][1]), name
    assert _cli(["rollouts", "show", target, "--json"], capsys)[1] == through_label[1]


def _same(name: str, out: str) -> Any:
    """What must match between offline and through-the-service output: the map is
    recomputed by every processing run (its timestamp moves), and the text says where it
    came from."""
    if name == "map":
        return [{k: v for k, v in s.items() if k != "computed_unix_nano"}
                for s in json.loads(out)]
    return [line for line in out.splitlines()
            if not line.startswith("from the running collector")]


def _reads(run_id: str, listed: list[dict[str, Any]], rollout: str) -> dict[str, list[str]]:
    return {
        "map": ["map", "--json"],
        "situations-text": ["map", "--limit", "5"],
        "conversations": ["conversations", "--json", "--limit", "7"],
        "conversations-text": ["conversations", "--outcome", "fail", "--limit", "4"],
        "conversation": ["conversations", "show", listed[0]["conversation_id"], "--json"],
        "conversation-text": ["conversations", "show", listed[1]["conversation_id"]],
        "run": ["runs", run_id],
        "rollouts": ["rollouts", "--run", run_id, "--json"],
        "rollouts-text": ["rollouts", "--run", run_id],
        "rollout-text": ["rollouts", "show", rollout],
    }


def test_a_failed_scheduled_run_is_recorded_and_ingest_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "empty.duckdb"
    assert main(["migrate", "--db", str(db)], environ={}) == 0
    with serving(db, tmp_path, "--generate-cron", "*/2 * * * * *", "--agent", "offline",
                 "--generate-budget", "2") as service:
        failed = wait_until(lambda: [j for j in httpx.get(service.url("/status")).json()["jobs"]
                                if j["state"] == "failed"], 60, "a failed scheduled run")
        assert "nothing to plan" in failed[0]["error"]
        runs = httpx.get(service.url("/runs")).json()
        assert any(r["run_id"] == failed[0]["run_id"] and r["state"] == "failed"
                   and r["stop_reason"] == "error" for r in runs)
        # ... and ingestion goes on after the failed run
        spans = [genai_span(trace_id=bytes([7] * 16)) for _ in range(3)]
        sent = httpx.post(f"http://{service.http}/v1/traces",
                          content=trace_request(spans).SerializeToString(),
                          headers={"content-type": "application/x-protobuf"})
        assert sent.status_code == 200
        # acknowledged means durable in the spool; rows follow within moments
        deadline = time.monotonic() + 30
        while (httpx.get(service.url("/status")).json()["counts"]["spans"] < 3
               and time.monotonic() < deadline):
            time.sleep(0.1)
        assert httpx.get(service.url("/status")).json()["counts"]["spans"] == 3
        record = httpx.get(service.url(f"/runs/{failed[0]['run_id']}")).json()
        assert "nothing to plan" in record["error"]


def test_a_second_serve_on_a_taken_port_is_refused(db: Path, tmp_path: Path) -> None:
    with serving(db, tmp_path) as first:
        other = tmp_path / "other.duckdb"
        for flag, address in (("--grpc-address", first.grpc), ("--http-address", first.http),
                              ("--api-address", first.api)):
            ports = {"--grpc-address": "127.0.0.1:0", "--http-address": "127.0.0.1:0",
                     "--api-address": "127.0.0.1:0", flag: address}
            second = subprocess.run(
                [sys.executable, "-m", "tracemill", "serve", "--db", str(other),
                 *[x for pair in ports.items() for x in pair]],
                capture_output=True, text=True, timeout=60, cwd=tmp_path, env=_clean_env())
            assert second.returncode == 3, second.stderr
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1 and address in lines[0] and flag in lines[0], lines
            assert "Event loop is closed" not in second.stderr
            assert not other.exists()


def test_admin_api_beyond_loopback_needs_a_token(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.duckdb"
    code, _, err = _cli(["serve", "--db", str(db), "--api-address", "0.0.0.0:0",
                         "--grpc-address", "127.0.0.1:0", "--http-address", "127.0.0.1:0"],
                        capsys)
    assert code == 2 and "TRACEMILL_ADMIN_TOKEN" in err and not db.exists()
    # a schedule that could never run is refused at start, not at 2 am
    code, _, err = _cli(["serve", "--db", str(db), "--generate-cron", "0 2 * * *",
                         "--grpc-address", "127.0.0.1:0", "--http-address", "127.0.0.1:0"],
                        capsys)
    assert code == 2 and "--agent SPEC" in err and not db.exists()


def test_schedule_settings_are_validated_and_the_api_sits_next_to_otlp_http() -> None:
    from tracemill.config import load_settings
    from tracemill.errors import ConfigError

    with pytest.raises(ConfigError, match=r"generate_cron \(from environment variable "
                                          r"TRACEMILL_GENERATE_CRON\)"):
        load_settings({}, {"TRACEMILL_GENERATE_CRON": "0 25 * * *"})
    with pytest.raises(ConfigError, match="5 fields"):
        load_settings({"generate_cron": "nightly"}, {})
    assert load_settings({}, {}).api_address == "127.0.0.1:4319"
    assert load_settings({"http_address": "127.0.0.1:0"}, {}).api_address == "127.0.0.1:0"
    # OTLP opened to the cluster leaves administration on loopback
    assert load_settings({"http_address": "0.0.0.0:9000"}, {}).api_address == "127.0.0.1:9001"
    assert load_settings({"http_address": "127.0.0.1:0", "api_address": "127.0.0.1:7"},
                         {}).api_address == "127.0.0.1:7"


def test_serve_prints_where_the_admin_api_and_the_page_are(db: Path, tmp_path: Path) -> None:
    with serving(db, tmp_path) as service:
        assert service.process.stdout is not None
        printed = [service.process.stdout.readline().strip() for _ in range(2)]
        page = f"http://{service.api}/ui/"
        assert printed == [
            f"tracemill admin API: http://{service.api}/api/v1 (OpenAPI document at "
            "/api/v1/openapi.json)",
            f"tracemill page: open {page} in a browser (the failure map, versions, runs, "
            "reports)"]
        answer = httpx.get(page)
        assert answer.status_code == 200 and "<title>tracemill</title>" in answer.text
