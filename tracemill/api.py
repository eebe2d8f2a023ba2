"""The admin HTTP API of ``tracemill serve``: ``/api/v1/...`` on its own port.

It answers in the same records the command line prints with ``--json`` (map situations,
conversations, runs, rollouts), so that the CLI can ask it while the service holds the
store and print the same output. The OpenAPI document is ``/api/v1/openapi.json``.

It listens on ``api_address`` (default 127.0.0.1:4319), apart from the ingestion ports:
agents reach OTLP across the cluster while administration stays on loopback, the admin
token (``admin_token``) is separate from the ingestion token, and a token is required to
listen beyond loopback. No CORS headers are sent unless ``cors_origins`` names origins, so
browsers on other origins cannot read it, and :mod:`tracemill.api_guard` refuses other
host names (DNS rebinding) and changes sent from other origins' pages. Invalid input is
answered 422 with the problems (:func:`validation_message`), never the input itself.
Every JSON answer passes through the ``redact`` setting's
:class:`~tracemill.redact.Redactor`, so the page that reads the API shows no redacted
value either.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

import duckdb
import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Query
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from collector.server import QuietUvicorn
from collector.stats import store_stats
from generator.schedule import ExportJob, GenerationBusy, GenerationJob, ServiceJobs
from processor.commands import ProcessSummary, process_summary, read_map, report_content
from processor.conversation_records import ConversationRecord, read_conversations
from processor.map_records import CellRecord, SituationRecord, read_cells, read_situations
from tracemill.api_guard import RequestGuard, answered_hosts
from tracemill.api_models import (
    ErrorBody,
    ExportJobOut,
    GenerationJobOut,
    LabelIn,
    LabelsStored,
    ReportOut,
    ScheduledJobOut,
    SplitIn,
    StartExport,
    StartRun,
    Status,
    VersionOut,
)
from tracemill.config import Settings, is_loopback, join_address, split_address
from tracemill.errors import TracemillError
from tracemill.redact import Redactor, redactor
from tracemill.store import Store, load_sql

__all__ = ["ApiServer", "build_app", "check_api_exposure", "export_folder",
           "validation_message"]

PREFIX = "/api/v1"
_BEARER = HTTPBearer(auto_error=False, description="TRACEMILL_ADMIN_TOKEN, when it is set.")
_log = logging.getLogger("tracemill.api")

Since = Annotated[str | None, Query(
    min_length=1, description="Compare the latest model version with this one instead of "
    "the version before it (as `map --since`); 404 when it is not a stored version or is "
    "the latest.")]
"""The ``since`` parameter of the map's routes."""


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    words = {400: "Unreadable or refused request", 401: "Missing or wrong admin token",
             403: "Not allowed here", 404: "No such item", 405: "Method not allowed",
             409: "A generation run is under way, an export is writing into the folder, "
                  "or the target is a file",
             500: "Processing failed"}
    return {code: {"model": ErrorBody, "description": words[code]} for code in codes}


def check_api_exposure(settings: Settings) -> None:
    """Refuse an admin API beyond loopback without ``admin_token``."""
    host, _ = split_address(settings.api_address)
    if settings.admin_token is None and not is_loopback(host):
        raise TracemillError(
            f"refusing to serve the admin API on {settings.api_address} without a token: "
            "anyone who reaches it could read conversations and start runs; set "
            "TRACEMILL_ADMIN_TOKEN (separate from TRACEMILL_AUTH_TOKEN) or bind it to "
            "loopback with --api-address 127.0.0.1:4319")


def _redacting_response(redact: Redactor) -> type[JSONResponse]:
    class RedactingJSONResponse(JSONResponse):
        """A JSON answer with the ``redact`` keys' values masked."""

        def render(self, content: Any) -> bytes:
            return super().render(redact.apply(content))

    return RedactingJSONResponse


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


