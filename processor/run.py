"""Incremental processing: new spans, log records and labels → conversations → failure map.

:func:`process` finds the conversations touched since the last run (watermarks on the
collector's monotonic ``ingest_seq`` and on label creation times), rebuilds exactly those,
in chunks so memory stays bounded, then recomputes the failure map and the tool catalog
from the conversations table (cheap: a few GROUP BYs). Everything is one transaction.
"""

from __future__ import annotations

import logging
import os
import time
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import asdict, dataclass, fields
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from processor.assemble import VERSION_SOURCES, assemble
from processor.axes import Situation, situate
from processor.failure_map import Cell, Periods, build_map, store_map
from processor.outcomes import Evaluation, Label, decide, unread_scores
from processor.records import LogRow, SpanRow, Step
from tracemill.config import Settings
from tracemill.store import Store, load_sql
from tracemill.workers import worker_pool

log = logging.getLogger("tracemill.processor")

CHUNK = 5_000
"""Conversations rebuilt per round trip."""
CATALOG_REFRESH = 0.05
"""The tool catalog (schemas, exemplars) is rebuilt when at least this share of the
conversations was rebuilt (and whenever it is empty): it rescans every step, and a few
new conversations barely change it."""


@dataclass(frozen=True)
class ProcessOptions:
    """How conversations are graded and versioned, and how much generation explores."""

    reward_keys: tuple[str, ...] = ("reward", "tracemill.reward")
    """Span attributes read as rewards."""
    threshold: float = 0.5
    """A reward or score at or above it passes."""
    version_sources: tuple[str, ...] = VERSION_SOURCES
    """Where the model version comes from, in order of precedence."""
    exploration: float = 0.2
    """Share of a generation budget kept for cells that do not fail."""

    @classmethod
    def from_settings(cls, settings: Settings) -> ProcessOptions:
        """The options a command's settings ask for."""
        return cls(reward_keys=settings.reward_keys, threshold=settings.pass_threshold,
                   version_sources=settings.model_version_sources,
                   exploration=settings.exploration_share)


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
    cells: tuple[Cell, ...]
    """The failure map."""


def _json(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str) else value


def _span_rows(rows: Sequence[tuple[Any, ...]]) -> Iterator[tuple[str, SpanRow]]:
    for row in rows:
        (conversation_id, trace_id, span_id, parent, name, operation, start, end, status,
         message, error_type, attributes, events, tokens_in, tokens_out, agent, agent_version,
         service_version, request_model, response_model, tool_name, tool_call_id) = row
        yield conversation_id, SpanRow(
            trace_id=trace_id, span_id=span_id, parent_span_id=parent, name=name,
            operation=operation, start_unix_nano=start, end_unix_nano=end,
            status_code=status, status_message=message, error_type=error_type,
            attributes=_json(attributes), events=tuple(_json(events)),
            input_tokens=tokens_in, output_tokens=tokens_out, agent_name=agent,
            agent_version=agent_version, service_version=service_version,
            request_model=request_model, response_model=response_model,
            tool_name=tool_name, tool_call_id=tool_call_id)


@dataclass(frozen=True)
class ChunkInput:
    """The raw rows of one chunk of conversations, as fetched (picklable for workers)."""

    spans: list[tuple[Any, ...]]
    """chunk_spans.sql rows."""
    logs: list[tuple[Any, ...]]
    """chunk_logs.sql rows."""
    labels: list[tuple[Any, ...]]
    """chunk_labels.sql rows."""


def _fetch_chunk(cursor: duckdb.DuckDBPyConnection) -> ChunkInput:
    return ChunkInput(
        cursor.execute(load_sql("processor", "chunk_spans.sql")).fetchall(),
        cursor.execute(load_sql("processor", "chunk_logs.sql")).fetchall(),
        cursor.execute(load_sql("processor", "chunk_labels.sql")).fetchall())


