"""The admin app in-process over a real store: CORS, redaction of every answer, where
exports may be written; and the redactor on the shapes it meets."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from generator.schedule import ServiceJobs
from tracemill.api import build_app, export_folder
from tracemill.api_models import JSON_SAFE
from tracemill.config import Settings
from tracemill.errors import TracemillError
from tracemill.redact import MASK, Redactor
from tracemill.store import open_store

MakeClient = Callable[..., TestClient]


@pytest.fixture
def client_for(db: Path) -> Iterator[MakeClient]:
    """Apps over one real store, each with its own settings."""
    store = open_store(db)

    def make(host: str = "127.0.0.1:4319", **options: Any) -> TestClient:
        settings = Settings(db=db, **options)
        return TestClient(build_app(settings, store, ServiceJobs(settings, store, {})),
                          base_url=f"http://{host}")

    yield make
    store.close()


def test_cors_is_closed_unless_origins_are_named(client_for: MakeClient) -> None:
    ask = {"origin": "https://dash.example.com", "access-control-request-method": "GET"}
    closed = client_for()
    assert "access-control-allow-origin" not in closed.options("/api/v1/status",
                                                               headers=ask).headers
    assert "access-control-allow-origin" not in closed.get(
        "/api/v1/status", headers={"origin": "https://dash.example.com"}).headers
    opened = client_for(cors_origins=("https://dash.example.com",))
    answer = opened.options("/api/v1/status", headers=ask)
    assert answer.headers["access-control-allow-origin"] == "https://dash.example.com"
    other = opened.options("/api/v1/status", headers={**ask, "origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


def test_every_answer_is_redacted(client_for: MakeClient) -> None:
    plain = client_for()
    redacted = client_for(redact=("order_id",))
    for path in ("/api/v1/conversations?limit=100", "/api/v1/reports/trace"):
        before, after = plain.get(path).text, redacted.get(path).text
        assert '"order_id":"A-' in before.replace('\\\\"', '"').replace('\\"', '"')
        assert MASK in after and '"order_id":"A-' not in after.replace('\\"', '"')
    # the records keep their shape: the CLI reads them back as the same types
    assert len(redacted.get("/api/v1/conversations?limit=100").json()) == 100


def test_exports_through_the_api_stay_under_export_dir(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "t.duckdb", export_dir=tmp_path / "exports")
    assert export_folder(settings, "sft") == (tmp_path / "exports" / "sft").resolve()
    for outside in ("../elsewhere", "/etc", str(tmp_path)):
        with pytest.raises(TracemillError, match="export_dir"):
            export_folder(settings, outside)
    with pytest.raises(TracemillError, match="plain folder name"):
        export_folder(settings, "a\x00b")
    beside = Settings(db=tmp_path / "t.duckdb")
    assert export_folder(beside, str(tmp_path / "x")) == (tmp_path / "x").resolve()


@pytest.mark.parametrize(("document", "expected"), [
    ({"user.email": "bob@example.com", "note": "mail bob@example.com"},
     {"user.email": MASK, "note": f"mail {MASK}"}),
    ({"User.Email": ["a@b.cd"]}, {"User.Email": [MASK]}),
    ([{"key": "user.email", "value": {"stringValue": "x@y.zz"}}, {"key": "n", "value": 1}],
     [{"key": "user.email", "value": {"stringValue": MASK}}, {"key": "n", "value": 1}]),
    ({"arguments": '{"card.phone": "5551234", "q": 1}', "t": "call 5551234"},
     {"arguments": json.dumps({"card.phone": MASK, "q": 1}, separators=(",", ":")),
      "t": f"call {MASK}"}),
    ({"user.email": None, "x": "no"}, {"user.email": None, "x": "no"}),
    ({"card.phone": "12", "t": "12 apples"}, {"card.phone": MASK, "t": "12 apples"}),
])
def test_the_redactor_masks_keys_and_their_echoes(document: object, expected: object) -> None:
    assert Redactor(["user.email", "*.phone"]).apply(document) == expected


def test_no_patterns_no_change() -> None:
    document = {"user.email": "bob@example.com"}
    assert Redactor([]).apply(document) is document and not Redactor([" "])


def test_invalid_requests_answer_the_error_body_without_the_input(
        client_for: MakeClient) -> None:
    client = client_for(redact=("order_id",))
    secret = "order_id A-12345 of bob@example.com"
    answer = client.post("/api/v1/runs", json={"budget": {"order_id": secret}})
    assert answer.status_code == 422
    assert answer.json() == {"error": "body.budget: Input should be a valid string"}
    assert secret not in answer.text and "A-12345" not in answer.text
    several = client.get("/api/v1/conversations", params={"limit": 0, "outcome": secret})
    assert several.status_code == 422 and set(several.json()) == {"error"}
    problems = several.json()["error"].split("; ")
    assert sorted(p.split(":")[0] for p in problems) == ["query.limit", "query.outcome"]
    assert secret not in several.text
    # the document declares that body, not FastAPI's default one
    document = client.get("/api/v1/openapi.json").json()
    declared = document["paths"]["/api/v1/runs"]["post"]["responses"]["422"]
    assert declared["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"}
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_a_second_export_into_a_folder_being_written_is_refused(
        client_for: MakeClient, tmp_path: Path) -> None:
    # the scheduler is not started here: the first export stays queued
    client = client_for(export_dir=tmp_path / "exports")
    first = client.post("/api/v1/exports", json={"format": "sft", "out": "sft"})
    assert first.status_code == 202 and first.json()["state"] == "queued"
    again = client.post("/api/v1/exports", json={"format": "rl", "out": str(
        tmp_path / "exports" / "other" / ".." / "sft")})
    assert again.status_code == 409
    assert first.json()["export_id"] in again.json()["error"]
    assert "another folder" in again.json()["error"]
    nul = client.post("/api/v1/exports", json={"format": "sft", "out": "\x00"})
    assert nul.status_code == 422 and "NUL" in nul.json()["error"]
    elsewhere = client.post("/api/v1/exports", json={"format": "sft", "out": "other"})
    assert elsewhere.status_code == 202
    assert [e["out"] for e in client.get("/api/v1/exports").json()].count(
        str((tmp_path / "exports" / "sft").resolve())) == 1


def test_integer_bounds_are_numbers_every_json_client_carries_exactly(
        client_for: MakeClient) -> None:
    # a bound of 2^63 read as a double admits -9223372036854776000, which is below it as an
    # integer: the fuzz found the split seed refusing a value its schema allowed
    client = client_for()
    document = client.get("/api/v1/openapi.json").json()
    bounds: list[tuple[str, float]] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                if isinstance(node.get(key), int | float):
                    bounds.append((f"{where}.{key}", node[key]))
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")

    walk(document, "")
    assert any("SplitIn" in where for where, _ in bounds)
    assert [(where, bound) for where, bound in bounds if abs(bound) > JSON_SAFE] == []
    refused = client.post("/api/v1/split", json={"seed": -9223372036854776000})
    assert refused.status_code == 422
    assert refused.json()["error"].startswith("body.seed: Input should be greater than")
