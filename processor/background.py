"""Processing inside a long-running process: every N seconds, beside the collector.

``tracemill serve --process-every N`` keeps conversations and the failure map current
while the collector holds the store (DuckDB allows one process per file), and serves the
map at ``GET /map``. The processor writes only its own tables, so its transactions do not
conflict with the collector's.
"""

from __future__ import annotations

import logging
import threading

from processor.run import ProcessOptions, process
from tracemill.store import Store

log = logging.getLogger("tracemill.processor")


class PeriodicProcessor:
    """Runs :func:`processor.run.process` every ``interval`` seconds on a thread."""

    def __init__(self, store: Store, options: ProcessOptions, interval: float) -> None:
        self._store = store
        self._options = options
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tracemill-processor",
                                        daemon=True)
        self.last_error: str | None = None
        """The last run's error, None after a run that succeeded."""

    def start(self) -> None:
        """Start the thread; the first run happens after one interval."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after the run under way, if any."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                result = process(self._store, self._options, workers=1)
            except Exception as exc:  # a failed run is logged loudly and retried next time
                self.last_error = str(exc)
                log.error("processing failed", extra={"fields": {"error": str(exc)}})
                continue
            self.last_error = None
            log.info("processed", extra={"fields": {
                "conversations_rebuilt": result.conversations_rebuilt,
                "seconds": round(result.seconds, 3), "cells": len(result.cells)}})