def build_chunk(chunk: ChunkInput, options: ProcessOptions, now: int) -> list[dict[str, Any]]:
    """Conversation rows for one chunk (pure: runs in a worker process)."""
    spans: dict[str, list[SpanRow]] = defaultdict(list)
    for conversation_id, span in _span_rows(chunk.spans):
        spans[conversation_id].append(span)
    logs: dict[str, list[LogRow]] = defaultdict(list)
    for trace_id, span_id, at, event_name, body, attributes in chunk.logs:
        logs[span_id].append(LogRow(trace_id, span_id, at, event_name,
                                    _json(body) if body is not None else None,
                                    _json(attributes)))
    labels: dict[str, list[Label]] = defaultdict(list)
    for conversation_id, passed, reward, kind, by, _ in chunk.labels:
        labels[conversation_id].append(Label(passed, reward, kind, by))
    return [_conversation_row(conversation_id, members, logs, labels[conversation_id],
                              options, now)
            for conversation_id, members in spans.items()]


def _write_chunk(cursor: duckdb.DuckDBPyConnection, records: list[dict[str, Any]]) -> None:
    cursor.execute("CREATE OR REPLACE TEMP TABLE written AS SELECT unnest(?::VARCHAR[]) "
                   "AS conversation_id", [[record["conversation_id"] for record in records]])
    if not records:
        return
    cursor.register("new_conversations", pa.Table.from_pylist(records))
    try:
        cursor.execute(load_sql("processor", "replace_conversations.sql"))
    finally:
        cursor.unregister("new_conversations")


_STEP_FIELDS = tuple(field.name for field in fields(Step))
_EVALUATION_FIELDS = tuple(field.name for field in fields(Evaluation))
_SITUATION_FIELDS = tuple(field.name for field in fields(Situation))


def _fields(record: object, names: tuple[str, ...]) -> dict[str, Any]:
    """A flat record's fields as a dict (dataclasses.asdict deep-copies; these are flat)."""
    return {name: getattr(record, name) for name in names}


def _conversation_row(conversation_id: str, spans: list[SpanRow],
                      logs: dict[str, list[LogRow]], labels: list[Label],
                      options: ProcessOptions, now: int) -> dict[str, Any]:
    mine = {span.span_id: logs.get(span.span_id, []) for span in spans}
    assembled = assemble(conversation_id, spans, mine, options.version_sources)
    conversation = assembled.conversation
    ordered = sorted(spans, key=lambda span: (span.parent_span_id is not None,
                                              span.start_unix_nano))
    outcome = decide(ordered, [record for records in mine.values() for record in records],
                     labels, reward_keys=options.reward_keys, threshold=options.threshold)
    policy = outcome.failure_class or next(
        (e.name for e in outcome.evaluations if e.name), None) or "unspecified"
    situation = situate(first_ask=conversation.first_ask, user_turns=conversation.user_turns,
                        steps=conversation.steps, policy_rule=policy)
    return {
        "conversation_id": conversation_id,
        "trace_ids": list(conversation.trace_ids),
        "session_id": assembled.session_id,
        "user_id": assembled.user_id,
        "first_ask": conversation.first_ask,
        "user_turns": list(conversation.user_turns),
        "assistant_turns": list(conversation.assistant_turns),
        "final_reply": conversation.final_reply,
        "steps": orjson.dumps([_fields(step, _STEP_FIELDS)
                               for step in conversation.steps]).decode(),
        "errors": list(conversation.errors),
        "input_tokens": conversation.input_tokens,
        "output_tokens": conversation.output_tokens,
        "agent_name": conversation.agent_name,
        "model_version": conversation.model_version,
        "model_version_source": conversation.model_version_source,
        "content_missing": conversation.content_missing,
        "start_unix_nano": conversation.start_unix_nano,
        "end_unix_nano": conversation.end_unix_nano,
        "outcome": outcome.outcome,
        "reward": outcome.reward,
        "outcome_source": outcome.source,
        "labeled_by": outcome.labeled_by,
        "evaluations": orjson.dumps([_fields(e, _EVALUATION_FIELDS)
                                     for e in outcome.evaluations]).decode(),
        "failure_class": outcome.failure_class,
        **_fields(situation, _SITUATION_FIELDS),
        "score_attributes": unread_scores(spans, options.reward_keys),
        "processed_unix_nano": now,
    }


