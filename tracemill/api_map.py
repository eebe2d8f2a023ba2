"""The admin API's routes over processed data: status, the failure map, model versions,
processing now, the reports and the conversations (as the CLI's ``--json`` records)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query

from collector.stats import store_stats
from processor.commands import ProcessSummary, process_summary, read_map, report_content
from processor.conversation_records import ConversationRecord, read_conversations
from processor.map_records import CellRecord, SituationRecord, read_cells, read_situations
from tracemill.api_context import PREFIX, ApiContext, Since, error_responses
from tracemill.api_models import ReportOut, ScheduledJobOut, Status, VersionOut
from tracemill.errors import TracemillError
from tracemill.store import load_sql

__all__ = ["map_routes"]


def map_routes(ctx: ApiContext) -> APIRouter:
    """The routes reading (or refreshing) what processing made."""
    routes = APIRouter()
    jobs = ctx.jobs

    @routes.get(f"{PREFIX}/status", response_model=Status, summary="Counts and next runs")
    def status() -> Status:
        with ctx.cursor() as c:
            situations = len(read_situations(c))
            row = c.execute(load_sql("generator", "service_counts.sql")).fetchone()
            conversations, runs = (int(row[0]), int(row[1])) if row else (0, 0)
        return Status(counts=store_stats(ctx.store), situations=situations,
                      conversations=conversations, runs=runs,
                      schedule=[ScheduledJobOut(**asdict(j)) for j in jobs.schedule()],
                      jobs=[ctx.job_out(j) for j in jobs.jobs()], map_error=jobs.map_error)

    def map_of(since: str | None, *, with_cells: bool = False,
               ) -> tuple[list[SituationRecord], list[CellRecord]]:
        from processor.errors import UnknownVersion
        from processor.run import ProcessOptions

        if since is None:
            with ctx.cursor() as c:
                return read_situations(c), read_cells(c) if with_cells else []
        try:  # computed afresh and rolled back: no map refresh meanwhile
            with jobs.processing(), ctx.cursor() as c:
                return read_map(c, ProcessOptions.from_settings(ctx.settings), since,
                                cells=with_cells)
        except UnknownVersion as exc:
            raise HTTPException(404, str(exc)) from None

    @routes.get(f"{PREFIX}/map", response_model=list[SituationRecord],
                responses=error_responses(404),
                summary="The failure map's situations, worst first (as `map --json`)")
    def failure_map(status: Annotated[str | None, Query(description="Only this status.")] = None,
                    axis: Annotated[str | None, Query(description="Only situations with a "
                                                      "coordinate on this axis.")] = None,
                    since: Since = None) -> list[SituationRecord]:
        found, _ = map_of(since)
        return [s for s in found if (status is None or s.status == status)
                and (axis is None or any(k.axis == axis for k in s.coordinates))]

    @routes.get(f"{PREFIX}/map/situations/{{situation_id:path}}",
                response_model=SituationRecord, responses=error_responses(404),
                summary="One situation with its member conversation ids")
    def situation(situation_id: str, since: Since = None) -> SituationRecord:
        if since is None:
            with ctx.cursor() as c:
                found = read_situations(c, situation_id)
        else:
            found = [s for s in map_of(since)[0] if s.situation_id == situation_id]
        if not found:
            raise HTTPException(404, f"no situation {situation_id!r} in the failure map")
        return found[0]

    @routes.get(f"{PREFIX}/map/cells", response_model=list[CellRecord],
                responses=error_responses(404),
                summary="The pair cells behind the situations (as `map --cells --json --all`)")
    def cells(since: Since = None) -> list[CellRecord]:
        return map_of(since, with_cells=True)[1]

    @routes.get(f"{PREFIX}/versions", response_model=list[VersionOut],
                summary="Model versions in the order they first appeared, with their counts "
                        "(what `since` may name)")
    def versions() -> list[VersionOut]:
        with ctx.cursor() as c:
            rows = c.execute(load_sql("processor", "versions.sql")).fetchall()
        return [VersionOut(version=v, first_seen_unix_nano=int(first), conversations=int(n),
                           graded=int(graded)) for v, first, n, graded in rows]

    @routes.post(f"{PREFIX}/process", response_model=ProcessSummary,
                 responses=error_responses(403, 500),
                 summary="Process new spans into conversations and the map now "
                         "(as `tracemill process`)")
    def process_now() -> ProcessSummary:
        try:
            result = jobs.process_now()
        except TracemillError as exc:
            raise HTTPException(500, f"processing failed: {exc}") from None
        with ctx.cursor() as c:
            situations = read_situations(c)
        return process_summary(result, situations)

    def report(since: str | None) -> ReportOut:
        from processor.errors import UnknownVersion
        from processor.run import ProcessOptions

        try:
            with jobs.processing(), ctx.cursor() as c:
                found, examples = report_content(c, ProcessOptions.from_settings(ctx.settings),
                                                 None, since, ctx.redact)
        except UnknownVersion as exc:
            raise HTTPException(404, str(exc)) from None
        return ReportOut(report=found, examples=examples)

    @routes.get(f"{PREFIX}/reports/trace", response_model=ReportOut,
                summary="The trace report: the latest model version against the one before "
                        "(as `report`'s report.json), with its example conversations")
    def trace_report() -> ReportOut:
        return report(None)

    @routes.get(f"{PREFIX}/reports/regression", response_model=ReportOut,
                responses=error_responses(404),
                summary="The regression report: the latest model version against `since` "
                        "(as `report --since VERSION`), with its example conversations")
    def regression_report(since: Annotated[str, Query(
            min_length=1, description="The model version to compare with.")]) -> ReportOut:
        return report(since)

    @routes.get(f"{PREFIX}/conversations", response_model=list[ConversationRecord],
                summary="Processed conversations, newest first (as `conversations --json`)")
    def conversations(outcome: Literal["pass", "fail", "ungraded"] | None = None,
                      version: str | None = None, tool: str | None = None,
                      situation: str | None = None,
                      limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
                      ) -> list[ConversationRecord]:
        with ctx.cursor() as c:
            return read_conversations(c, outcome=outcome, version=version, tool=tool,
                                      situation=situation, limit=limit)

    @routes.get(f"{PREFIX}/conversations/{{conversation_id:path}}",
                response_model=ConversationRecord, responses=error_responses(404),
                summary="One conversation with its transcript")
    def conversation(conversation_id: str) -> ConversationRecord:
        with ctx.cursor() as c:
            found = read_conversations(c, conversation_id=conversation_id, limit=1)
        if not found:
            raise HTTPException(404, f"no conversation {conversation_id!r}")
        return found[0]

    return routes
