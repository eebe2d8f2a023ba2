"""The admin API's routes over generation: runs and their jobs, exports, rollouts, late
labels, the judges' agreement and the held-out split."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query

from generator.schedule import ExportJob, GenerationBusy
from tracemill.api_context import PREFIX, ApiContext, error_responses
from tracemill.api_models import (
    ExportJobOut,
    GenerationJobOut,
    LabelIn,
    LabelsStored,
    SplitIn,
    StartExport,
    StartRun,
)
from tracemill.config import Settings
from tracemill.errors import TracemillError

__all__ = ["export_folder", "run_routes"]


def export_folder(settings: Settings, out: str) -> Path:
    """Where an export through the API may write: ``out`` under ``export_dir`` (default
    the store's folder); anything resolving outside it is refused, so an admin token does
    not grant writing anywhere the service's user may."""
    root = (settings.export_dir or settings.db.parent).resolve()
    try:
        target = (root / out).resolve()
    except (OSError, ValueError) as exc:  # a NUL byte, a loop of links
        raise TracemillError(f"cannot use {out!r} as a folder under {root}: {exc}; give a "
                             "plain folder name") from None
    if target != root and root not in target.parents:
        raise TracemillError(
            f"the service writes exports only under {root} (export_dir, "
            f"TRACEMILL_EXPORT_DIR); {out!r} is outside it: choose a folder inside it")
    return target


def run_routes(ctx: ApiContext) -> APIRouter:
    """The routes that start, follow and read generation and its outputs."""
    routes = APIRouter()
    jobs = ctx.jobs
    exporting = threading.Lock()  # a check of the folders being written, then the start

    @routes.get(f"{PREFIX}/runs", summary="Generation runs, newest first (as `runs --json`)")
    def runs() -> list[dict[str, Any]]:
        from generator.rollout_store import list_runs

        with ctx.cursor() as c:
            return list_runs(c)

    @routes.post(f"{PREFIX}/runs", status_code=202, response_model=GenerationJobOut,
                 responses=error_responses(400, 403, 409),
                 summary="Start a generation run now with a budget")
    def start_run(body: StartRun) -> GenerationJobOut:
        try:
            job = jobs.start_generation(body.budget)
        except GenerationBusy as exc:
            raise HTTPException(409, str(exc)) from None
        return ctx.job_out(job)

    @routes.get(f"{PREFIX}/runs/{{run_id:path}}", responses=error_responses(404),
                summary="One run's stored record")
    def run(run_id: str) -> Any:
        from generator.rollout_store import latest_record

        with ctx.cursor() as c:
            record = latest_record(c, run_id)
        if record is None:
            raise HTTPException(404, f"no finished record for run {run_id!r}")
        return json.loads(record)

    @routes.get(f"{PREFIX}/jobs/{{job_id}}", response_model=GenerationJobOut,
                responses=error_responses(404),
                summary="Progress of a generation run started in this service")
    def job(job_id: str) -> GenerationJobOut:
        found = jobs.job(job_id)
        if found is None:
            raise HTTPException(404, f"no job {job_id!r} in this service")
        return ctx.job_out(found)

    @routes.post(f"{PREFIX}/jobs/{{job_id}}/stop", response_model=GenerationJobOut,
                 responses=error_responses(403, 404),
                 summary="Stop a generation run started in this service (it is stored as "
                         "interrupted and can be resumed)")
    def stop_job(job_id: str) -> GenerationJobOut:
        found = jobs.stop_generation(job_id)
        if found is None:
            raise HTTPException(404, f"no job {job_id!r} in this service")
        return ctx.job_out(found)

    def export_out(job: ExportJob) -> ExportJobOut:
        return ExportJobOut(**asdict(job))

    @routes.get(f"{PREFIX}/exports", response_model=list[ExportJobOut],
                summary="Exports written by this service, newest first, with their data "
                        "cards as they land")
    def exports() -> list[ExportJobOut]:
        return [export_out(e) for e in jobs.exports()]

    @routes.post(f"{PREFIX}/exports", status_code=202, response_model=ExportJobOut,
                 responses=error_responses(403, 409),
                 summary="Start an export of the stored split (as `tracemill export`)")
    def start_export(body: StartExport) -> ExportJobOut:
        from generator.exports import ExportOptions

        try:
            out = export_folder(ctx.settings, body.out)
        except TracemillError as exc:
            raise HTTPException(403, str(exc)) from None
        if out.exists() and not out.is_dir():
            raise HTTPException(409, f"{out} is a file; give a folder to write into")
        with exporting:  # two requests for one folder: the second sees the first
            writing = [e for e in jobs.exports()
                       if e.out == str(out) and e.state in ("queued", "running")]
            if writing:
                raise HTTPException(409, f"export {writing[0].export_id} is still writing "
                                         f"into {out}; wait for it to finish (GET "
                                         f"{PREFIX}/exports/{writing[0].export_id}) or "
                                         "choose another folder")
            return export_out(jobs.start_export(body.format, out, ExportOptions(
                loss_mask=body.loss_mask, seed=body.seed,
                allow_length_bias=body.allow_length_bias, redact=ctx.settings.redact)))

    @routes.get(f"{PREFIX}/exports/{{export_id}}", response_model=ExportJobOut,
                responses=error_responses(404), summary="One export with its data card once landed")
    def one_export(export_id: str) -> ExportJobOut:
        found = jobs.export_job(export_id)
        if found is None:
            raise HTTPException(404, f"no export {export_id!r} in this service")
        return export_out(found)

    @routes.get(f"{PREFIX}/rollouts", summary="Rollouts in full, newest run first "
                                              "(as `rollouts --json`)")
    def rollouts(run: str | None = None, situation: str | None = None,
                 outcome: Literal["pass", "fail", "ungraded"] | None = None,
                 mutation: Literal["fired", "not_fired", "none"] | None = None,
                 limit: Annotated[int, Query(ge=1, le=10_000)] = 50) -> list[dict[str, Any]]:
        from generator.rollout_views import RolloutFilter, find_rollout, list_rollouts

        with ctx.cursor() as c:
            rows = list_rollouts(c, RolloutFilter(run_id=run, situation=situation,
                                                  outcome=outcome, mutation=mutation,
                                                  limit=limit))
            details = [find_rollout(c, row.rollout_id) for row in rows]
        return [d.to_json() for d in details if d is not None]

    @routes.get(f"{PREFIX}/rollouts/{{rollout_id:path}}", responses=error_responses(404),
                summary="One rollout in full")
    def rollout(rollout_id: str) -> dict[str, Any]:
        from generator.rollout_views import find_rollout

        with ctx.cursor() as c:
            found = find_rollout(c, rollout_id)
        if found is None:
            raise HTTPException(404, f"no rollout {rollout_id!r}")
        return found.to_json()

    @routes.post(f"{PREFIX}/labels", status_code=201, response_model=LabelsStored,
                 responses=error_responses(400, 403),
                 summary="Late feedback: label a conversation, trace or rollout")
    def label(body: LabelIn) -> LabelsStored:
        from processor.labels import LabelRow, store_labels, unknown_targets

        target = body.conversation_id or body.trace_id or body.rollout_id
        assert target is not None
        rows = [LabelRow(target, body.passed, body.reward, body.kind, body.labeled_by,
                         body.note)]
        stored = store_labels(ctx.store, rows, Path("api"))
        return LabelsStored(stored=stored, unknown=unknown_targets(ctx.store, rows))

    @routes.get(f"{PREFIX}/judges", summary="Graders measured against human labels on "
                                            "rollouts (as `judges --json`)")
    def judges() -> list[dict[str, Any]]:
        from generator.judges import judge_report

        with ctx.cursor() as c:
            return [asdict(report) for report in judge_report(c)]

    @routes.post(f"{PREFIX}/split", responses=error_responses(400, 403),
                 summary="Hold out situations for evaluation (as `split --json`); the split "
                         "is stored")
    def split(body: SplitIn) -> dict[str, Any]:
        from generator.errors import GeneratorError
        from generator.split import SplitOptions, split_store

        try:
            with ctx.cursor() as c:
                report = split_store(c, SplitOptions(held_out=body.held_out, seed=body.seed,
                                                     reset=body.reset))
        except GeneratorError as exc:
            raise HTTPException(400, str(exc)) from None
        return report.to_json()

    return routes
