"""The report a lead reads: plain sentences first, real HTML tables, intervals drawn to
scale, each situation linked to its conversations, everything escaped.

Situations are written into the tables by hand here (after processing a small real store)
so that the rendering is checked on chosen values: 3/3 against 86/86, hostile text in
labels, reasons and first asks. tests/processor/test_commands.py runs the report end to
end on a processed stream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from processor.conversation_records import read_conversations
from processor.failure_map import Periods
from processor.map_records import Coordinate, PeriodRecord, SituationRecord, read_situations
from processor.report import build_report, gate, to_markdown
from processor.report_html import to_html
from processor.run import ProcessOptions, process
from processor.stats import wilson
from processor.summary import describe, sentence
from tests.support.otlp import genai_span, kv, trace_request
from tests.support.pipeline import store_requests
from tracemill.store import Store, open_store

_INSERT_SITUATION = (
    "INSERT INTO situations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _situation_row(situation_id: str, label: str, coordinates: list[dict[str, str]],
                   status: str, latest: tuple[int, int], previous: tuple[int, int], *,
                   reason: str, low_support: bool = False,
                   share: float = 0.1) -> tuple[object, ...]:
    (f_now, g_now), (f_before, g_before) = latest, previous
    low_now, high_now = wilson(f_now, g_now)
    low_before, high_before = wilson(f_before, g_before)
    return (situation_id, label, json.dumps(coordinates), "v2", "v1", g_now + g_before,
            g_now, f_now, g_before, f_before, f_now / g_now if g_now else None, low_now,
            high_now, f_before / g_before if g_before else None, low_before, high_before,
            0.1, 0.1, -0.2, 0.3, 0.5, "versions", status, reason, low_support, 1.0, share,
            json.dumps([label]), 1, "[]")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A processed store of 6 conversations (one asks something hostile) with three
    situations written in by hand."""
    spans = []
    for index in range(6):
        span = genai_span(f"chat {index}", conversation=f"conv-{index}")
        ask = HOSTILE if index == 0 else f"Cancel reservation R{index}, please."
        span.attributes.append(kv("gen_ai.input.messages", json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": ask}]}])))
        span.attributes.append(kv("reward", 0.0 if index < 3 else 1.0))
        spans.append(span)
    db = tmp_path / "report.duckdb"
    store_requests(db, [trace_request(spans).SerializeToString()])
    opened = open_store(db)
    process(opened, ProcessOptions())
    opened.query("DELETE FROM situation_members")
    opened.query("DELETE FROM situations")
    rows = [
        _situation_row("s-aaaaaaaaaa", f"tool={HOSTILE}",
                       [{"axis": "tool", "value": HOSTILE}], "new", (3, 3), (0, 40),
                       reason=f"fails 100% (3/3) {HOSTILE}", low_support=True),
        _situation_row("s-bbbbbbbbbb", "tool=cancel_reservation & world_state=already_acted_on",
                       [{"axis": "tool", "value": "cancel_reservation"},
                        {"axis": "world_state", "value": "already_acted_on"}],
                       "new", (86, 86), (3, 61), reason="fails 100% (86/86) in v2", share=0.5),
        _situation_row("s-cccccccccc", "tool_condition=not_found",
                       [{"axis": "tool_condition", "value": "not_found"}], "fixed",
                       (1, 20), (13, 20), reason="fell from 65% to 5%"),
    ]
    for row in rows:
        opened.query(_INSERT_SITUATION, row)
    for situation, conversation, period, failed in [
            ("s-aaaaaaaaaa", "conv-0", "latest", True), ("s-aaaaaaaaaa", "conv-1", "latest", True),
            ("s-bbbbbbbbbb", "conv-2", "latest", True), ("s-bbbbbbbbbb", "conv-3", "latest",
                                                         False),
            ("s-cccccccccc", "conv-4", "previous", False),
            ("s-cccccccccc", "conv-5", "latest", False)]:
        opened.query("INSERT INTO situation_members (situation_id, conversation_id, period, "
                     "failed) VALUES (?, ?, ?, ?)",
                     (situation, conversation, period, failed))
    try:
        yield opened
    finally:
        opened.close()


def _page(store: Store) -> tuple[str, list[SituationRecord]]:
    cursor = store.cursor()
    try:
        situations = read_situations(cursor)
        report = build_report(cursor, Periods("versions", "v2", "v1", 0), situations)
        examples = {s.situation_id: [r for i in s.examples
                                     for r in read_conversations(cursor, conversation_id=i)]
                    for s in situations}
    finally:
        cursor.close()
    return to_html(report, examples), situations


def test_plain_sentences_come_first(store: Store) -> None:
    page, situations = _page(store)
    broke, fixed = situations[1], situations[2]
    assert (broke.status, fixed.status) == ("new", "fixed")
    assert sentence(broke) == (
        "v2 broke cancel_reservation on records already acted on: 100% fail (86/86) vs 5% "
        "(3/61) in v1.")
    assert sentence(fixed) == (
        "v2 fixed conversations when the tool answers not found: 65% → 5% (13/20 → 1/20).")
    assert sentence(situations[0]).endswith("Few graded conversations: tentative.")
    summary = page[:page.index("<table")]
    for situation in situations:
        assert re.sub(r"\s+", " ", sentence(situation)).replace("→", "") in \
            summary.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">") \
            .replace("&#x27;", "'").replace("→", "")


def test_html_is_tables_escaped_and_self_contained(store: Store) -> None:
    page, _ = _page(store)
    assert page.startswith("<!doctype html>")
    assert page.count("<table>") >= 4  # situations, versions, aims, axes, members
    assert "<pre>#" not in page and "| status |" not in page  # no Markdown in <pre>
    assert "<script" not in page and "onerror=alert(1)>" not in page
    assert "&lt;script&gt;" in page and "onerror=alert(1)&gt;" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # no external assets
    assert "<link" not in page and "@import" not in page


def test_each_situation_links_to_its_conversations(store: Store) -> None:
    page, situations = _page(store)
    for situation in situations:
        anchor = f"situation-{situation.situation_id}"
        assert f'href="#{anchor}"' in page
        start = page.index(f'id="{anchor}"')
        end = page.find("<section", start + 1)
        section = page[start:end if end > 0 else len(page)]
        for member in situation.member_ids:
            assert f"<code>{member}</code>" in section
    # a failing example is rendered in full, its hostile ask escaped
    first = page[page.index('id="situation-s-aaaaaaaaaa"'):]
    assert "<details><summary>conversation <code>conv-0</code>" in first
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in first


def test_intervals_are_drawn_to_scale(store: Store) -> None:
    page, situations = _page(store)

    def band(rate_text: str) -> float:
        """Width of the shaded interval of the bar whose title reads ``rate_text``."""
        found = re.search(r'<title>' + re.escape(rate_text) + r'</title>.*?'
                          r'<rect x="[\d.]+" y="2" width="([\d.]+)"', page)
        assert found, rate_text
        return float(found.group(1))

    few, many = situations[0].latest, situations[1].latest
    assert (few.failed, few.graded, many.failed, many.graded) == (3, 3, 86, 86)
    assert band("3/3 = 100% [44%, 100%]") > 8 * band("86/86 = 100% [96%, 100%]")
    assert "(3/3, [44%, 100%])" in page and "(86/86, [96%, 100%])" in page


def test_markdown_and_json(store: Store) -> None:
    cursor = store.cursor()
    try:
        situations = read_situations(cursor)
        report = build_report(cursor, Periods("versions", "v2", "v1", 0), situations)
    finally:
        cursor.close()
    markdown = to_markdown(report)
    assert markdown.index(report.summary[0]) < markdown.index("## Situations")
    assert "| new (low support) |" in markdown
    data = json.loads(report.model_dump_json())
    assert data["aims"][0] == "s-bbbbbbbbbb"
    assert sorted(data["situations"][0]["member_ids"]) == ["conv-0", "conv-1"]
    assert data["members"]["s-aaaaaaaaaa"][0]["first_ask"] == HOSTILE


def _record(status: str, low_support: bool) -> SituationRecord:
    period = PeriodRecord(version="v2", graded=20, failed=10, fail_rate=0.5, interval=None,
                          baseline=None)
    return SituationRecord(
        situation_id=f"s-{status}{low_support}", label="tool=x",
        coordinates=[Coordinate(axis="tool", value="x")], status=status, reason="r",
        compared="versions", latest=period, previous=period, difference=None, p_value=None,
        low_support=low_support, priority=1.0, budget_share=0.1, conversations=20, cells=[],
        examples=[], member_ids=[], computed_unix_nano=0)


@pytest.mark.parametrize(("fail_on", "statuses", "fails"), [
    ("new", [("new", False)], True),
    ("new", [("new", True)], False),  # low support never fails a release
    ("new", [("persistent", False), ("fixed", False), ("uncertain", False)], False),
    ("persistent", [("persistent", False)], True),
    ("any", [("persistent", False)], True),
    ("any", [("fixed", False), ("uncertain", False), ("new", True)], False),
])
def test_gate(fail_on: str, statuses: list[tuple[str, bool]], fails: bool) -> None:
    assert bool(gate([_record(*s) for s in statuses], fail_on)) is fails


def test_describe_reads_unknown_values_generically() -> None:
    assert describe([Coordinate(axis="tool", value="refund"),
                     Coordinate(axis="user_stance", value="adversarial"),
                     Coordinate(axis="world_state", value="frozen_account")]) == (
        "refund with adversarial users and when world state is frozen account")
