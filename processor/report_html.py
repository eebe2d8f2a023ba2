"""The report as one self-contained HTML page: no scripts, no external assets.

The page opens with the report's plain sentences, then real tables: situations (each rate
drawn as its 95% interval, so 3/3 — a wide bar — does not look like 86/86 — a narrow one;
n printed beside it), model versions, where generation aims, the axes. Each situation
links to a section listing its member conversations with their first ask, and renders a
few failing ones in full (collapsed). Every value from the store is escaped with
:func:`html.escape` (conversation text is untrusted).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from processor.conversation_records import ConversationRecord
from processor.map_records import PeriodRecord, SituationRecord, members_text
from processor.report import TraceReport, intro
from processor.summary import describe, sentence
from processor.terminal import rate_text

__all__ = ["to_html"]

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1150px;color:#222;
line-height:1.4}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.status{font-weight:600;text-transform:uppercase;font-size:.85em}
.new{color:#b03a2e}.persistent{color:#c4620c}.uncertain{color:#666}.fixed{color:#1e8449}
.summary li{margin:.3em 0;font-size:1.05em}
.warning{color:#b03a2e;font-weight:600}
section.situation{border-top:2px solid #eee;margin-top:1.5em}
pre{white-space:pre-wrap;background:#f8f8f8;padding:.5em;margin:.2em 0}
.msg{margin:.4em 0}.role{font-weight:600}
small{color:#666}
"""

_BAR_WIDTH = 160


def _e(value: object) -> str:
    """Escaped text of any value (None as a dash)."""
    return "-" if value is None else html.escape(str(value), quote=True)


