"""The pipeline behind every intake: spool, spool writer, decode workers, materializer.

Both ``tracemill serve`` (behind the receivers) and ``tracemill ingest`` run one. The
spool lives beside the store as ``<db>.spool/``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from collector import native
from collector.intake import Intake
from collector.materializer import DecodePool, Materializer
from collector.metrics import Metrics
from collector.spool import Spool
from collector.writer import SpoolWriter
from tracemill.config import Settings
from tracemill.store import Store, load_sql

log = logging.getLogger("tracemill.collector.pipeline")


def spool_folder(db: Path) -> Path:
    """Where the spool of the store at ``db`` lives."""
    return db.with_name(db.name + ".spool")


class Pipeline:
    """Everything between a received request and its rows."""

    def __init__(self, settings: Settings, store: Store, metrics: Metrics) -> None:
        self.metrics = metrics
        if not store.is_lake and settings.db_threads:  # see the statement's comment;
            store.query(load_sql("collector", "db_threads.sql"), [settings.db_threads])
        self.spool = Spool(spool_folder(store.path))
        self.decoders = DecodePool(settings.decode_workers)
        self.materializer = Materializer(store, self.spool, metrics, self.decoders,
                                         max_commit_items=settings.max_commit_items)
        self.writer = SpoolWriter(
            self.spool, metrics, max_queue_bytes=settings.max_queue_bytes,
            max_backlog_bytes=settings.max_backlog_bytes,
            retry_after=settings.retry_after_seconds, backlog=self.materializer.backlog)
        metrics.backlog = self.materializer.backlog
        self.intake = Intake(self.writer, metrics)
        self._drain_seconds = settings.shutdown_drain_seconds

    def start(self) -> None:
        """Start the decode workers and both threads."""
        if not native.AVAILABLE:
            # a slower collector, not a different one: the rows are the same
            log.warning(native.MISSING_HINT)
        self.decoders.warm_up()
        self.writer.start()
        self.materializer.start()

    @property
    def ready(self) -> bool:
        """Whether requests are accepted and stored (not while the spool or store fails)."""
        return (self.writer.running and self.materializer.alive
                and self.writer.failing is None and self.materializer.failing is None)

    def dead_threads(self) -> list[str]:
        """Names of worker threads that died (for /healthz; empty when all is well)."""
        dead = []
        if self.writer.dead:
            dead.append("tracemill-spool")
        if self.materializer.dead:
            dead.append("tracemill-materializer")
        return dead

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until everything acknowledged so far is stored as rows."""
        return self.materializer.flush(timeout)

    def close(self, *, drain_all: bool = False) -> None:
        """Stop accepting, make queued requests durable, store the spool, stop workers.

        Storing the spool takes at most ``shutdown_drain_seconds`` unless ``drain_all``.
        """
        self.writer.close()
        self.materializer.close(None if drain_all else self._drain_seconds)
        self.decoders.shutdown()
        self.spool.close()