class _Phases:
    """Wall time of each phase of a run, for the debug log."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[f"{name}_s"] = round(now - self._last, 3)
        self._last = now


def _chunks(cursor: duckdb.DuckDBPyConnection, count: int) -> Iterator[ChunkInput]:
    for offset in range(0, count, CHUNK):
        cursor.execute(
            "CREATE OR REPLACE TEMP TABLE chunk AS SELECT conversation_id FROM affected "
            "ORDER BY conversation_id LIMIT ? OFFSET ?", [CHUNK, offset])
        yield _fetch_chunk(cursor)


def _rebuild(cursor: duckdb.DuckDBPyConnection, count: int, options: ProcessOptions,
             now: int, workers: int) -> tuple[int, int, int]:
    """Rebuild the affected conversations; chunks are built by worker processes when
    there is more than one chunk, while the next chunk is fetched and the last written."""
    rebuilt = spans_read = logs_read = 0
    if count <= CHUNK or workers <= 1:
        for chunk in _chunks(cursor, count):
            records = build_chunk(chunk, options, now)
            _write_chunk(cursor, records)
            rebuilt += len(records)
            spans_read += len(chunk.spans)
            logs_read += len(chunk.logs)
        return rebuilt, spans_read, logs_read
    with worker_pool(workers) as pool:
        pending: deque[Future[list[dict[str, Any]]]] = deque()
        for chunk in _chunks(cursor, count):
            spans_read += len(chunk.spans)
            logs_read += len(chunk.logs)
            pending.append(pool.submit(build_chunk, chunk, options, now))
            while len(pending) > workers:  # bound memory: a few chunks in flight
                records = pending.popleft().result()
                _write_chunk(cursor, records)
                rebuilt += len(records)
        while pending:
            records = pending.popleft().result()
            _write_chunk(cursor, records)
            rebuilt += len(records)
    return rebuilt, spans_read, logs_read


def process(store: Store, options: ProcessOptions | None = None,
            workers: int | None = None) -> ProcessResult:
    """Bring conversations, the failure map and the tool catalog up to date.

    ``workers`` processes build conversations in parallel (default: the CPU count, at
    most 4) when more than one chunk has to be rebuilt.
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
        fingerprint = orjson.dumps(asdict(options), option=orjson.OPT_SORT_KEYS).decode()
        state = (0, 0, 0) if row[3] != fingerprint else tuple(row[:3])
        marks = cursor.execute(load_sql("processor", "watermarks.sql")).fetchone()
        assert marks is not None
        phases = _Phases()
        if tuple(marks) != state:
            cursor.execute(load_sql("processor", "trace_keys.sql"))
            cursor.execute(load_sql("processor", "affected.sql"), list(state))
            total = cursor.execute("SELECT count(*) FROM affected").fetchone()
            count = int(total[0]) if total else 0
            phases.mark("affected")
            rebuilt, spans_read, logs_read = _rebuild(cursor, count, options, now, workers)
            phases.mark("rebuild")
            cursor.execute(load_sql("processor", "prune_conversations.sql"))
            cursor.execute("UPDATE processor_state SET spans_watermark = ?, "
                           "logs_watermark = ?, labels_watermark = ?, options = ?",
                           [*marks, fingerprint])
            stored = cursor.execute("SELECT count(*) FROM conversations").fetchone()
            empty = cursor.execute("SELECT count(*) = 0 FROM tool_schemas").fetchone()
            if (empty and empty[0]) or rebuilt >= CATALOG_REFRESH * int(stored[0] if stored else 0):
                cursor.execute(load_sql("processor", "tool_schemas.sql"), [now])
                cursor.execute(load_sql("processor", "tool_exemplars.sql"))
                phases.mark("tool_catalog")
        periods, cells = build_map(cursor, options.exploration)
        store_map(cursor, periods, cells)
        phases.mark("failure_map")
    log.debug("processed", extra={"fields": {"conversations": rebuilt, **phases.seconds}})
    return ProcessResult(rebuilt, spans_read, logs_read, time.perf_counter() - started,
                         periods, tuple(cells))
