"""The web page in a real headless Chromium against a real `tracemill serve`.

Each test opens the page the way a user does (``/`` redirects to ``/ui/``), clicks
through it, and checks what it shows against the JSON API it reads from; screenshots of
every page are kept (see conftest). Hostile conversation text must render as text.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from tests.support.waiting import wait_until
from tests.web.conftest import HOSTILE, HOSTILE_ID, SLASHED_ID, TOKEN, Service, screenshot
from tracemill.page import MODULES

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _texts(page: Page, selector: str) -> list[str]:
    return list(page.eval_on_selector_all(selector, "els => els.map(e => e.textContent)"))


def _data(page: Page, selector: str, key: str) -> list[str]:
    return list(page.eval_on_selector_all(
        selector, f"els => els.map(e => e.dataset[{json.dumps(key)}])"))


def _report(answer: dict[str, Any]) -> dict[str, Any]:
    """The report in an answer of /reports/...: ``{report, examples}`` or the bare report."""
    found: dict[str, Any] = answer.get("report", answer)
    return found


def _no_markup_from_data(page: Page) -> None:
    """Nothing of HOSTILE became an element or ran."""
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img").count() == 0
    assert page.get_by_text("bold?", exact=True).count() == 0  # no <b>bold?</b> element



def test_the_map_is_a_heatmap_that_opens_a_situation(service: Service, page: Page) -> None:
    situations = service.get("/map")
    page.goto(service.base + "/")
    page.wait_for_selector("#heatmap tbody tr")
    assert page.url == service.page_url + "#/map"
    # one row per situation, worst first, as the API orders them
    assert _data(page, "#heatmap tbody tr", "situation") == [s["situation_id"]
                                                             for s in situations]
    # every graded period is a cell with its counts and rate
    for s in situations:
        for which in ("previous", "latest"):
            period = s[which]
            if not period["graded"]:
                continue
            cell = page.locator(f'#heatmap a.cell[data-situation="{s["situation_id"]}"]'
                                f'[data-version="{period["version"]}"]')
            assert cell.locator(".n").inner_text() == f"{period['failed']}/{period['graded']}"
            shown = float(cell.locator(".rate").inner_text().rstrip("%"))
            assert abs(shown - 100 * period["fail_rate"]) < 0.51, (s["label"], which)
    for status in ("new", "persistent", "fixed"):
        count = sum(1 for s in situations if s["status"] == status)
        assert count, f"the production stream has {status} situations"
        assert page.locator(f".kpi.status-{status} b").inner_text() == str(count)
    # the pair cells of the two axes chosen: one cell per graded pair, with its counts
    pair = set(page.locator('select[data-filter="pair"]').input_value().split("|"))
    graded = sorted(f"{c['latest']['failed']}/{c['latest']['graded']}"
                    for c in service.get("/map/cells") if c["axis_b"] != "*"
                    and {c["axis_a"], c["axis_b"]} == pair and c["latest"]["graded"])
    assert graded and sorted(_texts(page, "table.pairs .cell .n")) == graded
    screenshot(page, "map")

    # click the latest version's cell of a failing situation that has rollouts
    target = next(s for s in situations if s["status"] in ("new", "persistent")
                  and service.get("/rollouts", situation=s["situation_id"], limit=1))
    ident, latest = target["situation_id"], target["latest"]["version"]
    page.click(f'#heatmap a.cell[data-situation="{ident}"][data-version="{latest}"]')
    page.wait_for_selector("#production details.item")
    assert page.url.endswith(f"#/situation/{ident}?version={latest}")
    assert page.locator(".reason").inner_text() == target["reason"]
    conversations = service.get("/conversations", situation=ident, version=latest, limit=50)
    assert len(conversations) > 20, "enough members to need the 'show all' button"
    ids = [c["conversation_id"] for c in conversations]
    assert _texts(page, "#production details.item .id") == ids[:20]
    page.click("#production button.more")
    assert _texts(page, "#production details.item .id") == ids
    rollouts = service.get("/rollouts", situation=ident, limit=50)
    assert _texts(page, "#rollouts details.item .id") == [r["rollout_id"] for r in rollouts]

    # open one of each: the transcripts side by side, every user turn readable
    page.locator("#production details.item summary").first.click()
    page.locator("#rollouts details.item summary").first.click()
    users = [m["content"] for m in conversations[0]["messages"] if m["role"] == "user"]
    # an opened item fetches its transcript: wait for it to render
    wait_until(lambda: _texts(page, "#production details.item[open] .msg.user .text") == users,
               20, "the production transcript")
    simulated = [m["content"] for m in rollouts[0]["messages"] if m["role"] == "user"]
    wait_until(lambda: _texts(page, "#rollouts details.item[open] .msg.user .text")
               == simulated, 20, "the rollout transcript")
    calls = [c["function"]["name"] for m in conversations[0]["messages"]
             for c in m.get("tool_calls") or []]
    assert _texts(page, "#production details.item[open] .call .fn") == calls
    left = page.locator("#production").bounding_box()
    right = page.locator("#rollouts").bounding_box()
    assert left and right and left["x"] + left["width"] <= right["x"], "not side by side"
    screenshot(page, "situation")

    # the other version's conversations, by the version switch
    previous = target["previous"]["version"]
    page.click(f'[data-segment="version:{previous}"]')
    expected = [c["conversation_id"] for c in service.get(
        "/conversations", situation=ident, version=previous, limit=50)]
    wait_until(lambda: _texts(page, "#production details.item .id") == expected[:20], 20,
              f"the {previous} conversations")
    assert set(_texts(page, "#production details.item .chip.version")) == {previous}


def test_version_comparison_shows_new_persistent_and_fixed(service: Service,
                                                           page: Page) -> None:
    situations = service.get("/map")
    page.goto(service.page_url + "#/compare")
    page.wait_for_selector("#lane-fixed")
    for status in ("new", "persistent", "fixed"):
        expected = [s["situation_id"] for s in situations if s["status"] == status]
        assert expected and _data(page, f"#lane-{status} .card", "situation") == expected
    assert "v2 compared with v1" in page.locator(".pagehead").inner_text()
    first = page.locator("#lane-new .card").first
    assert situations[0]["reason"] in first.inner_text()
    screenshot(page, "versions")

    # against a chosen earlier version: the regression report's statuses
    page.select_option('select[data-filter="since"]', "v1")
    page.wait_for_url("**/ui/#/compare?since=v1")
    page.wait_for_selector('.lanes[data-since="v1"]')
    report = _report(service.get("/reports/regression", since="v1"))
    new = [s["situation_id"] for s in report["situations"] if s["status"] == "new"]
    wait_until(lambda: _data(page, "#lane-new .card", "situation") == new, 30,
              "the regression report's new situations")
    page.locator("#lane-new .card").first.click()
    page.wait_for_selector("#production")
    assert page.url.endswith(f"#/situation/{new[0]}")


def test_run_progress_is_live_and_lands_in_the_history(service: Service, page: Page) -> None:
    page.goto(service.page_url + "#/runs")
    page.wait_for_selector("#history table, #history p")
    before = {r["run_id"] for r in service.get("/runs")}
    assert set(_data(page, "#history tr[data-run]", "run")) == before
    # the nightly schedule and its next run time
    scheduled = {j["name"]: j for j in service.get("/status")["schedule"]}
    next_run = scheduled["generate"]["next_run"]
    assert next_run
    row = page.locator('#schedule tr[data-job="generate"]').inner_text()
    assert "0 3 29 2 *" in row and next_run[:10] in row, row
    assert "next run in" in page.locator("#service").inner_text()
    screenshot(page, "runs")

    page.fill("#budget", "300")
    page.click("#start-run")
    seen: list[tuple[str, int]] = []
    running_shot = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = page.evaluate("""() => { const j = document.querySelector('.job');
            return j ? [j.dataset.state, Number(j.querySelector('[role=progressbar]')
                .getAttribute('aria-valuenow'))] : null; }""")
        if state:
            seen.append((state[0], state[1]))
            if state[0] == "running" and 0 < state[1] < 300 and not running_shot:
                screenshot(page, "runs-running")
                running_shot = True
            if state[0] in ("finished", "failed"):
                break
        time.sleep(0.1)
    states = [s for s, _ in seen]
    assert "running" in states and states[-1] == "finished", seen
    counts = [n for _, n in seen]
    assert counts == sorted(counts), f"progress went backwards: {seen}"
    job = next(j for j in service.get("/status")["jobs"] if j["budget"] == "300")
    assert job["rollouts"] == counts[-1] == 300
    fill = page.locator(".job .progress .fill").first
    assert fill.evaluate("e => e.style.width") == "100%"
    assert page.locator(".job .progress .label").first.inner_text() == "300 / 300 rollouts"
    # the finished run appears in the history without reloading the page
    wait_until(lambda: job["run_id"] in _data(page, "#history tr[data-run]", "run"), 20,
              "the run in the history")
    wait_until(lambda: "run running" not in page.locator("#service").inner_text(), 15,
              "the header to see the run end")
    screenshot(page, "runs-finished")

    page.click(f'#history tr[data-run="{job["run_id"]}"] a')
    page.wait_for_selector(".kpis")
    record = service.get(f"/runs/{job['run_id']}")
    kpis = dict(zip(_texts(page, ".kpi span"), _texts(page, ".kpi b"), strict=True))
    assert kpis["written"] == f"{record['written']:,}"
    assert kpis["failed"] == f"{record['failed']:,}"
    assert len(_data(page, "tr[data-rollout]", "rollout")) == 50  # the first 50 of 300
    screenshot(page, "run")
    page.click("button.more")
    listed = _data(page, "tr[data-rollout]", "rollout")
    assert listed == [f"{job['run_id']}:{index}" for index in range(record["written"])]
    page.click(f'tr[data-rollout="{listed[0]}"] a')
    expect(page.locator("h1 code")).to_have_text(listed[0])
    page.wait_for_selector(".transcript .msg.user")


def test_the_report_page_shows_the_trace_report(service: Service, page: Page) -> None:
    report = _report(service.get("/reports/trace"))
    page.goto(service.page_url + "#/reports")
    page.wait_for_selector("ul.summary li")
    assert _texts(page, "ul.summary li") == report["summary"]
    assert page.locator("h1").first.inner_text() == "Trace report"
    screenshot(page, "report")


def test_a_token_protected_service_asks_for_the_token_once(guarded: Service,
                                                           page: Page) -> None:
    assert httpx.get(guarded.base + "/api/v1/map").status_code == 401
    sent: list[str | None] = []
    page.on("request", lambda r: sent.append(r.headers.get("authorization"))
            if "/api/v1/map" in r.url else None)
    page.goto(guarded.page_url)
    page.wait_for_selector("form.token #token")
    screenshot(page, "token")

    # a wrong token: refused, asked again
    page.fill("#token", "wrong-token")
    page.click("form.token button[type=submit]")
    page.wait_for_selector("form.token .notice.error")
    assert "refused" in page.locator("form.token .notice.error").inner_text()
    assert page.evaluate("sessionStorage.getItem('tracemill.admin-token')") is None

    page.fill("#token", TOKEN)
    page.click("form.token button[type=submit]")
    page.wait_for_selector("#heatmap tbody tr")
    assert sent[-1] == f"Bearer {TOKEN}"
    assert TOKEN not in page.url
    assert page.evaluate("sessionStorage.getItem('tracemill.admin-token')") == TOKEN
    # kept for the tab: other pages need no second prompt
    page.click('#nav a[data-page="runs"]')
    page.wait_for_selector("#history")
    assert page.locator("form.token").count() == 0
    # forgetting it asks again
    page.click("#service button.link")
    page.wait_for_selector("form.token #token")


def test_conversation_text_renders_as_text_never_as_html(service: Service,
                                                         page: Page) -> None:
    shown = service.get("/conversations/" + quote(HOSTILE_ID, safe=""))
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"] == [HOSTILE]
    page.goto(service.page_url + "#/conversation/" + quote(HOSTILE_ID, safe=""))
    page.wait_for_selector(".msg.user .text")
    assert _texts(page, ".msg.user .text") == [HOSTILE]
    assert page.locator("h1 code").inner_text() == HOSTILE_ID
    assert "javascript:alert(1)" in page.locator(".msg.assistant .text").inner_text()
    assert page.evaluate("window.__pwned") is None
    _no_markup_from_data(page)
    assert page.locator("main .msg a").count() == 0
    screenshot(page, "hostile-conversation")

    # a label's note (late feedback from the product) is text too
    rollout = service.get("/rollouts", limit=1)[0]
    posted = service.client.post("/labels", json={
        "rollout_id": rollout["rollout_id"], "passed": False, "labeled_by": "<b>desk</b>",
        "note": HOSTILE})
    assert posted.status_code == 201, posted.text
    page.goto(service.page_url + "#/rollout/" + rollout["rollout_id"])
    page.wait_for_selector("ul.evals li")
    assert any(HOSTILE in text and "<b>desk</b>" in text
               for text in _texts(page, "ul.evals li"))
    _no_markup_from_data(page)
    assert page.get_by_text("desk", exact=True).count() == 0  # no <b>desk</b> element


def test_the_page_tolerates_a_service_without_some_routes(service: Service,
                                                          page: Page) -> None:
    """An older service (no reports, no rollouts): the page says what is missing."""
    spec = service.get("/openapi.json")
    for path in list(spec["paths"]):
        if "/reports" in path or "/rollouts" in path:
            del spec["paths"][path]

    def older(route: Route) -> None:
        route.fulfill(status=200, content_type="application/json", body=json.dumps(spec))

    page.route("**/api/v1/openapi.json", older)
    page.goto(service.page_url + "#/reports")
    page.wait_for_selector(".notice")
    assert "not available" in page.locator(".notice").inner_text()
    assert "/api/v1/reports/trace" in page.locator(".notice").inner_text()
    situation = service.get("/map")[0]["situation_id"]
    page.goto(service.page_url + f"#/situation/{situation}")
    page.wait_for_selector("#rollouts .notice")
    assert "not available" in page.locator("#rollouts .notice").inner_text()
    assert page.locator("#production details.item").count() > 0
    screenshot(page, "older-service")


def test_page_files_are_public_strictly_typed_and_outside_the_api(guarded: Service) -> None:
    root = httpx.get(guarded.base + "/", follow_redirects=False)
    assert root.status_code == 307 and root.headers["location"] == "/ui/"
    index = httpx.get(guarded.page_url)  # no token: the files hold no data
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    policy = index.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert index.headers["x-content-type-options"] == "nosniff"
    assert '<script type="module" src="app.js">' in index.text
    imported: set[str] = set()
    for name in MODULES:  # ES modules, each served, none writing HTML
        script = httpx.get(guarded.page_url + name)
        assert script.status_code == 200, name
        assert script.headers["content-type"].startswith("text/javascript")
        assert "innerHTML" not in script.text and "insertAdjacentHTML" not in script.text
        assert "eval(" not in script.text and "new Function" not in script.text
        assert len(script.text.splitlines()) <= 500, f"{name}: split it"
        imported |= set(re.findall(r'from "\./([\w.]+\.js)"', script.text))
    assert imported == set(MODULES) - {"app.js"}, "every module is imported, none missing"
    assert httpx.get(guarded.page_url + "secrets.json").status_code == 404
    assert httpx.get(guarded.page_url + "..%2Fapi.py").status_code == 404
    spec = httpx.get(guarded.base + "/api/v1/openapi.json",
                     headers={"authorization": f"Bearer {TOKEN}"}).json()
    assert not [p for p in spec["paths"] if not p.startswith("/api/v1/")]


def test_a_fresh_service_shows_empty_states_not_errors(tmp_path: Path, page: Page) -> None:
    service = Service(tmp_path / "fresh.duckdb", tmp_path)
    try:
        page.goto(service.page_url)
        expect(page.locator("main .notice")).to_contain_text("The failure map is empty")
        screenshot(page, "empty-map")
        page.click('#nav a[data-page="compare"]')
        expect(page.locator("main .notice")).to_contain_text("nothing to compare yet")
        page.click('#nav a[data-page="runs"]')
        expect(page.locator("#history")).to_contain_text("No generation run is recorded")
        page.click('#nav a[data-page="reports"]')
        expect(page.locator("main .notice")).to_contain_text(
            "No conversation has been processed yet")
        screenshot(page, "empty-report")
    finally:
        service.stop()


def test_the_map_compares_the_latest_with_a_chosen_version(service: Service,
                                                          page: Page) -> None:
    versions = [v["version"] for v in service.get("/versions")]
    assert versions[-2:] == ["v1", "v2"] and {"v0", "v0.5"} <= set(versions)
    page.goto(service.page_url + "#/map")
    page.wait_for_selector("#heatmap tbody tr")
    # the stored map: v2 against the version before it
    assert "v2 compared with v1" in page.locator(".pagehead").inner_text()
    choices = page.eval_on_selector_all('select[data-filter="since"] option',
                                        "els => els.map(e => e.value)")
    assert choices == ["", *versions[:-2]]  # the version before the latest is the default

    page.select_option('select[data-filter="since"]', "v0")
    page.wait_for_url("**/ui/#/map?since=v0")
    expected = service.get("/map", since="v0")
    # the situations may be the same against v0 as against v1: wait for the heading too,
    # which only the re-rendered map carries
    wait_until(lambda: "v2 compared with v0" in page.locator(".pagehead").inner_text()
              and _data(page, "#heatmap tbody tr", "situation")
              == [s["situation_id"] for s in expected], 30, "the map against v0")
    assert set(_data(page, "#heatmap a.cell", "version")) <= {"v0", "v2"}
    assert "v0" in _data(page, "#heatmap a.cell", "version")
    for s in expected:
        if s["previous"]["graded"]:
            cell = page.locator(f'#heatmap a.cell[data-situation="{s["situation_id"]}"]'
                                '[data-version="v0"] .n')
            assert cell.inner_text() == f"{s['previous']['failed']}/{s['previous']['graded']}"
    # the stored map is what the API still answers without since
    assert {s["previous"]["version"] for s in service.get("/map")} == {"v1"}
    screenshot(page, "map-since")

    # a situation opened from this map keeps the comparison
    target = expected[0]
    page.click(f'#heatmap tr[data-situation="{target["situation_id"]}"] th a')
    page.wait_for_selector("#production")
    assert page.url.endswith(f"#/situation/{target['situation_id']}?since=v0")
    assert page.locator(".reason").inner_text() == target["reason"]
    assert "latest vs v0" in page.locator("nav.crumbs").inner_text()
    assert any("v0" in text for text in _texts(page, ".period .muted.small"))
    page.click("nav.crumbs a")
    page.wait_for_url("**/ui/#/map?since=v0")


def test_an_id_with_a_slash_opens_from_its_link(service: Service, page: Page) -> None:
    shown = service.get("/conversations/" + quote(SLASHED_ID, safe=""))
    assert shown["conversation_id"] == SLASHED_ID
    page.goto(service.page_url + "#/conversation/" + quote(SLASHED_ID, safe=""))
    expect(page.locator("h1 code")).to_have_text(SLASHED_ID)
    assert _texts(page, ".msg.user .text") == ["Where is my parcel?"]
    # the page's own link to it encodes the id as one segment, and opens it again
    href = page.locator("a.permalink").get_attribute("href")
    assert href == "#/conversation/" + quote(SLASHED_ID, safe="")
    page.goto(service.page_url + "#/map")
    page.wait_for_selector("#heatmap")
    page.goto(service.page_url + href)
    expect(page.locator("h1 code")).to_have_text(SLASHED_ID)
    # an id typed with a raw "/" opens too
    page.goto(service.page_url + "#/conversation/" + SLASHED_ID.replace("?", "%3F")
              .replace("#", "%23").replace("%2F", "%252F"))
    expect(page.locator("h1 code")).to_have_text(SLASHED_ID)
    screenshot(page, "conversation-with-slash")
