"""Fixtures of the web page's browser tests: a real store, a real service, a real Chromium.

The store is filled the way production fills it (the synthetic production stream through
the collector's pipeline, plus one conversation whose text is hostile HTML), processed
into a failure map, and given rollouts by a real `tracemill generate` run with the
offline agent. `tracemill serve` runs as a subprocess on free ports; Debian's Chromium
(``/usr/bin/chromium``) runs headless under Playwright with a fresh profile. Screenshots
of every page go to ``$TRACEMILL_TEST_ARTIFACTS/screenshots`` (default
``tests/artifacts/screenshots``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from playwright.sync_api import BrowserContext, Page, Playwright, sync_playwright

from processor.run import ProcessOptions, process
from tests.api.older_stream import older_stream
from tests.support.otlp import kv, trace_request
from tests.support.pipeline import store_requests
from tests.support.synthetic import production_stream
from tracemill.cli import main
from tracemill.store import open_store

CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = ('<script>window.__pwned = "script"</script><img src=x '
           'onerror="window.__pwned = \'img\'"><b>bold?</b> & "quotes"')
"""A user message that would run script if the page put data into HTML."""
HOSTILE_ID = "conv-<img src=x onerror=window.__pwned=1>"
"""A conversation id that is itself markup."""
SLASHED_ID = "team-7/session 3?x=1#a%2F"
"""A conversation id with the characters a URL treats specially ("/" above all)."""
TOKEN = "page-admin-token-42"
ARTIFACTS = Path(os.environ.get("TRACEMILL_TEST_ARTIFACTS")
                 or Path(__file__).resolve().parents[1] / "artifacts") / "screenshots"
_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _hostile_request(conversation: str = HOSTILE_ID, text: str = HOSTILE,
                     first: int = 0) -> bytes:
    """One chat span of a conversation whose user and agent text are HTML."""
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])
    reply = json.dumps([{"role": "assistant", "parts": [
        {"type": "text", "content": "Sure: <a href=\"javascript:alert(1)\">click</a>"}]}])
    span = Span(trace_id=bytes(range(first, first + 16)),
                span_id=bytes(range(first, first + 8)), name="chat gpt-4o",
                kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=1_750_100_000_000_000_000,
                end_time_unix_nano=1_750_100_001_000_000_000)
    span.attributes.extend([
        kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", "gpt-4o"),
        kv("gen_ai.conversation.id", conversation), kv("gen_ai.input.messages", messages),
        kv("gen_ai.output.messages", reply)])
    request = trace_request([span], service="web-test-bot")
    request.resource_spans[0].resource.attributes.append(kv("service.version", "v2"))
    return request.SerializeToString()


@pytest.fixture(scope="session")
def web_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed store with a failure map (v2 against v1; two older versions, v0 and v0.5,
    to compare with by choice) and one offline generation run."""
    db = tmp_path_factory.mktemp("web") / "tracemill.duckdb"
    stream = production_stream(seed=11, conversations_per_version=400)
    store_requests(db, [*older_stream(13, ("v0", "v0.5"), stream.requests), *stream.requests,
                        _hostile_request(),
                        _hostile_request(SLASHED_ID, "Where is my parcel?", first=100)])
    store = open_store(db)
    try:
        process(store, ProcessOptions())
    finally:
        store.close()
    code = main(["generate", "--db", str(db), "--agent", "offline", "--budget", "12",
                 "--no-progress"], environ={})
    assert code == 0, "the offline generation run failed"
    return db


class Service:
    """A real `tracemill serve` subprocess on free ports, its page at ``page_url``."""

    def __init__(self, db: Path, tmp: Path, *extra: str,
                 env: dict[str, str] | None = None) -> None:
        ready = tmp / f"ready-{time.monotonic_ns()}.json"
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACEMILL_")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tracemill", "serve", "--db", str(db),
             "--grpc-address", "127.0.0.1:0", "--http-address", "127.0.0.1:0",
             "--api-address", "127.0.0.1:0", "--ready-file", str(ready),
             "--log-format", "text", "--agent", "offline", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp,
            env={**clean, **(env or {})})
        deadline = time.monotonic() + 90
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"serve did not start: {self.process.communicate()}")
            time.sleep(0.05)
        self.api = json.loads(ready.read_text())["api"]
        self.base = f"http://{self.api}"
        self.page_url = f"{self.base}/ui/"
        self.client = httpx.Client(base_url=f"{self.base}/api/v1", timeout=60,
                                   headers={"authorization": f"Bearer {TOKEN}"})

    def get(self, path: str, **params: Any) -> Any:
        """GET an API path (``/map``) and its JSON, failing on any error status."""
        answer = self.client.get(path, params=params)
        assert answer.status_code == 200, (path, answer.status_code, answer.text)
        return answer.json()

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=120)
        assert self.process.returncode == 0, err


def _serve(db: Path, tmp: Path, *extra: str,
           env: dict[str, str] | None = None) -> Iterator[Service]:
    target = tmp / "tracemill.duckdb"
    shutil.copy(db, target)
    service = Service(target, tmp, *extra, env=env)
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="module")
def service(web_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The service on a copy of the store, on loopback without a token, with nightly
    generation scheduled (on 29 February at 03:00 UTC: on the schedule, never firing
    during a test)."""
    yield from _serve(web_db, tmp_path_factory.mktemp("serve"),
                      "--generate-cron", "0 3 29 2 *", "--generate-budget", "3")


@pytest.fixture
def guarded(web_db: Path, tmp_path: Path) -> Iterator[Service]:
    """The service on a copy of the store, asking for the admin token."""
    yield from _serve(web_db, tmp_path, env={"TRACEMILL_ADMIN_TOKEN": TOKEN})


@pytest.fixture(scope="session")
def playwright_driver() -> Iterator[Playwright]:
    if not CHROMIUM.exists():
        pytest.skip("BROWSER TESTS SKIPPED: /usr/bin/chromium is missing; install Debian's "
                    "chromium package (apt-get install -y chromium) to test the web page")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright_driver: Playwright,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Headless Debian Chromium with a fresh profile."""
    context = playwright_driver.chromium.launch_persistent_context(
        str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM),
        headless=True, args=_ARGS, viewport={"width": 1400, "height": 900})
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """A fresh tab (its own sessionStorage) that fails the test on any script error."""
    tab = browser.new_page()
    tab.set_default_timeout(30_000)
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    # "Failed to load resource" lines are the browser reporting 401s and 404s the page
    # asked for on purpose; anything else logged as an error is a defect
    tab.on("console", lambda message: errors.append(message.text)
           if message.type == "error" and not message.text.startswith("Failed to load")
           else None)
    try:
        yield tab
    finally:
        tab.close()
    assert not errors, f"the page logged errors: {errors}"


def screenshot(page: Page, name: str) -> Path:
    """Keep a full-page screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000, f"{path} is suspiciously small"
    return path