def _interval_bar(period: PeriodRecord) -> str:
    """An SVG bar: the 95% interval as a shaded span, the rate as a tick, n beside it."""
    if not period.graded or period.fail_rate is None:
        return "<small>not graded</small>"
    low = period.interval.low if period.interval is not None else period.fail_rate
    high = period.interval.high if period.interval is not None else period.fail_rate
    x0 = round(low * _BAR_WIDTH, 1)
    width = max(1.0, round((high - low) * _BAR_WIDTH, 1))
    tick = round(period.fail_rate * _BAR_WIDTH, 1)
    title = _e(rate_text(period))
    return (f'<svg width="{_BAR_WIDTH + 2}" height="14" role="img" aria-label="{title}">'
            f"<title>{title}</title>"
            f'<rect x="1" y="5" width="{_BAR_WIDTH}" height="4" fill="#eee"/>'
            f'<rect x="{x0 + 1}" y="2" width="{width}" height="10" fill="#e8a29a"/>'
            f'<rect x="{tick}" y="0" width="2" height="14" fill="#7b241c"/></svg> '
            f"{period.fail_rate:.0%} <small>({period.failed}/{period.graded}, "
            f"[{low:.0%}, {high:.0%}])</small>")


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]],
           numeric: Sequence[int] = ()) -> str:
    """An HTML table; cells are given already escaped or built from escaped parts."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{cell}</td>' if index in numeric else
                         f"<td>{cell}</td>" for index, cell in enumerate(row)) + "</tr>"
        for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _anchor(situation_id: str) -> str:
    return f"situation-{html.escape(situation_id, quote=True)}"


def _status(situation: SituationRecord) -> str:
    low = " <small>(low support)</small>" if situation.low_support else ""
    status = _e(situation.status)
    return f'<span class="status {status}">{status}</span>{low}'


def _situations_table(report: TraceReport) -> str:
    rows = []
    for s in report.situations:
        difference = "-" if s.difference is None else \
            f"[{s.difference.low:+.0%}, {s.difference.high:+.0%}]"
        previous = _interval_bar(s.previous) if s.compared == "versions" or s.previous.graded \
            else "<small>no earlier data</small>"
        rows.append([
            _status(s),
            f'<a href="#{_anchor(s.situation_id)}">{_e(s.label)}</a>',
            _interval_bar(s.latest), previous, _e(difference),
            "-" if s.p_value is None else _e(f"{s.p_value:.3g}"),
            _e(s.conversations), _e(f"{s.budget_share:.1%}")])
    latest = report.comparison.latest or "latest"
    previous = report.comparison.previous or "previous"
    return _table(["status", "situation", f"fail rate {latest}", f"fail rate {previous}",
                   "difference", "p", "conversations", "budget"], rows, numeric=(6, 7))


def _messages_html(record: ConversationRecord) -> str:
    parts = []
    for message in record.messages:
        role = message.get("role")
        label = _e(role)
        if role == "tool":
            label += f" <small>{_e(message.get('name'))} ({_e(message.get('tool_call_id'))})" \
                     "</small>"
        content = message.get("content")
        body = "<small>(content not captured)</small>" if content is None and not \
            message.get("tool_calls") else ("" if content is None else f"<pre>{_e(content)}</pre>")
        for call in message.get("tool_calls") or []:
            function: dict[str, Any] = call.get("function") or {}
            body += (f"<div>→ calls <code>{_e(function.get('name'))}</code> "
                     f"<small>({_e(call.get('id'))})</small><pre>"
                     f"{_e(function.get('arguments'))}</pre></div>")
        parts.append(f'<div class="msg"><span class="role">{label}</span>{body}</div>')
    if not parts:
        parts.append("<p><small>No messages recorded.</small></p>")
    outcome = _e(record.outcome or "ungraded")
    parts.append(f"<p>outcome: <b>{outcome}</b> <small>{_e(record.outcome_source)}</small></p>")
    return "".join(parts)


def _situation_section(report: TraceReport, situation: SituationRecord,
                       examples: Sequence[ConversationRecord],
                       by_id: dict[str, SituationRecord]) -> str:
    coordinates = ", ".join(f"<code>{_e(c.axis)}={_e(c.value)}</code>"
                            for c in situation.coordinates)
    briefs = report.members.get(situation.situation_id, [])
    members = _table(["conversation", "version", "outcome", "first ask"], [
        [f"<code>{_e(b.conversation_id)}</code>", _e(b.model_version),
         _e(b.outcome or "ungraded"), _e(b.first_ask) if b.first_ask is not None
         else "<small>(not captured)</small>"] for b in briefs]) if briefs else ""
    ids = ", ".join(f"<code>{_e(i)}</code>" for i in situation.member_ids)
    rendered = "".join(
        f"<details><summary>conversation <code>{_e(r.conversation_id)}</code></summary>"
        f"{_messages_html(r)}</details>" for r in examples)
    cells = ""
    if situation.cells:
        cells = "<p><small>stands for cells: " + "; ".join(
            _e(c) for c in situation.cells) + "</small></p>"
    return (f'<section class="situation" id="{_anchor(situation.situation_id)}">'
            f"<h3>{_status(situation)} {_e(situation.label)}</h3>"
            f"<p>{_e(sentence(situation, by_id))}</p>"
            f"<p>{_e(describe(situation.coordinates))}: {coordinates}. "
            f"{_e(situation.reason)}</p>{cells}"
            f"<h4>Member conversations ({situation.conversations})</h4>{members}"
            f"{rendered}<details><summary>all {_e(members_text(situation))}: ids"
            f"</summary><p>{ids}</p></details></section>")


def to_html(report: TraceReport,
            examples: dict[str, list[ConversationRecord]] | None = None) -> str:
    """One self-contained page. ``examples``: per situation id, conversations to render
    in full."""
    examples = examples or {}
    summary = "".join(f"<li>{_e(line)}</li>" for line in report.summary) or \
        "<li>Nothing fails more than the rest.</li>"
    warnings = "".join(f'<li class="warning">{_e(w)}</li>' for w in report.warnings)
    by_id = {s.situation_id: s for s in report.situations}
    versions = _table(["version", "conversations", "graded", "failed", "fail rate", "from"], [
        [_e(v.version), _e(v.conversations), _e(v.graded), _e(v.failed),
         "-" if v.fail_rate is None else _e(f"{v.fail_rate:.0%}"), _e(v.source)]
        for v in report.versions], numeric=(1, 2, 3, 4))
    aims = _table(["budget share", "status", "situation"], [
        [_e(f"{by_id[i].budget_share:.1%}"), _status(by_id[i]),
         f'<a href="#{_anchor(i)}">{_e(by_id[i].label)}</a>'] for i in report.aims],
        numeric=(0,)) if report.aims else "<p>Nothing fails: the whole budget explores " \
        "the grid.</p>"
    axes = "".join(
        f"<h3>{_e(axis)}</h3>" + _table(["value", "conversations", "graded", "failed"], [
            [_e(v.value), _e(v.conversations), _e(v.graded), _e(v.failed)] for v in values],
            numeric=(1, 2, 3))
        for axis, values in report.axes.items())
    sections = "".join(_situation_section(report, s, examples.get(s.situation_id, []), by_id)
                       for s in report.situations)
    situations = _situations_table(report) if report.situations else \
        "<p>No situation: nothing fails more than the rest.</p>"
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>tracemill report</title><style>" + _STYLE + "</style></head><body>"
            "<h1>tracemill trace report</h1>"
            f'<ul class="summary">{summary}</ul><p>{_e(intro(report))}</p>'
            + (f"<h2>Warnings</h2><ul>{warnings}</ul>" if warnings else "")
            + "<h2>Situations</h2><p><small>Bars: the 95% interval of the fail rate "
            "(shaded) and the rate (tick); a wide bar means few conversations.</small></p>"
            + situations + "<h2>Model versions</h2>" + versions
            + "<h2>Where generation will aim</h2>" + aims
            + "<h2>Situations in detail</h2>" + sections
            + "<h2>What the traces contain</h2>" + axes + "</body></html>")