def build_app(settings: Settings, store: Store, jobs: ServiceJobs) -> FastAPI:
    """The API over an open store and the service's jobs."""
    token = settings.admin_token.get_secret_value() if settings.admin_token else None
    redact = redactor(settings.redact)

    def authorized(credentials: Annotated[HTTPAuthorizationCredentials | None,
                                          Depends(_BEARER)] = None) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "missing or wrong admin token: send "
                                     "'Authorization: Bearer <TRACEMILL_ADMIN_TOKEN>'",
                                headers={"WWW-Authenticate": "Bearer"})

    answer = _redacting_response(redact)
    app = _AdminApp(title="tracemill", version="1", openapi_url=f"{PREFIX}/openapi.json",
                    docs_url=None, redoc_url=None, dependencies=[Depends(authorized)],
                    responses=_errors(400, 401, 405), default_response_class=answer)
    if settings.cors_origins:  # closed unless origins are named
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST"],
                           allow_headers=["authorization", "content-type"])
    # outermost: other hosts and cross-site changes are refused before anything runs
    app.add_middleware(RequestGuard, hosts=answered_hosts(settings),
                       origins=settings.cors_origins)
    exporting = threading.Lock()  # a check of the folders being written, then the start

    @contextmanager
    def cursor() -> Iterator[duckdb.DuckDBPyConnection]:
        opened = store.cursor()
        try:
            yield opened
        finally:
            opened.close()

    def job_out(job: GenerationJob) -> GenerationJobOut:
        from generator.rollout_store import stored_progress

        rollouts = 0
        if job.run_id is not None:  # as the run reported it (never guessed from times)
            with cursor() as c:
                rollouts = len(stored_progress(c, job.run_id).indices)
        return GenerationJobOut(**asdict(job), rollouts=rollouts)

    @app.get(f"{PREFIX}/status", response_model=Status, summary="Counts and next runs")
    def status() -> Status:
        with cursor() as c:
            situations = len(read_situations(c))
            row = c.execute(load_sql("generator", "service_counts.sql")).fetchone()
            conversations, runs = (int(row[0]), int(row[1])) if row else (0, 0)
        return Status(counts=store_stats(store), situations=situations,
                      conversations=conversations, runs=runs,
                      schedule=[ScheduledJobOut(**asdict(j)) for j in jobs.schedule()],
                      jobs=[job_out(j) for j in jobs.jobs()], map_error=jobs.map_error)

    def map_of(since: str | None, *, with_cells: bool = False,
               ) -> tuple[list[SituationRecord], list[CellRecord]]:
        from processor.errors import UnknownVersion
        from processor.run import ProcessOptions

        if since is None:
            with cursor() as c:
                return read_situations(c), read_cells(c) if with_cells else []
        try:  # computed afresh and rolled back: no map refresh meanwhile
            with jobs.processing(), cursor() as c:
                return read_map(c, ProcessOptions.from_settings(settings), since,
                                cells=with_cells)
        except UnknownVersion as exc:
            raise HTTPException(404, str(exc)) from None

    @app.get(f"{PREFIX}/map", response_model=list[SituationRecord], responses=_errors(404),
             summary="The failure map's situations, worst first (as `map --json`)")
    def failure_map(status: Annotated[str | None, Query(description="Only this status.")] = None,
                    axis: Annotated[str | None, Query(description="Only situations with a "
                                                      "coordinate on this axis.")] = None,
                    since: Since = None) -> list[SituationRecord]:
        found, _ = map_of(since)
        return [s for s in found if (status is None or s.status == status)
                and (axis is None or any(k.axis == axis for k in s.coordinates))]

    @app.get(f"{PREFIX}/map/situations/{{situation_id:path}}", response_model=SituationRecord,
             responses=_errors(404),
             summary="One situation with its member conversation ids")
    def situation(situation_id: str, since: Since = None) -> SituationRecord:
        if since is None:
            with cursor() as c:
                found = read_situations(c, situation_id)
        else:
            found = [s for s in map_of(since)[0] if s.situation_id == situation_id]
        if not found:
            raise HTTPException(404, f"no situation {situation_id!r} in the failure map")
        return found[0]

    @app.get(f"{PREFIX}/map/cells", response_model=list[CellRecord], responses=_errors(404),
             summary="The pair cells behind the situations (as `map --cells --json --all`)")
    def cells(since: Since = None) -> list[CellRecord]:
        return map_of(since, with_cells=True)[1]

    @app.get(f"{PREFIX}/versions", response_model=list[VersionOut],
             summary="Model versions in the order they first appeared, with their counts "
                     "(what `since` may name)")
    def versions() -> list[VersionOut]:
        with cursor() as c:
            rows = c.execute(load_sql("processor", "versions.sql")).fetchall()
        return [VersionOut(version=v, first_seen_unix_nano=int(first), conversations=int(n),
                           graded=int(graded)) for v, first, n, graded in rows]

    @app.post(f"{PREFIX}/process", response_model=ProcessSummary,
              responses=_errors(403, 500),
              summary="Process new spans into conversations and the map now "
                      "(as `tracemill process`)")
    def process_now() -> ProcessSummary:
        try:
            result = jobs.process_now()
        except TracemillError as exc:
            raise HTTPException(500, f"processing failed: {exc}") from None
        with cursor() as c:
            situations = read_situations(c)
        return process_summary(result, situations)

    def report(since: str | None) -> ReportOut:
        from processor.errors import UnknownVersion
        from processor.run import ProcessOptions

        try:
            with jobs.processing(), cursor() as c:
                found, examples = report_content(c, ProcessOptions.from_settings(settings),
                                                 None, since, redact)
        except UnknownVersion as exc:
            raise HTTPException(404, str(exc)) from None
        return ReportOut(report=found, examples=examples)

    @app.get(f"{PREFIX}/reports/trace", response_model=ReportOut,
             summary="The trace report: the latest model version against the one before "
                     "(as `report`'s report.json), with its example conversations")
    def trace_report() -> ReportOut:
        return report(None)

    @app.get(f"{PREFIX}/reports/regression", response_model=ReportOut,
             responses=_errors(404),
             summary="The regression report: the latest model version against `since` "
                     "(as `report --since VERSION`), with its example conversations")
    def regression_report(since: Annotated[str, Query(
            min_length=1, description="The model version to compare with.")]) -> ReportOut:
        return report(since)

    @app.get(f"{PREFIX}/conversations", response_model=list[ConversationRecord],
             summary="Processed conversations, newest first (as `conversations --json`)")
    def conversations(outcome: Literal["pass", "fail", "ungraded"] | None = None,
                      version: str | None = None, tool: str | None = None,
                      situation: str | None = None,
                      limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
                      ) -> list[ConversationRecord]:
        with cursor() as c:
            return read_conversations(c, outcome=outcome, version=version, tool=tool,
                                      situation=situation, limit=limit)

    @app.get(f"{PREFIX}/conversations/{{conversation_id:path}}",
             response_model=ConversationRecord,
             responses=_errors(404),
             summary="One conversation with its transcript")
    def conversation(conversation_id: str) -> ConversationRecord:
        with cursor() as c:
            found = read_conversations(c, conversation_id=conversation_id, limit=1)
        if not found:
            raise HTTPException(404, f"no conversation {conversation_id!r}")
        return found[0]

    @app.get(f"{PREFIX}/runs", summary="Generation runs, newest first (as `runs --json`)")
    def runs() -> list[dict[str, Any]]:
        from generator.rollout_store import list_runs

        with cursor() as c:
            return list_runs(c)

    @app.post(f"{PREFIX}/runs", status_code=202, response_model=GenerationJobOut,
              responses=_errors(400, 403, 409),
              summary="Start a generation run now with a budget")
    def start_run(body: StartRun) -> GenerationJobOut:
        try:
            job = jobs.start_generation(body.budget)
        except GenerationBusy as exc:
            raise HTTPException(409, str(exc)) from None
        return job_out(job)

    @app.get(f"{PREFIX}/runs/{{run_id:path}}", responses=_errors(404),
             summary="One run's stored record")
    def run(run_id: str) -> Any:
        from generator.rollout_store import latest_record

        with cursor() as c:
            record = latest_record(c, run_id)
        if record is None:
            raise HTTPException(404, f"no finished record for run {run_id!r}")
        return json.loads(record)

    @app.get(f"{PREFIX}/jobs/{{job_id}}", response_model=GenerationJobOut, responses=_errors(404),
             summary="Progress of a generation run started in this service")
    def job(job_id: str) -> GenerationJobOut:
        found = jobs.job(job_id)
        if found is None:
            raise HTTPException(404, f"no job {job_id!r} in this service")
        return job_out(found)

    @app.post(f"{PREFIX}/jobs/{{job_id}}/stop", response_model=GenerationJobOut,
              responses=_errors(403, 404),
              summary="Stop a generation run started in this service (it is stored as "
                      "interrupted and can be resumed)")
    def stop_job(job_id: str) -> GenerationJobOut:
        found = jobs.stop_generation(job_id)
        if found is None:
            raise HTTPException(404, f"no job {job_id!r} in this service")
        return job_out(found)

    def export_out(job: ExportJob) -> ExportJobOut:
        return ExportJobOut(**asdict(job))

    @app.get(f"{PREFIX}/exports", response_model=list[ExportJobOut],
             summary="Exports written by this service, newest first, with their data "
                     "cards as they land")
    def exports() -> list[ExportJobOut]:
        return [export_out(e) for e in jobs.exports()]

    @app.post(f"{PREFIX}/exports", status_code=202, response_model=ExportJobOut,
              responses=_errors(403, 409),
              summary="Start an export of the stored split (as `tracemill export`)")
    def start_export(body: StartExport) -> ExportJobOut:
        from generator.exports import ExportOptions

        try:
            out = export_folder(settings, body.out)
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
                allow_length_bias=body.allow_length_bias, redact=settings.redact)))

    @app.get(f"{PREFIX}/exports/{{export_id}}", response_model=ExportJobOut,
             responses=_errors(404), summary="One export with its data card once landed")
    def one_export(export_id: str) -> ExportJobOut:
        found = jobs.export_job(export_id)
        if found is None:
            raise HTTPException(404, f"no export {export_id!r} in this service")
        return export_out(found)

    @app.get(f"{PREFIX}/rollouts", summary="Rollouts in full, newest run first "
                                           "(as `rollouts --json`)")
    def rollouts(run: str | None = None, situation: str | None = None,
                 outcome: Literal["pass", "fail", "ungraded"] | None = None,
                 mutation: Literal["fired", "not_fired", "none"] | None = None,
                 limit: Annotated[int, Query(ge=1, le=10_000)] = 50) -> list[dict[str, Any]]:
        from generator.rollout_views import RolloutFilter, find_rollout, list_rollouts

        with cursor() as c:
            rows = list_rollouts(c, RolloutFilter(run_id=run, situation=situation,
                                                  outcome=outcome, mutation=mutation,
                                                  limit=limit))
            details = [find_rollout(c, row.rollout_id) for row in rows]
        return [d.to_json() for d in details if d is not None]

    @app.get(f"{PREFIX}/rollouts/{{rollout_id:path}}", responses=_errors(404),
             summary="One rollout in full")
    def rollout(rollout_id: str) -> dict[str, Any]:
        from generator.rollout_views import find_rollout

        with cursor() as c:
            found = find_rollout(c, rollout_id)
        if found is None:
            raise HTTPException(404, f"no rollout {rollout_id!r}")
        return found.to_json()

    @app.post(f"{PREFIX}/labels", status_code=201, response_model=LabelsStored,
              responses=_errors(400, 403),
              summary="Late feedback: label a conversation, trace or rollout")
    def label(body: LabelIn) -> LabelsStored:
        from processor.labels import LabelRow, store_labels, unknown_targets

        target = body.conversation_id or body.trace_id or body.rollout_id
        assert target is not None
        rows = [LabelRow(target, body.passed, body.reward, body.kind, body.labeled_by,
                         body.note)]
        stored = store_labels(store, rows, Path("api"))
        return LabelsStored(stored=stored, unknown=unknown_targets(store, rows))

    @app.get(f"{PREFIX}/judges", summary="Graders measured against human labels on "
                                         "rollouts (as `judges --json`)")
    def judges() -> list[dict[str, Any]]:
        from generator.judges import judge_report

        with cursor() as c:
            return [asdict(report) for report in judge_report(c)]

    @app.post(f"{PREFIX}/split", responses=_errors(400, 403),
              summary="Hold out situations for evaluation (as `split --json`); the split is "
                      "stored")
    def split(body: SplitIn) -> dict[str, Any]:
        from generator.errors import GeneratorError
        from generator.split import SplitOptions, split_store

        try:
            with cursor() as c:
                report = split_store(c, SplitOptions(held_out=body.held_out, seed=body.seed,
                                                     reset=body.reset))
        except GeneratorError as exc:
            raise HTTPException(400, str(exc)) from None
        return report.to_json()

    @app.exception_handler(StarletteHTTPException)
    async def _error(_: Any, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code,
                            headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Any, exc: RequestValidationError) -> JSONResponse:
        # the problems without the input FastAPI would echo: it may hold what the
        # redact setting hides, and the answer keeps the API's one error shape
        return answer({"error": validation_message(exc)}, status_code=422)

    @app.exception_handler(Exception)
    async def _crash(_: Any, exc: Exception) -> JSONResponse:
        _log.error("API request failed", extra={"fields": {"error": repr(exc)}})
        return JSONResponse({"error": f"internal error: {type(exc).__name__}"},
                            status_code=500)

    from tracemill.page import mount as mount_page

    mount_page(app)  # the web page at /ui/ (tracemill/page), outside the token dependency
    return app


