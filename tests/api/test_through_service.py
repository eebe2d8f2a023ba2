"""Every command through a running `tracemill serve`, found by its store alone.

A real ``python -m tracemill serve`` subprocess on free ports (none of them the defaults)
holds a real DuckDB file that the collector's real pipeline filled with a production
stream. The CLI is given only ``--db`` and the admin token: it must find the service
through the file beside the store, go through the admin API for every command, and print
what it prints offline once the service has stopped. Redaction, the stop of a run,
exports as they land, the service's log and the service file are checked on the way.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from processor.conversation_records import read_conversations
from tests.collector.serving import ServeProcess
from tests.support.otlp import genai_span, trace_request
from tests.support.waiting import wait_until
from tracemill.cli import main
from tracemill.service_info import info_path, read_service_info
from tracemill.store import open_store

pytestmark = pytest.mark.integration

TOKEN = "admin-token-4d1f"
INGEST = "ingest-token-9a7c"
ORDER_ID = re.compile(r"A-\d{5}")
SLASHED = "team-7/session 3?x=1#a%2F"
"""A conversation id with the characters a URL path treats specially."""


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str],
         environ: dict[str, str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv, environ=environ)
    out, err = capsys.readouterr()
    return code, out, err



def _order_ids(db: Path) -> dict[str, set[str]]:
    """Per conversation, the order ids it names as a tool argument (``order_id``)."""
    store = open_store(db)
    try:
        cursor = store.cursor()
        found: dict[str, set[str]] = {}
        for record in read_conversations(cursor, limit=10_000):
            for step in record.steps:
                found.setdefault(record.conversation_id, set()).update(
                    ORDER_ID.findall(json.dumps(step.get("arguments"))))
        cursor.close()
    finally:
        store.close()
    return found


def _leaked(records: list[dict[str, Any]], order_ids: dict[str, set[str]]) -> list[str]:
    """Order ids that a redacted record still shows although it passed them as tool
    arguments (an id only ever written in free text is not an attribute: not redacted)."""
    return [f"{r['conversation_id']}: {i}" for r in records
            for i in order_ids.get(r["conversation_id"], set()) if i in json.dumps(r)]


def _reads(situation: str, conversation: str, rollout: str, run_id: str,
           out: Path) -> dict[str, list[str]]:
    return {
        "map": ["map", "--json"],
        "map-text": ["map", "--limit", "5"],
        "cells": ["map", "--cells", "--all", "--json"],
        "situation": ["map", "--situation", situation],
        "members": ["map", "--situation", situation, "--conversations"],
        "conversations": ["conversations", "--json", "--limit", "9"],
        "conversations-text": ["conversations", "--outcome", "fail", "--limit", "6"],
        "conversation": ["conversations", "show", conversation, "--json"],
        "conversation-text": ["conversations", "show", conversation],
        "report": ["report", "--out", str(out / "report")],
        "regression": ["report", "--since", "v1", "--fail-on", "new", "--out",
                       str(out / "regression")],
        "unknown-version": ["report", "--since", "v0", "--out", str(out / "nope")],
        "runs": ["runs"],
        "run": ["runs", run_id],
        "rollouts": ["rollouts", "--run", run_id],
        "rollout": ["rollouts", "show", rollout, "--json"],
        "rollout-text": ["rollouts", "show", rollout],
        "stats": ["stats", "--json"],
        "export": ["export", "--format", "sft", "--out", str(out / "sft")],
        "judges": ["judges", "--json"],
        "judges-text": ["judges"],
        "split": ["split", "--json"],
        "split-text": ["split"],
    }


def _comparable(name: str, out: str, folder: Path) -> Any:
    """What must match: everything but the times a computation is stamped with."""
    if name in ("map", "cells"):
        return [{k: v for k, v in s.items() if k != "computed_unix_nano"}
                for s in json.loads(out)]
    if name in ("report", "regression"):
        report = json.loads((folder / name / "report.json").read_text())
        report.pop("generated_unix_nano")
        for situation in report["situations"]:
            situation.pop("computed_unix_nano")
        html = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?( UTC)?", "TIME",
                      (folder / name / "report.html").read_text())
        return out, report, html
    if name == "export":
        files = sorted((folder / "sft").rglob("*"))
        return out, {p.name: p.read_bytes() for p in files
                     if p.is_file() and p.suffix == ".jsonl"}
    return out


def _run_reads(reads: dict[str, list[str]], folder: Path, capsys: pytest.CaptureFixture[str],
               environ: dict[str, str]) -> dict[str, tuple[int, Any, str]]:
    done = {}
    for name, argv in reads.items():
        code, out, err = _cli(argv, capsys, environ)
        out, err = out.replace(str(folder), "OUT"), err.replace(str(folder), "OUT")
        done[name] = (code, _comparable(name, out, folder), err)
    return done


def test_every_command_goes_through_the_service_with_the_same_output(
        db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    order_ids = _order_ids(db)
    assert sum(len(ids) for ids in order_ids.values()) > 100
    environ = {"TRACEMILL_ADMIN_TOKEN": TOKEN, "TRACEMILL_AUTH_TOKEN": INGEST,
               "TRACEMILL_REDACT": "order_id", "TRACEMILL_DB": str(db),
               "TRACEMILL_AGENT": "offline"}
    auth = {"authorization": f"Bearer {TOKEN}"}
    # a run and a split made offline, so that exports have something to write
    assert _cli(["generate", "--budget", "30", "--json"], capsys, environ)[0] == 0
    assert _cli(["split"], capsys, environ)[0] == 0
    service = ServeProcess(db, tmp_path, env=environ, cwd=tmp_path, clean_env=True,
                           log_file=tmp_path / "serve.log")
    through: dict[str, tuple[int, Any, str]] = {}
    client = httpx.Client(headers=auth, timeout=120)
    try:
        # the service file names where it listens, and nothing secret
        info = read_service_info(db)
        assert info is not None and info.pid == service.pid and info.api == service.api
        assert TOKEN not in info_path(db).read_text()
        assert service.api.rsplit(":", 1)[1] not in ("4319", "0")

        # generate and label through the service (the CLI knows only --db and the tokens)
        code, out, err = _cli(["generate", "--budget", "4", "--json"], capsys, environ)
        assert code == 0, err
        run_id = json.loads(out)["run_id"]
        assert json.loads(out)["written"] == 4
        rollout = f"{run_id}:0"
        labels = tmp_path / "late.csv"
        labels.write_text(f"rollout_id,passed,labeled_by\n{rollout},false,support\n")
        code, out, err = _cli(["label", str(labels)], capsys, environ)
        assert code == 0 and "stored 1 labels" in out, err
        code, out, err = _cli(["process"], capsys, environ)
        assert code == 0 and "failure map:" in out, err

        # split through the service: the new run's situations are placed now, so that the
        # reads below (through the service, then offline) find the same stored split
        code, out, err = _cli(["split", "--json"], capsys, environ)
        assert code == 0, err
        assert json.loads(out)["situations"] == json.loads(out)["held_out"] + json.loads(
            out)["train"] > 0
        # eval does not go through the service: one line saying what to do, exit 3
        code, out, err = _cli(["eval", "--agent", "offline"], capsys, environ)
        assert code == 3 and out == ""
        assert len(err.strip().splitlines()) == 1
        assert f"kill -TERM {service.pid}" in err and "tracemill eval: error:" in err

        situations = client.get(service.url("/map")).json()
        conversation = next(c["conversation_id"] for c in client.get(
            service.url("/conversations"), params={"outcome": "fail", "limit": 200}).json()
            if c["steps"])
        through = _run_reads(_reads(situations[0]["situation_id"], conversation, rollout,
                                    run_id, tmp_path / "through"),
                             tmp_path / "through", capsys, environ)

        # redaction: no order id in what the API answers, the CLI prints or reports hold
        listed = client.get(service.url("/conversations"), params={"limit": 300}).json()
        assert "[redacted]" in json.dumps(listed) and _leaked(listed, order_ids) == []
        shown = client.get(service.url(f"/conversations/{conversation}")).json()
        assert order_ids[conversation] and _leaked([shown], order_ids) == []
        printed = [json.loads(line) for line in through["conversations"][1].splitlines()]
        assert _leaked(printed, order_ids) == []
        assert not order_ids[conversation] & set(ORDER_ID.findall(
            through["conversation-text"][1]))
        html = (tmp_path / "through" / "report" / "report.html").read_text()
        assert "[redacted]" in html

        # reports over the API, the regression one against a named version
        trace = client.get(service.url("/reports/trace")).json()
        assert trace["report"]["situations"] and trace["examples"]
        regression = client.get(service.url("/reports/regression"),
                                params={"since": "v1"}).json()
        assert regression["report"]["comparison"]["previous"] == "v1"
        missing = client.get(service.url("/reports/regression"), params={"since": "v0"})
        assert missing.status_code == 404 and "v0" in missing.json()["error"]

        # exports as they land: the one the CLI wrote is listed with its card
        landed = client.get(service.url("/exports")).json()
        assert [e["state"] for e in landed] == ["finished"]
        assert landed[0]["card"]["files"] and landed[0]["out"].endswith("sft")
        outside = client.post(service.url("/exports"),
                              json={"format": "sft", "out": "/etc/tracemill"})
        assert outside.status_code == 403 and "export_dir" in outside.json()["error"]

        # the ingestion token is not the admin token, either way round
        assert httpx.get(service.url("/status"),
                         headers={"authorization": f"Bearer {INGEST}"}).status_code == 401
        assert httpx.get(f"http://{service.http}/stats",
                         headers=auth).status_code == 401
        # the map is the admin API's (token, redaction), not the ingestion port's
        assert httpx.get(f"http://{service.http}/map", headers={
            "authorization": f"Bearer {INGEST}"}).status_code == 404
    finally:
        client.close()
        code, log = service.stop()
    assert code == 0, log
    assert not info_path(db).exists(), "the service file is removed on exit"

    # ... and offline, once the service has stopped: the same output
    offline = _run_reads(_reads(situations[0]["situation_id"], conversation, rollout, run_id,
                                tmp_path / "offline"), tmp_path / "offline", capsys, environ)
    for name, (code, out, err) in offline.items():
        assert code == through[name][0], (name, err, through[name][2])
        assert out == through[name][1], name
    assert offline["unknown-version"][0] == 2
    assert offline["unknown-version"][2] == through["unknown-version"][2]
    assert offline["regression"][0] in (0, 1) and offline["report"][0] == 0
    # the late human label on the first rollout measured the run's grader
    judged = json.loads(offline["judges"][1])
    assert judged and sum(j["agreement"]["n"] for j in judged) >= 1
    assert json.loads(offline["split"][1])["newly_placed"] == 0

    # the service's log holds no token and no message content
    contents = [json.loads(line)["first_ask"]
                for line in through["conversations"][1].splitlines()]
    assert contents and all(contents)
    for secret in (TOKEN, INGEST, *contents, *order_ids[conversation]):
        assert secret not in log, secret
    assert "generation run finished" in log  # the log is there, just without payloads


def test_a_run_is_stopped_through_the_api_and_can_be_resumed(db: Path, tmp_path: Path) -> None:
    service = ServeProcess(db, tmp_path, "--agent", "offline", "--log-level", "info",
                           cwd=tmp_path, clean_env=True, log_file=tmp_path / "serve.log",
                           env={"TRACEMILL_CONCURRENCY": "1", "TRACEMILL_MAX_TURNS": "8"})
    try:
        job = httpx.post(service.url("/runs"), json={"budget": "3000"}).json()
        assert job["state"] == "queued" and job["budget"] == "3000"
        wait_until(lambda: httpx.get(service.url(f"/jobs/{job['job_id']}")).json()["rollouts"],
              60, "the first rollouts")
        stopping = httpx.post(service.url(f"/jobs/{job['job_id']}/stop"))
        assert stopping.status_code == 200
        assert stopping.json()["state"] in ("stopping", "stopped")
        done = wait_until(lambda: (j := httpx.get(service.url(f"/jobs/{job['job_id']}")).json())
                     ["state"] == "stopped" and j, 60, "the run to stop")
        assert 0 < done["rollouts"] < 3000
        record = httpx.get(service.url(f"/runs/{done['run_id']}")).json()
        assert record["stop_reason"] == "interrupted"
        assert record["written"] == done["rollouts"] < record["planned"]
        runs = httpx.get(service.url("/runs")).json()
        # recorded as unfinished: `tracemill generate` with the same options resumes it
        assert [(r["stop_reason"], r["state"]) for r in runs
                if r["run_id"] == done["run_id"]] == [("interrupted", "running")]
        assert httpx.post(service.url("/jobs/nope/stop")).status_code == 404
    finally:
        code, log = service.stop()
    assert code == 0, log


def test_stats_names_the_missing_ingestion_token_and_prints_times(
        db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    environ = {"TRACEMILL_DB": str(db)}
    service = ServeProcess(db, tmp_path, cwd=tmp_path, clean_env=True,
                           env={"TRACEMILL_AUTH_TOKEN": INGEST},
                           log_file=tmp_path / "serve.log")
    try:
        code, out, err = _cli(["stats"], capsys, environ)
        assert code == 3 and out == ""
        assert len(err.strip().splitlines()) == 1 and "TRACEMILL_AUTH_TOKEN" in err
        # (not the status code; the free port may hold the digits: 127.0.0.1:40173)
        assert not re.search(r"\b401\b", err) and "Unauthorized" not in err
        code, out, err = _cli(["stats"], capsys, {**environ, "TRACEMILL_AUTH_TOKEN": INGEST})
        assert code == 0, err
    finally:
        service.stop()
    times = dict(line.split(None, 1) for line in out.splitlines())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", times["first_span"])
    assert times["first_span"] < times["last_span"]
    code, offline, _ = _cli(["stats"], capsys, environ)
    assert code == 0 and offline == out


def test_a_stale_service_file_is_ignored(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    info_path(db).write_text(json.dumps({"pid": 2**22 + 17, "grpc": "x:1", "http": "x:2",
                                         "api": "x:3"}))
    assert read_service_info(db) is None  # no such process
    info_path(db).write_text(json.dumps({"pid": os.getpid(), "grpc": "x:1", "http": "x:2",
                                         "api": "127.0.0.1:9"}))
    assert read_service_info(db) is not None
    assert read_service_info(db, holder=os.getpid() + 1) is None  # not the lock's holder
    info_path(db).write_text("{not json")
    assert read_service_info(db) is None


def test_ingest_keeps_going_while_the_cli_reads(db: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """New spans sent while the service runs are in what the CLI prints next: it asks
    the service to process first, as offline commands do."""
    service = ServeProcess(db, tmp_path, cwd=tmp_path, clean_env=True,
                           log_file=tmp_path / "serve.log")
    try:
        spans = [genai_span(f"invoke_agent {i}", conversation=f"fresh-{i}") for i in range(3)]
        spans.append(genai_span("invoke_agent 3", conversation=SLASHED))
        sent = httpx.post(f"http://{service.http}/v1/traces",
                          content=trace_request(spans).SerializeToString(),
                          headers={"content-type": "application/x-protobuf"})
        assert sent.status_code == 200
        code, out, err = _cli(["conversations", "show", "fresh-1", "--json"], capsys,
                              {"TRACEMILL_DB": str(db)})
        assert code == 0, err
        assert json.loads(out)["conversation_id"] == "fresh-1"
        # an id with "/" (and "?", "#", "%", a space) in one path segment, percent-encoded
        code, out, err = _cli(["conversations", "show", SLASHED, "--json"], capsys,
                              {"TRACEMILL_DB": str(db)})
        assert code == 0, err
        assert json.loads(out)["conversation_id"] == SLASHED
        answer = httpx.get(service.url("/conversations/" + quote(SLASHED, safe="")))
        assert answer.status_code == 200 and answer.json()["conversation_id"] == SLASHED
        missing = httpx.get(service.url("/conversations/" + quote("team/nobody", safe="")))
        assert missing.status_code == 404 and "team/nobody" in missing.json()["error"]
        assert httpx.get(service.url("/rollouts/run%2Fx:0")).status_code == 404
        assert httpx.get(service.url("/map/situations/s%2Fx")).status_code == 404
    finally:
        service.stop()
