"""Trace and regression reports: Markdown, JSON and one self-contained HTML page.

The report says in plain words what the traces contain (conversations, tools, faults,
world states, stances, the label census, warnings) and where generation will aim (the
cells with the largest budget share). With a baseline version it is the regression report:
cells new, persistent and fixed between the two versions, with intervals.
"""

from __future__ import annotations

import html
import json
import time
from typing import Any

import duckdb
from pydantic import BaseModel, Field

from processor.failure_map import Cell, Periods
from tracemill.store import load_sql


class CellView(BaseModel):
    """One failure-map cell as reported."""

    cell: str = Field(description="axis=value & axis=value")
    status: str = Field(description="new, persistent, fixed, uncertain or passing")
    conversations: int = Field(description="Conversations in the cell, all versions.")
    fail_rate_latest: float | None = Field(description="Fail rate in the latest period.")
    latest: str = Field(description="failed/graded and fail rate with its 95% interval, latest")
    previous: str = Field(description="The same for the previous period.")
    difference: str = Field(description="Newcombe 95% interval of latest minus previous.")
    p_value: float = Field(description="Fisher's exact test, two-sided.")
    low_support: bool = Field(description="Fewer than 3 graded conversations now.")
    budget_share: float = Field(description="Share of a generation budget.")


class TraceReport(BaseModel):
    """Everything a report shows, as JSON."""

    generated_unix_nano: int = Field(description="When it was written.")
    comparison: dict[str, Any] = Field(description="What the statuses compare.")
    census: dict[str, int] = Field(description="Conversations, graded, passed, failed, ...")
    axes: dict[str, list[dict[str, Any]]] = Field(description="Per axis value counts.")
    versions: list[dict[str, Any]] = Field(description="Fail rate per model version.")
    statuses: dict[str, int] = Field(description="Cells per status.")
    cells: list[CellView] = Field(description="Cells that are not passing, worst first.")
    aims: list[CellView] = Field(description="Where generation will spend, largest first.")
    warnings: list[str] = Field(description="What the reader must know (loudly).")


def _rate(failed: int, graded: int, interval: tuple[float, float]) -> str:
    if not graded:
        return "not graded"
    return (f"{failed}/{graded} = {failed / graded:.0%} "
            f"[{interval[0]:.0%}, {interval[1]:.0%}]")


def cell_view(cell: Cell) -> CellView:
    """A cell as the reports show it."""
    return CellView(
        cell=f"{cell.axis_a}={cell.value_a} & {cell.axis_b}={cell.value_b}",
        fail_rate_latest=cell.fail_rate_latest,
        status=cell.status, conversations=cell.conversations,
        latest=_rate(cell.failed_latest, cell.graded_latest, cell.interval_latest),
        previous=_rate(cell.failed_previous, cell.graded_previous, cell.interval_previous),
        difference=f"[{cell.difference[0]:+.0%}, {cell.difference[1]:+.0%}]",
        p_value=round(cell.p_value, 6), low_support=cell.low_support,
        budget_share=round(cell.budget_share, 6))


_ORDER = {"new": 0, "persistent": 1, "uncertain": 2, "fixed": 3, "passing": 4}