def validation_message(exc: RequestValidationError) -> str:
    """``loc: msg; ...`` for each problem of a request (``body.budget: Input should be a
    valid string``), without the input."""
    problems = [f"{'.'.join(str(part) for part in error.get('loc', ()))}: "
                f"{error.get('msg', 'invalid')}" for error in exc.errors()]
    return "; ".join(problems) or "the request does not match the API's schema"


class _AdminApp(FastAPI):
    """FastAPI whose OpenAPI document declares the API's own 422 answer (:class:`ErrorBody`,
    from :func:`validation_message`) instead of FastAPI's default one."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is not None:
            return self.openapi_schema
        document = super().openapi()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                invalid = operation.get("responses", {}).get("422")
                if invalid is not None:
                    operation["responses"]["422"] = {
                        "description": "The request does not match the schema: each field "
                                       "and its problem",
                        "content": {"application/json": {
                            "schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
        schemas = document.get("components", {}).get("schemas", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        return document


class ApiServer:
    """The API on its own thread and event loop, on a socket bound at construction."""

    def __init__(self, settings: Settings, app: FastAPI) -> None:
        host, port = split_address(settings.api_address)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.create_server((host, port), family=family, reuse_port=False)
        self.address = join_address(host, self._socket.getsockname()[1])
        """Where it listens (host:port; ``[::1]:port`` for IPv6, as a URL needs it)."""
        self._server = QuietUvicorn(uvicorn.Config(app, log_level="warning", access_log=False,
                                               lifespan="off"))
        self._thread = threading.Thread(target=self._run, name="tracemill-api", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._socket]))

    def start(self) -> None:
        """Start serving."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving (requests under way finish)."""
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self._socket.close()
