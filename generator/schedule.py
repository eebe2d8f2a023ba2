"""The jobs ``tracemill serve`` runs on a schedule beside the collector.

:class:`ServiceJobs` hosts an APScheduler ``BackgroundScheduler`` with two jobs over the
store the collector holds (DuckDB lets one process write a file; each job works through
its own cursors):

- ``refresh-map`` every ``process_every_seconds``: conversations and the failure map;
- ``generate`` on the ``generate_cron`` schedule: process, then one generation run with
  ``generate_budget`` (or ``budget``) and the generate settings.

At most one generation runs at a time (``max_instances=1``, and a lock shared with runs
started through the API); runs missed while the service was down or busy are coalesced
into one. A run that raises is recorded in ``generation_runs`` as ``failed`` with its
error (:func:`record_failure`) and the service keeps ingesting. The same work runs
outside the service as ``tracemill generate`` (cron, a Kubernetes CronJob).

Each job learns its run id and the count of finished rollouts from the run itself
(``run_generation``'s ``on_progress``), never by guessing from start times: a resumed
run keeps its first start time, and on a lake other processes start runs too. A stop
request sets the run's stop event: no rollout starts after it, those in flight finish
and are stored, and the run is stored ``interrupted`` (resumable); see
:class:`generator.execute.Execution` for the grace after which stragglers are cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from tracemill.config import Settings, cron_trigger
from tracemill.errors import TracemillError
from tracemill.lake import retrying
from tracemill.store import Store, load_sql

__all__ = ["ExportJob", "GenerationBusy", "GenerationJob", "ScheduledJob", "ServiceJobs",
           "record_failure"]

_log = logging.getLogger("tracemill.schedule")
_KEPT_JOBS = 100


class GenerationBusy(TracemillError):
    """A generation run is already under way in this service."""

    exit_code = 3


@dataclass(frozen=True)
class ScheduledJob:
    """One job on the service's schedule."""

    name: str
    """refresh-map or generate."""
    schedule: str
    """The cron expression, or 'every N s'."""
    next_run: str | None
    """When it runs next (ISO 8601, UTC); None while paused."""


@dataclass(frozen=True)
class GenerationJob:
    """One generation run started by the schedule or the API, as the service saw it."""

    job_id: str
    """The service's id for the request (the run id is known once it has settled)."""
    trigger: str
    """schedule or api."""
    budget: str
    """The budget it was given."""
    state: str
    """queued, running, stopping, stopped (by a stop request: resumable), finished or
    failed."""
    run_id: str | None
    """The generation run (``tracemill runs RUN_ID``), as the run reported it once it
    settled on one (a new run once planned, or the unfinished run it resumes)."""
    error: str | None
    """Why it failed."""
    started_unix_nano: int
    """When the job started (0 while queued)."""
    ended_unix_nano: int | None
    """When it ended."""
    finished: int = 0
    """Rollouts of the run finished so far (those earlier invocations of a resumed run
    stored included); ahead of the stored count by the rows not yet committed."""


@dataclass(frozen=True)
class ExportJob:
    """One export written by the service (started through the API)."""

    export_id: str
    """The service's id for it."""
    format: str
    """The export format (sft, trl, preference, rl, parquet)."""
    out: str
    """The folder it writes into, on the service's machine."""
    state: str
    """queued, running, finished or failed."""
    card: dict[str, Any] | None
    """Its data card, once it has landed."""
    error: str | None
    """Why it failed."""
    started_unix_nano: int
    """When it started (0: queued)."""
    ended_unix_nano: int | None
    """When it ended."""


def record_failure(store: Store, settings: Settings, budget: str, started_unix_nano: int,
                   error: str, run_id: str | None = None) -> str:
    """Record a failed run: mark ``run_id`` (the run it worked on, as the run reported
    it) failed while it is still running, or insert one failed run when it failed before
    it settled on a run. Returns the run id."""
    now = time.time_ns()
    record = json.dumps({"stop_reason": "error", "error": error})
    with store.transaction() as cursor:
        if run_id is not None:
            marked = cursor.execute(load_sql("generator", "fail_run.sql"),
                                    [record, now, run_id]).fetchall()
            if marked:
                return str(marked[0][0])
        run_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-failed-" + uuid.uuid4().hex[:6]
        cursor.execute(load_sql("generator", "insert_failed_run.sql"), [
            run_id, settings.seed, json.dumps({"agent": settings.agent, "budget": budget}),
            record, started_unix_nano, now])
    return run_id


