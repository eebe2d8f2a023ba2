"""Trace and regression reports: what they hold (JSON) and their Markdown.

A report starts with plain sentences (:mod:`processor.summary`): what broke, what still
fails, what was fixed, with rates and counts. Then the details: every situation with its
counts, rates and 95% intervals per period, the comparison and its reason, the member
conversations (a few with their first ask, every id in the JSON); the model versions;
where generation will aim; what the traces contain; warnings. With a baseline version
(``report --since V``) the statuses compare the latest version with V. The HTML page is
:mod:`processor.report_html`.
"""

from __future__ import annotations

import time

import duckdb
from pydantic import BaseModel, Field

from processor.failure_map import Periods
from processor.map_records import STATUS_ORDER, SituationRecord, members_text
from processor.summary import describe, summary
from processor.terminal import rate_text
from tracemill.store import load_sql

__all__ = [
    "AxisCount",
    "Comparison",
    "MemberBrief",
    "TraceReport",
    "VersionRate",
    "build_report",
    "gate",
    "to_markdown",
]

MEMBERS_SHOWN = 20
"""Member conversations listed per situation (with their first ask); the JSON keeps every
id in the situation's ``member_ids``."""


class Comparison(BaseModel):
    """What the statuses compare."""

    mode: str = Field(description="versions (two model versions) or halves (one version, "
                                  "later half vs earlier half).")
    latest: str | None = Field(description="The latest model version.")
    previous: str | None = Field(description="The version compared with.")


class VersionRate(BaseModel):
    """Fail rate of one model version."""

    version: str | None = Field(description="The model version.")
    conversations: int = Field(description="Its conversations.")
    graded: int = Field(description="Graded ones.")
    failed: int = Field(description="Failed ones.")
    fail_rate: float | None = Field(description="failed / graded.")
    source: str | None = Field(description="Which attributes the version came from.")


class AxisCount(BaseModel):
    """Conversations with one value of one axis."""

    value: str = Field(description="The axis value.")
    conversations: int = Field(description="Conversations with it.")
    graded: int = Field(description="Graded ones.")
    failed: int = Field(description="Failed ones.")


class MemberBrief(BaseModel):
    """A member conversation as a report lists it."""

    conversation_id: str = Field(description="Its id (`tracemill conversations show ID`).")
    model_version: str | None = Field(description="Its model version.")
    outcome: str | None = Field(description="pass, fail or None (ungraded).")
    first_ask: str | None = Field(description="The first user message (first 300 chars).")


class TraceReport(BaseModel):
    """Everything a report shows, as JSON."""

    generated_unix_nano: int = Field(description="When it was written.")
    comparison: Comparison = Field(description="What the statuses compare.")
    summary: list[str] = Field(description="Plain sentences, worst first.")
    census: dict[str, int] = Field(description="Conversations, graded, passed, failed, ...")
    statuses: dict[str, int] = Field(description="Situations per status.")
    situations: list[SituationRecord] = Field(description="Every situation, worst first.")
    members: dict[str, list[MemberBrief]] = Field(
        description="Per situation id, a few member conversations, failing ones first.")
    aims: list[str] = Field(description="Situation ids by budget share, largest first.")
    versions: list[VersionRate] = Field(description="Fail rate per model version.")
    axes: dict[str, list[AxisCount]] = Field(description="Per axis, counts per value.")
    warnings: list[str] = Field(description="What the reader must know (loudly).")


def _census(cursor: duckdb.DuckDBPyConnection) -> dict[str, int]:
    relation = cursor.execute(load_sql("processor", "census.sql"))
    names = [column[0] for column in relation.description or ()]
    row = relation.fetchone()
    return {name: int(value or 0) for name, value in zip(names, row or (), strict=False)}


def _warnings(cursor: duckdb.DuckDBPyConnection, census: dict[str, int],
              periods: Periods) -> list[str]:
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
    return warnings


def build_report(cursor: duckdb.DuckDBPyConnection, periods: Periods,
                 situations: list[SituationRecord]) -> TraceReport:
    """Gather the report's content from the store and the map's situations."""
    census = _census(cursor)
    axes: dict[str, list[AxisCount]] = {}
    for axis, value, count, graded, failed in cursor.execute(
            load_sql("processor", "axis_values.sql")).fetchall():
        axes.setdefault(axis, []).append(
            AxisCount(value=value, conversations=count, graded=graded, failed=failed))
    versions = [VersionRate(version=version, conversations=count, graded=graded,
                            failed=failed, fail_rate=failed / graded if graded else None,
                            source=sources)
                for version, _, count, graded, failed, sources in cursor.execute(
                    load_sql("processor", "version_rates.sql")).fetchall()]
    members: dict[str, list[MemberBrief]] = {}
    for situation_id, conversation_id, version, outcome, first_ask in cursor.execute(
            load_sql("processor", "report_members.sql"), [MEMBERS_SHOWN]).fetchall():
        members.setdefault(situation_id, []).append(MemberBrief(
            conversation_id=conversation_id, model_version=version, outcome=outcome,
            first_ask=first_ask))
    ordered = sorted(situations, key=lambda s: (STATUS_ORDER.get(s.status, 9), -s.priority))
    statuses: dict[str, int] = {}
    for situation in ordered:
        statuses[situation.status] = statuses.get(situation.status, 0) + 1
    aims = [s.situation_id for s in sorted(ordered, key=lambda s: -s.budget_share)
            if s.budget_share > 0]
    return TraceReport(
        generated_unix_nano=time.time_ns(),
        comparison=Comparison(mode=periods.mode, latest=periods.latest,
                              previous=periods.previous),
        summary=summary(ordered), census=census, statuses=statuses, situations=ordered,
        members=members, aims=aims, versions=versions, axes=axes,
        warnings=_warnings(cursor, census, periods))


