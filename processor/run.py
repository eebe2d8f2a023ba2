"""Incremental processing: new spans, log records and labels → conversations → failure map.

:func:`process` finds the conversations touched since the last run (watermarks on the
collector's monotonic ``ingest_seq`` and on label creation times), rebuilds exactly those
(:mod:`processor.rebuild`: in chunks, so memory stays bounded, in worker processes when
there are many), then recomputes the failure map (its situations, their members, and the
cells behind them: :mod:`processor.failure_map`) and the tool catalog from the
conversations table (cheap: a few GROUP BYs and a search over grouped counts). Everything
is one transaction.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import orjson

from processor._history_cues import cues_digest
from processor.failure_map import Cell, Periods, compute_map, store_map
from processor.options import ProcessOptions
from processor.rebuild import CHUNK, rebuild
from processor.situations import Situation
from processor.stance_learned import reader_digest
from processor.stance_model import StanceModelRun, apply_stance_model
from tracemill.store import Store, load_sql

__all__ = ["ProcessOptions", "ProcessResult", "process"]

log = logging.getLogger("tracemill.processor")

CATALOG_REFRESH = 0.05
"""The tool catalog (schemas, exemplars) is rebuilt when at least this share of the
conversations was rebuilt (and whenever it is empty): it rescans every step, and a few
new conversations barely change it."""


@dataclass(frozen=True)
class ProcessResult:
    """What one run of :func:`process` did."""

    conversations_rebuilt: int
    """Conversations built or rebuilt."""
    spans_read: int
    """Spans read to do so."""
    log_records_read: int
    """Log records read."""
    seconds: float
    """Wall time."""
    periods: Periods
    """What the failure map compares."""
    situations: tuple[Situation, ...]
    """What the failure map reports (stored in ``situations`` and ``situation_members``)."""
    cells: tuple[Cell, ...]
    """The cells behind them (stored in ``failure_map``)."""
    stance_model: StanceModelRun | None = None
    """What the model-based stance pass did (None: ``stance_model`` is off); its
    ``degraded`` says whether some conversations kept the pattern stance."""


class _Phases:
    """Wall time of each phase of a run, for the debug log."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[f"{name}_s"] = round(now - self._last, 3)
        self._last = now


def process(store: Store, options: ProcessOptions | None = None,
            workers: int | None = None, chunk_size: int = CHUNK,
            credentials: Mapping[str, str] | None = None) -> ProcessResult:
    """Bring conversations, the failure map and the tool catalog up to date.

    ``workers`` processes build conversations in parallel (default: the CPU count, at
    most 4) when more than one chunk of ``chunk_size`` conversations has to be rebuilt.
    ``credentials``: model keys and base URLs by variable name, for ``stance_model``
    (built by the command line; see :mod:`processor.stance_model`).
    """
    workers = workers if workers is not None else min(4, os.cpu_count() or 1)
    options = options or ProcessOptions()
    started = time.perf_counter()
    now = time.time_ns()
    rebuilt = spans_read = logs_read = 0
    with store.transaction() as cursor:
        row = cursor.execute(
            "SELECT spans_watermark, logs_watermark, labels_watermark, options "
            "FROM processor_state").fetchone()
        assert row is not None
        fingerprint = _fingerprint(options)
        state = (0, 0, 0) if row[3] != fingerprint else tuple(row[:3])
        marks = cursor.execute(load_sql("processor", "watermarks.sql")).fetchone()
        assert marks is not None
        phases = _Phases()
        if tuple(marks) != state:
            cursor.execute(load_sql("processor", "trace_keys.sql"))
            cursor.execute(load_sql("processor", "affected.sql"), list(state))
            phases.mark("affected")
            rebuilt, spans_read, logs_read = rebuild(cursor, options, now, workers, chunk_size)
            phases.mark("rebuild")
            cursor.execute(load_sql("processor", "prune_conversations.sql"))
            cursor.execute("UPDATE processor_state SET spans_watermark = ?, "
                           "logs_watermark = ?, labels_watermark = ?, options = ?",
                           [*marks, fingerprint])
            stored = cursor.execute("SELECT count(*) FROM conversations").fetchone()
            empty = cursor.execute("SELECT count(*) = 0 FROM tool_schemas").fetchone()
            if (empty and empty[0]) or rebuilt >= CATALOG_REFRESH * int(stored[0] if stored else 0):
                cursor.execute(load_sql("processor", "tool_steps.sql"))
                cursor.execute(load_sql("processor", "tool_schemas.sql"), [now])
                cursor.execute(load_sql("processor", "tool_definitions.sql"), [now])
                cursor.execute(load_sql("processor", "tool_exemplars.sql"))
                phases.mark("tool_catalog")
        stance = None
        if options.stance_model is not None:
            stance = apply_stance_model(cursor, options.stance_model, credentials or {}, now)
            phases.mark("stance_model")
        computed = compute_map(cursor, options.exploration, min_support=options.min_support)
        store_map(cursor, computed)
        phases.mark("failure_map")
    log.debug("processed", extra={"fields": {"conversations": rebuilt, **phases.seconds}})
    return ProcessResult(rebuilt, spans_read, logs_read, time.perf_counter() - started,
                         computed.periods, computed.situations, computed.cells, stance)


_MAP_ONLY = ("exploration", "min_support")
"""Options that change the map but not the conversations: not part of the fingerprint."""


def _fingerprint(options: ProcessOptions) -> str:
    """What the stored conversations were built with (other values rebuild them all): the
    options, the stance reader's weights and the history axis's cues (a new version of
    either reads every ask again)."""
    built: dict[str, object] = {key: value for key, value in asdict(options).items()
                                if key not in _MAP_ONLY}
    built["stance_reader"] = reader_digest()
    built["history_cues"] = cues_digest()
    return orjson.dumps(built, option=orjson.OPT_SORT_KEYS).decode()