def build_report(cursor: duckdb.DuckDBPyConnection, periods: Periods,
                 cells: list[Cell]) -> TraceReport:
    """Gather the report's content from the store and a computed map."""
    relation = cursor.execute(load_sql("processor", "census.sql"))
    names = [column[0] for column in relation.description or ()]
    row = relation.fetchone()
    census = {name: int(value or 0) for name, value in zip(names, row or (), strict=False)}
    axes: dict[str, list[dict[str, Any]]] = {}
    for axis, value, count, graded, failed in cursor.execute(
            load_sql("processor", "axis_values.sql")).fetchall():
        axes.setdefault(axis, []).append(
            {"value": value, "conversations": count, "graded": graded, "failed": failed})
    versions = [{"version": version, "conversations": count, "graded": graded,
                 "failed": failed, "fail_rate": failed / graded if graded else None,
                 "source": sources}
                for version, _, count, graded, failed, sources in cursor.execute(
                    load_sql("processor", "version_rates.sql")).fetchall()]
    warnings = []
    for attribute, count in cursor.execute(load_sql("processor", "unread_scores.sql")).fetchall():
        warnings.append(f"{count} conversations carry `{attribute}`, which is not read as an "
                        "outcome; set reward_keys (TRACEMILL_REWARD_KEYS) to use it")
    if census.get("content_missing"):
        warnings.append(f"{census['content_missing']} conversations lack message content "
                        "(capture was off); their stance is `unknown`")
    if census.get("conversations") and not census.get("graded"):
        warnings.append("no conversation is graded: statuses cannot be computed; attach "
                        "labels with `tracemill label FILE` or set reward_keys")
    if periods.mode == "halves":
        warnings.append("only one model version: statuses compare the later half of its "
                        "conversations with the earlier half")
    statuses: dict[str, int] = {}
    for cell in cells:
        statuses[cell.status] = statuses.get(cell.status, 0) + 1
    failing = sorted((cell for cell in cells if cell.status != "passing"),
                     key=lambda c: (_ORDER[c.status], -c.priority))
    aims = sorted((cell for cell in cells if cell.budget_share > 0 and cell.priority > 0),
                  key=lambda c: -c.budget_share)
    comparison = {"mode": periods.mode, "latest": periods.latest,
                  "previous": periods.previous}
    return TraceReport(
        generated_unix_nano=time.time_ns(), comparison=comparison, census=census, axes=axes,
        versions=versions, statuses=statuses, cells=[cell_view(c) for c in failing],
        aims=[cell_view(c) for c in aims[:20]], warnings=warnings)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(report: TraceReport) -> str:
    """The report as Markdown."""
    census = report.census
    compare = report.comparison
    parts = [
        "# tracemill trace report", "",
        f"{census.get('conversations', 0)} conversations in {census.get('traces', 0)} traces "
        f"with {census.get('steps', 0)} tool steps; {census.get('graded', 0)} graded "
        f"({census.get('passed', 0)} passed, {census.get('failed', 0)} failed), "
        f"{census.get('ungraded', 0)} ungraded, {census.get('non_binary', 0)} with "
        f"non-binary rewards.", "",
        (f"Statuses compare model version **{compare['latest']}** with "
         f"**{compare['previous']}**." if compare["mode"] == "versions" else
         "Statuses compare the later half of the conversations with the earlier half."), "",
    ]
    if report.warnings:
        parts += ["## Warnings", ""] + [f"- **{warning}**" for warning in report.warnings] + [""]
    parts += ["## Model versions", "", _table(
        ["version", "conversations", "graded", "failed", "fail rate", "from"],
        [[v["version"], v["conversations"], v["graded"], v["failed"],
          "-" if v["fail_rate"] is None else f"{v['fail_rate']:.0%}", v["source"]]
         for v in report.versions]), ""]
    parts += ["## Failure map", "",
              ", ".join(f"{count} {status}" for status, count in sorted(
                  report.statuses.items(), key=lambda item: _ORDER[item[0]])), ""]
    if report.cells:
        parts += [_table(["status", "cell", "latest", "previous", "difference", "p"],
                         [[c.status + (" (low support)" if c.low_support else ""), c.cell,
                           c.latest, c.previous, c.difference, f"{c.p_value:.3g}"]
                          for c in report.cells[:50]]), ""]
    parts += ["## Where generation will aim", ""]
    parts += [_table(["share", "status", "cell", "latest"],
                     [[f"{c.budget_share:.1%}", c.status, c.cell, c.latest]
                      for c in report.aims]) if report.aims else "Nothing fails: the whole "
              "budget explores the grid.", ""]
    parts += ["## What the traces contain", ""]
    for axis, values in report.axes.items():
        parts += [f"**{axis}**: " + ", ".join(
            f"{v['value']} ({v['conversations']}, {v['failed']}/{v['graded']} failed)"
            for v in values), ""]
    return "\n".join(parts)


def _heatmap(report: TraceReport) -> str:
    """An SVG grid of the non-passing cells: one square per cell, darker = higher rate."""
    cells = report.cells[:60]
    if not cells:
        return "<p>No failing cells.</p>"
    colours = {"new": "#c0392b", "persistent": "#e67e22", "uncertain": "#7f8c8d",
               "fixed": "#27ae60"}
    rows = []
    for index, cell in enumerate(cells):
        y = 20 + index * 18
        rate = cell.fail_rate_latest or 0.0
        width = max(2, int(300 * rate))
        rows.append(
            f'<text x="0" y="{y + 12}" font-size="11">{html.escape(cell.cell)}</text>'
            f'<rect x="430" y="{y}" width="{width}" height="14" fill="{colours[cell.status]}">'
            f"<title>{html.escape(cell.status)}: {html.escape(cell.latest)}</title></rect>"
            f'<text x="{436 + width}" y="{y + 12}" font-size="11">'
            f"{html.escape(cell.status)} {html.escape(cell.latest)}</text>")
    height = 30 + len(cells) * 18
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="980" height="{height}">'
            '<text x="430" y="12" font-size="11">fail rate, latest period</text>'
            + "".join(rows) + "</svg>")


def _version_bars(report: TraceReport) -> str:
    bars = []
    for index, version in enumerate(report.versions):
        rate = version["fail_rate"] or 0.0
        x = 40 + index * 90
        height = int(150 * rate)
        bars.append(f'<rect x="{x}" y="{170 - height}" width="60" height="{height}" '
                    f'fill="#34495e"/><text x="{x}" y="190" font-size="11">'
                    f'{html.escape(str(version["version"]))}</text><text x="{x}" '
                    f'y="{165 - height}" font-size="11">{rate:.0%}</text>')
    width = 60 + 90 * max(1, len(report.versions))
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="200">' + \
        "".join(bars) + "</svg>"


def to_html(report: TraceReport) -> str:
    """One self-contained page: the Markdown's content plus two plots."""
    body = html.escape(to_markdown(report))
    return ("<!doctype html><html><head><meta charset='utf-8'><title>tracemill report</title>"
            "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}"
            "pre{white-space:pre-wrap}</style></head><body>"
            "<h1>tracemill trace report</h1><h2>Fail rate per model version</h2>"
            + _version_bars(report) + "<h2>Failure map (cells that are not passing)</h2>"
            + _heatmap(report) + "<h2>Details</h2><pre>" + body + "</pre></body></html>")


def stored_map_json(cursor: duckdb.DuckDBPyConnection) -> str:
    """The failure map as last stored by processing, as a JSON document."""
    relation = cursor.execute(load_sql("processor", "stored_map.sql"))
    names = [column[0] for column in relation.description or ()]
    cells = [dict(zip(names, row, strict=True)) for row in relation.fetchall()]
    return json.dumps({"cells": cells}, default=str)
