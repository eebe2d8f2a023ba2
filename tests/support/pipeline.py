"""Store OTLP export requests the way the collector does, without its servers.

Tests and benchmarks that need a store full of spans push serialized export requests
through the collector's real pipeline (spool, decode, de-duplicate, insert) into a DuckDB
file; the servers add nothing to what is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from collector.metrics import Metrics
from collector.pipeline import Pipeline
from tracemill.config import Settings
from tracemill.store import open_store

Signal = Literal["traces", "logs"]


def store_signals(db: Path, requests: Iterable[tuple[Signal, bytes]], *,
                  source: str = "test") -> int:
    """Store ``(signal, request)`` pairs in order — serialized ``Export*ServiceRequest``s
    of traces or logs — into the DuckDB file ``db`` and close it; returns how many."""
    store = open_store(db)
    pipeline = Pipeline(Settings(db=db, decode_workers=0), store, Metrics())
    pipeline.start()
    count = 0
    try:
        for signal, request in requests:
            pipeline.intake.export_blocking(signal, request, source)
            count += 1
    finally:
        pipeline.close(drain_all=True)
        store.close()
    return count


def store_requests(db: Path, requests: Iterable[bytes], *, signal: Signal = "traces",
                   source: str = "test") -> int:
    """Store export requests of one ``signal`` (traces or logs); see :func:`store_signals`."""
    return store_signals(db, ((signal, request) for request in requests), source=source)


def processed_production_store(db: Path, *, seed: int,
                               conversations_per_version: int = 400) -> Path:
    """``db`` filled with the synthetic production stream of ``seed`` and processed into
    conversations and a failure map (``tracemill process``); returns ``db``."""
    from processor.run import ProcessOptions, process
    from tests.support.synthetic import production_stream

    stream = production_stream(seed=seed, conversations_per_version=conversations_per_version)
    store_requests(db, stream.requests)
    store = open_store(db)
    try:
        process(store, ProcessOptions())
    finally:
        store.close()
    return db
