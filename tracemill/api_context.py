"""What the admin API's routes share: the prefix, the documented error answers, and the
open store, settings and jobs of the service (:class:`ApiContext`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Annotated, Any

import duckdb
from fastapi import Query

from generator.schedule import GenerationJob, ServiceJobs
from tracemill.api_models import ErrorBody, GenerationJobOut
from tracemill.config import Settings
from tracemill.redact import Redactor
from tracemill.store import Store

__all__ = ["PREFIX", "ApiContext", "Since", "error_responses"]

PREFIX = "/api/v1"

Since = Annotated[str | None, Query(
    min_length=1, description="Compare the latest model version with this one instead of "
    "the version before it (as `map --since`); 404 when it is not a stored version or is "
    "the latest.")]
"""The ``since`` parameter of the map's routes."""

_WORDS = {400: "Unreadable or refused request", 401: "Missing or wrong admin token",
          403: "Not allowed here", 404: "No such item", 405: "Method not allowed",
          409: "A generation run is under way, an export is writing into the folder, "
               "or the target is a file",
          500: "Processing failed"}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of these error codes (all answered as :class:`ErrorBody`)."""
    return {code: {"model": ErrorBody, "description": _WORDS[code]} for code in codes}


@dataclass(frozen=True)
class ApiContext:
    """The service the routes answer for."""

    settings: Settings
    store: Store
    jobs: ServiceJobs
    redact: Redactor

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of the store for one request, closed after it."""
        opened = self.store.cursor()
        try:
            yield opened
        finally:
            opened.close()

    def job_out(self, job: GenerationJob) -> GenerationJobOut:
        """A generation job with the rollouts its run has stored."""
        from generator.rollout_store import stored_progress

        rollouts = 0
        if job.run_id is not None:  # as the run reported it (never guessed from times)
            with self.cursor() as c:
                rollouts = len(stored_progress(c, job.run_id).indices)
        return GenerationJobOut(**asdict(job), rollouts=rollouts)
