"""Incremental processing: new spans, log records and labels → conversations → failure map.

:func:`process` finds the conversations touched since the last run (watermarks on the
collector's monotonic ``ingest_seq`` and on label creation times), rebuilds exactly those,
in chunks so memory stays bounded, then recomputes the failure map and the tool catalog
from the conversations table (cheap: a few GROUP BYs). Everything is one transaction.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from processor.assemble import VERSION_SOURCES, assemble
from processor.axes import situate
from processor.failure_map import Cell, Periods, build_map, store_map
from processor.outcomes import Label, decide, unread_scores
from processor.records import LogRow, SpanRow
from tracemill.store import Store, load_sql

CHUNK = 5_000
"""Conversations rebuilt per round trip."""


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


def _rebuild_chunk(cursor: duckdb.DuckDBPyConnection, options: ProcessOptions,
                   now: int) -> tuple[int, int, int]:
    spans: dict[str, list[SpanRow]] = defaultdict(list)
    span_rows = cursor.execute(load_sql("processor", "chunk_spans.sql")).fetchall()
    for conversation_id, span in _span_rows(span_rows):
        spans[conversation_id].append(span)
    logs: dict[str, list[LogRow]] = defaultdict(list)
    log_rows = cursor.execute(load_sql("processor", "chunk_logs.sql")).fetchall()
    for trace_id, span_id, at, event_name, body, attributes in log_rows:
        logs[span_id].append(LogRow(trace_id, span_id, at, event_name,
                                    _json(body) if body is not None else None,
                                    _json(attributes)))
    labels: dict[str, list[Label]] = defaultdict(list)
    for conversation_id, passed, reward, kind, by, _ in cursor.execute(
            load_sql("processor", "chunk_labels.sql")).fetchall():
        labels[conversation_id].append(Label(passed, reward, kind, by))
    records = [_conversation_row(conversation_id, members, logs, labels[conversation_id],
                                 options, now)
               for conversation_id, members in spans.items()]
    if records:
        table = pa.Table.from_pylist(records)
        cursor.register("new_conversations", table)
        try:
            cursor.execute(load_sql("processor", "replace_conversations.sql"))
        finally:
            cursor.unregister("new_conversations")
    return len(records), len(span_rows), len(log_rows)


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
        "steps": orjson.dumps([asdict(step) for step in conversation.steps]).decode(),
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
        "evaluations": orjson.dumps([asdict(e) for e in outcome.evaluations]).decode(),
        "failure_class": outcome.failure_class,
        **asdict(situation),
        "score_attributes": unread_scores(spans, options.reward_keys),
        "processed_unix_nano": now,
    }


def process(store: Store, options: ProcessOptions | None = None) -> ProcessResult:
    """Bring conversations, the failure map and the tool catalog up to date."""
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
        if tuple(marks) != state:
            cursor.execute(load_sql("processor", "trace_keys.sql"))
            cursor.execute(load_sql("processor", "affected.sql"), list(state))
            total = cursor.execute("SELECT count(*) FROM affected").fetchone()
            count = int(total[0]) if total else 0
            for offset in range(0, count, CHUNK):
                cursor.execute(
                    "CREATE OR REPLACE TEMP TABLE chunk AS SELECT conversation_id FROM affected "
                    "ORDER BY conversation_id LIMIT ? OFFSET ?", [CHUNK, offset])
                done, span_count, log_count = _rebuild_chunk(cursor, options, now)
                rebuilt += done
                spans_read += span_count
                logs_read += log_count
            cursor.execute(load_sql("processor", "prune_conversations.sql"))
            cursor.execute("UPDATE processor_state SET spans_watermark = ?, "
                           "logs_watermark = ?, labels_watermark = ?, options = ?",
                           [*marks, fingerprint])
            cursor.execute(load_sql("processor", "tool_schemas.sql"), [now])
            cursor.execute(load_sql("processor", "tool_exemplars.sql"))
        periods, cells = build_map(cursor, options.exploration)
        store_map(cursor, periods, cells)
    return ProcessResult(rebuilt, spans_read, logs_read, time.perf_counter() - started,
                         periods, tuple(cells))
