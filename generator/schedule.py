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
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from tracemill.config import Settings, cron_trigger
from tracemill.errors import TracemillError
from tracemill.store import Store, load_sql

__all__ = ["GenerationBusy", "GenerationJob", "ScheduledJob", "ServiceJobs", "record_failure"]

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
    """The service's id for the request (the run id is known once it has planned)."""
    trigger: str
    """schedule or api."""
    budget: str
    """The budget it was given."""
    state: str
    """queued, running, finished or failed."""
    run_id: str | None
    """The generation run (``tracemill runs RUN_ID``), once recorded."""
    error: str | None
    """Why it failed."""
    started_unix_nano: int
    """When the job started (0 while queued)."""
    ended_unix_nano: int | None
    """When it ended."""


def record_failure(store: Store, settings: Settings, budget: str, started_unix_nano: int,
                   error: str) -> str:
    """Record a failed run: mark the runs it started failed, or insert one failed run
    when it failed before planning. Returns the run id."""
    now = time.time_ns()
    record = json.dumps({"stop_reason": "error", "error": error})
    with store.transaction() as cursor:
        marked = cursor.execute(load_sql("generator", "fail_started_runs.sql"),
                                [record, now, started_unix_nano]).fetchall()
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
        self._scheduler = BackgroundScheduler(timezone="UTC", job_defaults={
            "coalesce": True, "max_instances": 1, "misfire_grace_time": 3600})
        self._processing = threading.Lock()
        self._generating = threading.Lock()
        self._jobs: dict[str, GenerationJob] = {}
        self._jobs_lock = threading.Lock()
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

    def start(self) -> None:
        """Start the scheduler thread."""
        self._scheduler.start()

    def shutdown(self) -> None:
        """Stop scheduling; waits for a job under way to finish."""
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

    def refresh_map(self) -> None:
        """Process new spans into conversations and the failure map (logged, never raised)."""
        from processor.run import ProcessOptions, process

        try:
            with self._processing:
                result = process(self._store, ProcessOptions.from_settings(self._settings),
                                 workers=1, credentials=self._credentials)
        except Exception as exc:  # logged loudly, retried at the next tick
            self.map_error = str(exc)
            _log.error("processing failed", extra={"fields": {"error": str(exc)}})
            return
        self.map_error = None
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

    def _generate(self, job_id: str) -> None:
        job = self.job(job_id)
        assert job is not None
        if not self._generating.acquire(blocking=False):
            self._update(replace(job, state="failed", error="another generation run was "
                                 "under way", ended_unix_nano=time.time_ns()))
            return
        try:
            self._run(job)
        finally:
            self._generating.release()

    def _run(self, job: GenerationJob) -> None:
        from generator.commands import run_config
        from generator.run import run_generation
        from processor.run import ProcessOptions, process

        started = time.time_ns()
        job = replace(job, state="running", started_unix_nano=started)
        self._update(job)
        settings = self._settings.model_copy(update={"budget": job.budget})
        _log.info("generation run starting", extra={"fields": {
            "job_id": job.job_id, "trigger": job.trigger, "budget": job.budget}})
        try:
            config = run_config(settings)
            with self._processing:
                process(self._store, ProcessOptions.from_settings(settings), workers=1,
                        credentials=self._credentials)
            record = asyncio.run(run_generation(self._store, config, self._credentials,
                                                progress=False))
        except Exception as exc:  # recorded with its error; the service keeps ingesting
            error = str(exc) or type(exc).__name__
            try:
                run_id: str | None = record_failure(self._store, settings, job.budget,
                                                    started, error)
            except Exception as store_exc:
                _log.error("could not record a failed run", extra={"fields": {
                    "error": str(store_exc)}})
                run_id = None
            self._update(replace(job, state="failed", run_id=run_id, error=error,
                                 ended_unix_nano=time.time_ns()))
            _log.error("generation run failed", extra={"fields": {
                "job_id": job.job_id, "run_id": run_id, "error": error}})
            return
        self._update(replace(job, state="finished", run_id=record.run_id,
                             ended_unix_nano=time.time_ns()))
        _log.info("generation run finished", extra={"fields": {
            "job_id": job.job_id, "run_id": record.run_id,
            "stop_reason": record.stop_reason}})
