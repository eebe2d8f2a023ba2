"""The admin API refuses other hosts and cross-site changes (DNS rebinding, a page on
another origin posting to loopback), answers its own page and the CLI as before, and
listens on IPv6 loopback at an address a URL can name.

The app runs in-process over a real store, and once as the real server on a free port
asked with raw HTTP headers, as a browser would send them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from generator.schedule import ServiceJobs
from tracemill.api import ApiServer, build_app
from tracemill.config import Settings, load_settings
from tracemill.errors import ConfigError
from tracemill.page import PAGE_PATH
from tracemill.store import open_store

MakeClient = Callable[..., TestClient]
EVIL = "https://evil.example"


@pytest.fixture
def client_for(db: Path) -> Iterator[MakeClient]:
    """A client of an app over one real store, asking as ``host``."""
    store = open_store(db)

    def make(host: str = "127.0.0.1:4319", **options: Any) -> TestClient:
        settings = Settings(db=db, **options)
        app = build_app(settings, store, ServiceJobs(settings, store, {}))
        return TestClient(app, base_url=f"http://{host}")

    yield make
    store.close()


@pytest.mark.parametrize("host", ["127.0.0.1:4319", "localhost:4319", "[::1]:4319",
                                  "LOCALHOST", "127.0.0.1"])
def test_loopback_names_are_answered(client_for: MakeClient, host: str) -> None:
    client = client_for(host)
    assert client.get("/api/v1/status").status_code == 200
    assert client.get(PAGE_PATH).status_code == 200  # the page too


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:4319",
                                  "127.0.0.1.attacker.example", "[::2]:4319"])
def test_another_host_is_refused(client_for: MakeClient, host: str) -> None:
    client = client_for(host)
    for answer in (client.get("/api/v1/map"), client.post("/api/v1/process"),
                   client.get(PAGE_PATH)):
        assert answer.status_code == 400, answer.text
        assert "api_hosts (TRACEMILL_API_HOSTS)" in answer.json()["error"]


def test_named_hosts_and_the_api_address_host_are_answered(client_for: MakeClient) -> None:
    named = client_for("tracemill.internal:4319", api_hosts=("tracemill.internal",))
    assert named.get("/api/v1/status").status_code == 200
    pattern = client_for("a.example.com", api_hosts=("*.example.com",))
    assert pattern.get("/api/v1/status").status_code == 200
    assert client_for("example.org", api_hosts=("*.example.com",)).get(
        "/api/v1/status").status_code == 400
    own = client_for("10.1.2.3:4319", api_address="10.1.2.3:4319", admin_token=SecretStr("t"))
    assert own.get("/api/v1/status", headers={"authorization": "Bearer t"}).status_code == 200
    assert client_for("10.1.2.4:4319", api_address="10.1.2.3:4319").get(
        "/api/v1/status").status_code == 400


def test_on_every_interface_the_token_guards_any_name(client_for: MakeClient) -> None:
    # a cluster reaches it by service names no one lists; the required token stops a page
    token = {"authorization": "Bearer t"}
    client = client_for("tracemill:4319", api_address="0.0.0.0:4319",
                        admin_token=SecretStr("t"))
    assert client.get("/api/v1/status", headers=token).status_code == 200
    assert client.get("/api/v1/status").status_code == 401
    narrowed = client_for("tracemill:4319", api_address="0.0.0.0:4319",
                          admin_token=SecretStr("t"), api_hosts=("tracemill.internal",))
    assert narrowed.get("/api/v1/status", headers=token).status_code == 400


def test_a_change_from_another_origin_is_refused(client_for: MakeClient) -> None:
    client = client_for()
    for path in ("/api/v1/process", "/api/v1/jobs/x/stop"):
        answer = client.post(path, headers={"origin": EVIL})
        assert answer.status_code == 403, answer.text
        assert "cors_origins (TRACEMILL_CORS_ORIGINS)" in answer.json()["error"]
    assert client.post("/api/v1/jobs/x/stop", headers={"origin": "null"}).status_code == 403
    # the page's own origin, and the CLI (no Origin), get through to the route
    for headers in ({"origin": "http://127.0.0.1:4319"}, {}):
        assert client.post("/api/v1/jobs/x/stop", headers=headers).status_code == 404
    # reading is left to CORS: the browser withholds the answer, nothing changed
    answer = client.get("/api/v1/status", headers={"origin": EVIL})
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers
    # origins named in cors_origins may change things
    opened = client_for(cors_origins=("https://dash.example.com",))
    assert opened.post("/api/v1/jobs/x/stop", headers={
        "origin": "https://dash.example.com"}).status_code == 404
    assert opened.post("/api/v1/jobs/x/stop", headers={"origin": EVIL}).status_code == 403


def test_the_real_server_refuses_what_a_rebinding_page_sends(db: Path) -> None:
    settings = Settings(db=db, api_address="127.0.0.1:0")
    store = open_store(db)
    server = ApiServer(settings, build_app(settings, store, ServiceJobs(settings, store, {})))
    server.start()
    try:
        base = f"http://{server.address}/api/v1"
        rebound = httpx.post(f"{base}/process", headers={"host": "attacker.example"},
                             timeout=30)
        assert rebound.status_code == 400
        cross = httpx.post(f"{base}/jobs/nope/stop", headers={"origin": EVIL}, timeout=30)
        assert cross.status_code == 403
        same = httpx.post(f"{base}/jobs/nope/stop", timeout=30,
                          headers={"origin": f"http://{server.address}"})
        assert same.status_code == 404
    finally:
        server.stop()
        store.close()


def test_ipv6_loopback_is_named_in_brackets(db: Path) -> None:
    settings = Settings(db=db, api_address="[::1]:0")
    store = open_store(db)
    server = ApiServer(settings, build_app(settings, store, ServiceJobs(settings, store, {})))
    server.start()
    try:
        assert server.address.startswith("[::1]:"), server.address
        answer = httpx.get(f"http://{server.address}/api/v1/status", timeout=30)
        assert answer.status_code == 200, answer.text
    finally:
        server.stop()
        store.close()


@pytest.mark.parametrize(("given", "expected"), [
    ("Tracemill.Internal", ("tracemill.internal",)),
    ("fd00::1, [::2], *.example.com", ("[fd00::1]", "[::2]", "*.example.com")),
])
def test_api_hosts_are_read_as_host_headers_name_them(given: str,
                                                      expected: tuple[str, ...]) -> None:
    assert load_settings({}, {"TRACEMILL_API_HOSTS": given}).api_hosts == expected


@pytest.mark.parametrize("given", ["tracemill.internal:4319", "a.*.com", "*example.com",
                                   "http://x"])
def test_a_host_with_a_port_or_a_bad_pattern_is_refused(given: str) -> None:
    with pytest.raises(ConfigError, match=r"api_hosts \(from environment variable "
                                          r"TRACEMILL_API_HOSTS\): .*not a host name"):
        load_settings({}, {"TRACEMILL_API_HOSTS": given})