class ServiceJobs:
    """The scheduler of one ``tracemill serve`` process."""

    def __init__(self, settings: Settings, store: Store, credentials: Mapping[str, str]) -> None:
        self._settings = settings
        self._store = store
        self._credentials = dict(credentials)
        self.stored_first: Callable[[], bool] | None = None
        """Waits until what the collector acknowledged so far is stored as rows (False when
        it timed out); set by ``serve`` once its collector exists, so that processing (and
        every CLI read through the service) sees what was acknowledged before it."""
        self._scheduler = BackgroundScheduler(timezone="UTC", job_defaults={
            "coalesce": True, "max_instances": 1, "misfire_grace_time": 3600})
        self._processing = threading.Lock()
        self._generating = threading.Lock()
        self._jobs: dict[str, GenerationJob] = {}
        self._jobs_lock = threading.Lock()
        self._stops: dict[str, threading.Event] = {}
        self._stop_requested: set[str] = set()
        self._exports: dict[str, ExportJob] = {}
        self.map_error: str | None = None
        """The last map refresh's error, None after one that succeeded."""
        if settings.process_every_seconds > 0:
            self._scheduler.add_job(self.refresh_map, IntervalTrigger(
                seconds=settings.process_every_seconds), id="refresh-map",
                name=f"every {settings.process_every_seconds:g} s")
        if settings.generate_cron:
            self._scheduler.add_job(self._scheduled_generation,
                                    cron_trigger(settings.generate_cron), id="generate",
                                    name=settings.generate_cron)
        if store.is_lake:  # merge the lake's small files, expire old snapshots
            self._scheduler.add_job(self._maintain_lake, IntervalTrigger(hours=1),
                                    id="lake-maintenance", name="every hour")

    def start(self) -> None:
        """Start the scheduler thread."""
        self._scheduler.start()

    def shutdown(self) -> None:
        """Stop scheduling. A generation run under way is stopped as :meth:`stop_generation`
        stops it (its rollouts in flight finish and are stored; the run is interrupted and
        the next run with the same options resumes it), then waited for."""
        with self._jobs_lock:
            running = [job_id for job_id, job in self._jobs.items()
                       if job.state in ("queued", "running")]
        for job_id in running:
            self.stop_generation(job_id)
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)

    def schedule(self) -> list[ScheduledJob]:
        """The jobs on the schedule with their next run times."""
        found = []
        for job in self._scheduler.get_jobs():
            if job.id not in ("refresh-map", "generate"):
                continue  # a run started through the API, about to start
            when: datetime | None = getattr(job, "next_run_time", None)
            found.append(ScheduledJob(job.id, job.name,
                                      when.isoformat() if when is not None else None))
        return found

    def jobs(self) -> list[GenerationJob]:
        """Generation jobs of this process, newest first."""
        with self._jobs_lock:
            return sorted(self._jobs.values(), key=lambda j: j.started_unix_nano, reverse=True)

    def job(self, job_id: str) -> GenerationJob | None:
        """One generation job of this process."""
        with self._jobs_lock:
            return self._jobs.get(job_id)

    @contextmanager
    def processing(self) -> Iterator[None]:
        """Hold the processing lock (no map refresh meanwhile), e.g. to compute a report."""
        with self._processing:
            yield

    def process_now(self) -> Any:
        """Process new spans now (after a refresh under way); returns the
        :class:`~processor.run.ProcessResult`, raises what processing raised."""
        from processor.run import ProcessOptions, process

        def work() -> Any:
            return process(self._store, ProcessOptions.from_settings(self._settings),
                           workers=1, credentials=self._credentials)

        if self.stored_first is not None and not self.stored_first():
            _log.warning("processing before everything acknowledged is stored (the spool "
                         "backlog is still being stored); the next pass takes the rest")
        with self._processing:
            # on a lake another process may commit the same tables meanwhile: try again
            result = retrying(work) if self._store.is_lake else work()
        self.map_error = None
        return result

    def _maintain_lake(self) -> None:
        """The lake's hourly upkeep (logged, never raised: the next hour tries again)."""
        try:
            done = self._store.maintain()
        except Exception as exc:  # logged loudly; ingestion goes on
            _log.error("lake maintenance failed", extra={"fields": {"error": str(exc)}})
            return
        _log.info("lake maintained", extra={"fields": {"result": str(done)}})

    def refresh_map(self) -> None:
        """Process new spans into conversations and the failure map (logged, never raised)."""
        try:
            result = self.process_now()
        except Exception as exc:  # logged loudly, retried at the next tick
            self.map_error = str(exc)
            _log.error("processing failed", extra={"fields": {"error": str(exc)}})
            return
        _log.info("processed", extra={"fields": {
            "conversations_rebuilt": result.conversations_rebuilt,
            "seconds": round(result.seconds, 3)}})

    def start_generation(self, budget: str | None, trigger: str = "api") -> GenerationJob:
        """Queue one generation run now; raises :class:`GenerationBusy` while one runs."""
        if self._generating.locked():
            raise GenerationBusy("a generation run is under way in this service; wait for "
                                 "it (GET /api/v1/runs) and start another afterwards")
        job = self._new_job(budget, trigger)
        # on the scheduler's threads, so that shutdown waits for it like a scheduled run
        self._scheduler.add_job(self._generate, args=[job.job_id], id=f"run-{job.job_id}",
                                name="now")
        return job

    def stop_generation(self, job_id: str) -> GenerationJob | None:
        """Ask a generation job to stop: a queued one never starts, a running one stops
        starting rollouts, lets those in flight finish (cancelled only if still running
        :data:`~generator.execute.STOP_GRACE_S` seconds later) and is stored as
        interrupted (the next run with the same options resumes it). None: no such
        job."""
        with self._jobs_lock:
            job = self._jobs.get(job_id)
            if job is None or job.state not in ("queued", "running"):
                return job
            self._stop_requested.add(job_id)  # seen by a thread about to start it
            stop = self._stops.get(job_id)
            if stop is not None:
                stop.set()  # seen before each rollout starts
            job = (replace(job, state="stopped", ended_unix_nano=time.time_ns())
                   if job.state == "queued" else replace(job, state="stopping"))
            self._jobs[job_id] = job
        if job.state == "stopped":
            with contextlib.suppress(JobLookupError):  # already picked up: it sees the flag
                self._scheduler.remove_job(f"run-{job_id}")
        _log.info("generation run stop requested", extra={"fields": {"job_id": job_id}})
        return job

    def exports(self) -> list[ExportJob]:
        """Exports written by this process, newest first."""
        with self._jobs_lock:
            return sorted(self._exports.values(), key=lambda e: e.started_unix_nano or 1 << 62,
                          reverse=True)

    def export_job(self, export_id: str) -> ExportJob | None:
        """One export of this process."""
        with self._jobs_lock:
            return self._exports.get(export_id)

    def start_export(self, format_name: str, out: Path, options: Any) -> ExportJob:
        """Queue an export of the stored split in ``format_name`` into ``out`` (on the
        scheduler's threads, beside generation runs)."""
        job = ExportJob(uuid.uuid4().hex[:12], format_name, str(out), "queued", None, None,
                        0, None)
        self._update_export(job)
        self._scheduler.add_job(self._export, args=[job.export_id, options],
                                id=f"export-{job.export_id}", name="now")
        return job

    def _update_export(self, job: ExportJob) -> None:
        with self._jobs_lock:
            self._exports[job.export_id] = job
            if len(self._exports) > _KEPT_JOBS:
                oldest = min(self._exports.values(),
                             key=lambda e: e.started_unix_nano or 1 << 62)
                del self._exports[oldest.export_id]

    def _export(self, export_id: str, options: Any) -> None:
        from generator.exports import export

        job = self.export_job(export_id)
        assert job is not None
        job = replace(job, state="running", started_unix_nano=time.time_ns())
        self._update_export(job)
        try:
            cursor = self._store.cursor()
            try:
                card = export(cursor, job.format, Path(job.out), options)
            finally:
                cursor.close()
        except Exception as exc:  # recorded; the service goes on
            self._update_export(replace(job, state="failed", error=str(exc) or
                                        type(exc).__name__, ended_unix_nano=time.time_ns()))
            _log.error("export failed", extra={"fields": {"export_id": export_id,
                                                          "error": str(exc)}})
            return
        self._update_export(replace(job, state="finished", card=card,
                                    ended_unix_nano=time.time_ns()))
        _log.info("export finished", extra={"fields": {"export_id": export_id,
                                                       "format": job.format}})

    def _scheduled_generation(self) -> None:
        job = self._new_job(None, "schedule")
        self._generate(job.job_id)

    def _new_job(self, budget: str | None, trigger: str) -> GenerationJob:
        job = GenerationJob(uuid.uuid4().hex[:12], trigger,
                            budget or self._settings.generate_budget or self._settings.budget,
                            "queued", None, None, 0, None)
        self._update(job)
        return job

    def _update(self, job: GenerationJob) -> None:
        with self._jobs_lock:
            self._jobs[job.job_id] = job
            if len(self._jobs) > _KEPT_JOBS:  # the store keeps every run; this is a window
                oldest = min(self._jobs.values(), key=lambda j: j.started_unix_nano or 1 << 62)
                del self._jobs[oldest.job_id]
                self._stop_requested.discard(oldest.job_id)

    def _generate(self, job_id: str) -> None:
        job = self.job(job_id)
        assert job is not None
        if job_id in self._stop_requested:  # stopped while queued
            return
        if not self._generating.acquire(blocking=False):
            self._update(replace(job, state="failed", error="another generation run was "
                                 "under way", ended_unix_nano=time.time_ns()))
            return
        try:
            self._run(job)
        finally:
            self._generating.release()

    def _run(self, job: GenerationJob) -> None:
        started = time.time_ns()
        stop = threading.Event()
        with self._jobs_lock:
            if job.job_id in self._stop_requested:  # stopped just before it started
                return
            job = replace(job, state="running", started_unix_nano=started)
            self._jobs[job.job_id] = job
            self._stops[job.job_id] = stop
        try:
            self._run_until_stopped(job, stop, started)
        finally:
            with self._jobs_lock:
                self._stops.pop(job.job_id, None)

    def _run_until_stopped(self, job: GenerationJob, stop: threading.Event,
                           started: int) -> None:
        from generator.commands import run_config
        from generator.run import run_generation
        from processor.run import ProcessOptions, process

        settings = self._settings.model_copy(update={"budget": job.budget})
        _log.info("generation run starting", extra={"fields": {
            "job_id": job.job_id, "trigger": job.trigger, "budget": job.budget}})
        try:
            config = run_config(settings)
            with self._processing:
                process(self._store, ProcessOptions.from_settings(settings), workers=1,
                        credentials=self._credentials)
            if stop.is_set():  # stopped while it processed: no run was started
                self._update(replace(self.job(job.job_id) or job, state="stopped",
                                     error="stopped through the API before its run was "
                                           "planned", ended_unix_nano=time.time_ns()))
                return
            record = asyncio.run(run_generation(
                self._store, config, self._credentials, progress=False, stop=stop,
                on_progress=lambda run_id, finished: self._progress(job.job_id, run_id,
                                                                    finished)))
        except Exception as exc:  # recorded with its error; the service keeps ingesting
            self._failed(self.job(job.job_id) or job, settings, started,
                         str(exc) or type(exc).__name__)
            return
        stopped = record.stop_reason == "interrupted"
        self._update(replace(self.job(job.job_id) or job,
                             state="stopped" if stopped else "finished",
                             run_id=record.run_id, ended_unix_nano=time.time_ns()))
        _log.info("generation run finished", extra={"fields": {
            "job_id": job.job_id, "run_id": record.run_id,
            "stop_reason": record.stop_reason}})

    def _progress(self, job_id: str, run_id: str, finished: int) -> None:
        """What the run reports: its id, and how many rollouts it has finished."""
        with self._jobs_lock:
            job = self._jobs.get(job_id)
            if job is not None:
                self._jobs[job_id] = replace(job, run_id=run_id, finished=finished)

    def _failed(self, job: GenerationJob, settings: Settings, started: int,
                error: str) -> None:
        try:
            run_id: str | None = record_failure(self._store, settings, job.budget, started,
                                                error, job.run_id)
        except Exception as store_exc:
            _log.error("could not record a failed run", extra={"fields": {
                "error": str(store_exc)}})
            run_id = job.run_id
        self._update(replace(job, state="failed", run_id=run_id, error=error,
                             ended_unix_nano=time.time_ns()))
        _log.error("generation run failed", extra={"fields": {
            "job_id": job.job_id, "run_id": run_id, "error": error}})
