"""The failure map against a chosen model version (``since``): the API, the CLI offline
and the CLI through a running service answer the same records, and the stored map is left
comparing the latest two versions.

The store holds four model versions from two real production streams through the
collector's pipeline (v0 and v0.5, then v1 and v2; see ``four_versions_db``)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from generator.schedule import ServiceJobs
from tests.collector.serving import ServeProcess
from tracemill.api import build_app
from tracemill.cli import main
from tracemill.config import Settings
from tracemill.store import open_store


@pytest.fixture
def store_copy(four_versions_db: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tracemill.duckdb"
    shutil.copy(four_versions_db, target)
    return target


@pytest.fixture
def client(store_copy: Path) -> Iterator[TestClient]:
    store = open_store(store_copy)
    settings = Settings(db=store_copy)
    try:
        yield TestClient(build_app(settings, store, ServiceJobs(settings, store, {})),
                         base_url="http://127.0.0.1:4319")
    finally:
        store.close()


def _stable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without the time they were computed at."""
    return [{k: v for k, v in r.items() if k != "computed_unix_nano"} for r in records]


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str],
         environ: dict[str, str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv, environ=environ)
    out, err = capsys.readouterr()
    return code, out, err


def test_since_compares_the_latest_version_with_the_one_named(client: TestClient) -> None:
    versions = client.get("/api/v1/versions").json()
    assert [v["version"] for v in versions] == ["v0", "v0.5", "v1", "v2"]
    assert all(v["conversations"] >= 400 for v in versions)
    stored = client.get("/api/v1/map").json()
    assert stored and {(s["previous"]["version"], s["latest"]["version"])
                       for s in stored} == {("v1", "v2")}

    since = client.get("/api/v1/map", params={"since": "v0"}).json()
    assert since and {(s["previous"]["version"], s["latest"]["version"])
                      for s in since} == {("v0", "v2")}
    # the v0 period is counted from v0's conversations, not v1's
    assert _stable(since) != _stable(stored)
    stored_ids = {s["situation_id"] for s in stored}
    shared = [s for s in since if s["situation_id"] in stored_ids and s["previous"]["graded"]]
    assert shared
    for situation in shared[:3]:
        members = client.get("/api/v1/conversations", params={
            "situation": situation["situation_id"], "version": "v0", "limit": 10_000}).json()
        graded = [c for c in members if c["outcome"] in ("pass", "fail")]
        assert len(graded) == situation["previous"]["graded"]
        assert sum(c["outcome"] == "fail" for c in graded) == situation["previous"]["failed"]
    # filters combine with it
    status = since[0]["status"]
    filtered = client.get("/api/v1/map", params={"since": "v0", "status": status}).json()
    assert _stable(filtered) == _stable([s for s in since if s["status"] == status])
    cells = client.get("/api/v1/map/cells", params={"since": "v0"}).json()
    assert cells and {c["previous"]["version"] for c in cells} == {"v0"}
    one = since[0]["situation_id"]
    found = client.get(f"/api/v1/map/situations/{one}", params={"since": "v0"}).json()
    assert _stable([found]) == _stable([since[0]])

    # the stored map still compares the latest two versions
    assert _stable(client.get("/api/v1/map").json()) == _stable(stored)


@pytest.mark.parametrize(("since", "words"), [
    ("v9", "known versions: v0, v0.5, v1, v2"), ("v2", "is the latest version")])
def test_an_unknown_or_latest_since_is_a_404_naming_the_versions(
        client: TestClient, since: str, words: str) -> None:
    for path in ("/api/v1/map", "/api/v1/map/cells", "/api/v1/map/situations/s-0"):
        answer = client.get(path, params={"since": since})
        assert answer.status_code == 404 and words in answer.json()["error"], path


def test_map_since_prints_what_the_api_answers(store_copy: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(store_copy)
    try:
        settings = Settings(db=store_copy)
        client = TestClient(build_app(settings, store, ServiceJobs(settings, store, {})),
                            base_url="http://127.0.0.1:4319")
        api = client.get("/api/v1/map", params={"since": "v0.5"}).json()
    finally:
        store.close()
    code, out, err = _cli(["map", "--db", str(store_copy), "--since", "v0.5", "--json"],
                          capsys, {})
    assert code == 0, err
    assert _stable(json.loads(out)) == _stable(api)
    code, out, err = _cli(["map", "--db", str(store_copy), "--since", "v9"], capsys, {})
    assert code == 2 and out == ""
    assert err.strip() == ("tracemill map: error: model version 'v9' is not in the store; "
                           "known versions: v0, v0.5, v1, v2")


@pytest.mark.integration
def test_map_since_through_the_service_prints_the_same(
        store_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    environ = {"TRACEMILL_DB": str(store_copy)}
    reads = {"since": ["map", "--since", "v0", "--json"],
             "since-text": ["map", "--since", "v0.5", "--limit", "8"],
             "since-cells": ["map", "--since", "v0", "--cells", "--json"],
             "unknown": ["map", "--since", "v9"]}
    service = ServeProcess(store_copy, tmp_path, cwd=tmp_path, clean_env=True,
                           log_file=tmp_path / "serve.log")
    try:
        through = {name: _cli(argv, capsys, environ) for name, argv in reads.items()}
    finally:
        code, log = service.stop()
    assert code == 0, log
    offline = {name: _cli(argv, capsys, environ) for name, argv in reads.items()}
    for name in reads:
        (code, out, err), (code2, out2, err2) = through[name], offline[name]
        assert code == code2, (name, err, err2)
        if name in ("since", "since-cells"):
            assert _stable(json.loads(out)) == _stable(json.loads(out2)), name
        else:
            assert out == out2, name
    assert through["unknown"][0] == 2
    assert through["unknown"][2] == offline["unknown"][2]
    assert "from the running collector" in through["since"][2]