GATES = {"new": frozenset({"new"}), "persistent": frozenset({"persistent"}),
         "any": frozenset({"new", "persistent"})}
"""The statuses each ``report --fail-on`` choice fails on."""


def gate(situations: list[SituationRecord], fail_on: str) -> list[SituationRecord]:
    """The situations that fail a ``--fail-on`` gate: of the statuses it names, and not
    low-support (a status decided on too few conversations does not fail a release)."""
    wanted = GATES[fail_on]
    return [s for s in situations if s.status in wanted and not s.low_support]


def _cell(value: object) -> str:
    """A value for a Markdown table cell (pipes and line breaks would break the row)."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def intro(report: TraceReport) -> str:
    """The census and what the statuses compare, in two sentences."""
    census = report.census
    compare = report.comparison
    counts = (f"{census.get('conversations', 0)} conversations in {census.get('traces', 0)} "
              f"traces with {census.get('steps', 0)} tool steps; {census.get('graded', 0)} "
              f"graded ({census.get('passed', 0)} passed, {census.get('failed', 0)} failed), "
              f"{census.get('ungraded', 0)} ungraded.")
    if compare.mode == "versions":
        return f"{counts} Statuses compare model version {compare.latest} with " \
               f"{compare.previous}."
    return f"{counts} Statuses compare the later half of the conversations with the " \
           "earlier half."


def to_markdown(report: TraceReport) -> str:
    """The report as Markdown."""
    parts = ["# tracemill trace report", ""]
    parts += [f"- {line}" for line in report.summary] or ["Nothing fails more than the rest."]
    parts += ["", intro(report), ""]
    if report.warnings:
        parts += ["## Warnings", ""] + [f"- **{warning}**" for warning in report.warnings] + [""]
    parts += ["## Situations", ""]
    if report.situations:
        parts += [_table(
            ["status", "situation", "latest", "previous", "difference", "p", "conversations"],
            [[s.status + (" (low support)" if s.low_support else ""), s.label,
              rate_text(s.latest), rate_text(s.previous),
              "-" if s.difference is None else
              f"[{s.difference.low:+.0%}, {s.difference.high:+.0%}]",
              "-" if s.p_value is None else f"{s.p_value:.3g}", s.conversations]
             for s in report.situations]), ""]
        for situation in report.situations:
            parts += [f"### {situation.label} ({situation.status})", "",
                      f"{describe(situation.coordinates)}. {situation.reason}", ""]
            briefs = report.members.get(situation.situation_id, [])
            if briefs:
                parts += [_table(["conversation", "version", "outcome", "first ask"],
                                 [[b.conversation_id, b.model_version or "-",
                                   b.outcome or "ungraded", b.first_ask or "(not captured)"]
                                  for b in briefs]), ""]
            parts += [f"All {members_text(situation)}: `tracemill map --situation "
                      f"{situation.situation_id} --conversations`", ""]
    else:
        parts += ["No situation: nothing fails more than the rest.", ""]
    parts += ["## Model versions", "", _table(
        ["version", "conversations", "graded", "failed", "fail rate", "from"],
        [[v.version or "-", v.conversations, v.graded, v.failed,
          "-" if v.fail_rate is None else f"{v.fail_rate:.0%}", v.source or "-"]
         for v in report.versions]), ""]
    by_id = {s.situation_id: s for s in report.situations}
    parts += ["## Where generation will aim", ""]
    parts += [_table(["share", "status", "situation"],
                     [[f"{by_id[i].budget_share:.1%}", by_id[i].status, by_id[i].label]
                      for i in report.aims]) if report.aims else "Nothing fails: the whole "
              "budget explores the grid.", ""]
    parts += ["## What the traces contain", ""]
    for axis, values in report.axes.items():
        parts += [f"**{axis}**: " + ", ".join(
            f"{v.value} ({v.conversations}, {v.failed}/{v.graded} failed)" for v in values), ""]
    return "\n".join(parts)
