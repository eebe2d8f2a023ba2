"""The command line's side of the admin API (``tracemill.collector_client``) against the
real API server on a free port, found through a real service file: IPv6 loopback, an
address no URL can hold, and the API's refusals printed as one line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.schedule import ServiceJobs
from tracemill.api import ApiServer, build_app
from tracemill.collector_client import ApiNotFound, api_url, ask_api
from tracemill.config import Settings
from tracemill.errors import StoreLockedError, TracemillError
from tracemill.service_info import ServiceInfo, info_path, write_service_info
from tracemill.store import open_store


@pytest.fixture
def ipv6_api(db: Path) -> Iterator[ApiServer]:
    """The API over a real store on IPv6 loopback, port 0."""
    settings = Settings(db=db, api_address="[::1]:0")
    store = open_store(db)
    server = ApiServer(settings, build_app(settings, store, ServiceJobs(settings, store, {})))
    server.start()
    try:
        yield server
    finally:
        server.stop()
        store.close()


def _locked(db: Path) -> StoreLockedError:
    """What the CLI holds when this process is the one holding the store."""
    return StoreLockedError(str(db), os.getpid(), None)


def _announce(db: Path, api: str) -> None:
    write_service_info(db, ServiceInfo(pid=os.getpid(), grpc="127.0.0.1:1",
                                       http="127.0.0.1:2", api=api, tls=False))


def test_the_cli_reaches_a_service_on_ipv6_loopback(db: Path, ipv6_api: ApiServer) -> None:
    _announce(db, ipv6_api.address)
    settings = Settings(db=db)
    assert api_url(settings, _locked(db)) == f"http://{ipv6_api.address}/api/v1"
    status = ask_api(settings, "/status", _locked(db))
    assert status["situations"] > 0
    # a service file written before addresses were bracketed names it as ::1:PORT
    port = ipv6_api.address.rpartition(":")[2]
    info_path(db).write_text(json.dumps({"pid": os.getpid(), "grpc": "x:1", "http": "x:2",
                                         "api": f"::1:{port}"}))
    assert ask_api(settings, "/status", _locked(db)) == status


def test_an_address_no_url_can_hold_is_one_clear_error(db: Path) -> None:
    _announce(db, "[::1]:http")
    with pytest.raises(TracemillError, match=r"cannot ask the running service at "
                                             r"'http://\[::1\]:http/api/v1/status': Invalid "
                                             r"port.*TRACEMILL_API_ADDRESS"):
        ask_api(Settings(db=db), "/status", _locked(db))


def test_an_invalid_request_is_refused_in_one_line(db: Path, ipv6_api: ApiServer) -> None:
    _announce(db, ipv6_api.address)
    with pytest.raises(ApiNotFound) as refused:
        ask_api(Settings(db=db), "/runs", _locked(db), body={"budget": 5})
    assert str(refused.value) == "body.budget: Input should be a valid string"
