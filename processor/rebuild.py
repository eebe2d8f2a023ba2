"""Rebuilding the affected conversations, chunk by chunk.

The affected conversations (``affected.sql``) are numbered in the order of their first
stored span and cut into chunks (``chunk_plan.sql``, ``chunk_records.sql``). Each chunk's
spans, log records and labels are fetched as Arrow tables, reading only the range of rows
its spans lie in; :func:`processor.rows.build_chunk` turns them into conversation rows,
in worker processes when there is more than one chunk (while the next chunk is fetched
and the last one written), and the rows are inserted. Every affected conversation's old
row is deleted first, and written again if the conversation still has spans. Last, the
history axis is placed across sessions (``session_history.sql``): a SQL post-pass over
every conversation with a session id, so a late-arriving earlier conversation updates the
later ones of its session.

The main process only runs SQL and moves Arrow buffers; everything done row by row in
Python happens in :func:`~processor.rows.build_chunk`. Reading a chunk by row-id range and
handing Arrow tables (not Python tuples) to the workers cut the main process's CPU time
of a full build of 1,000,000 spans from ~50 s to ~13 s (bench/README.md).
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from typing import NamedTuple

import duckdb
import pyarrow as pa

from processor.options import ProcessOptions
from processor.rows import ChunkInput, build_chunk
from tracemill.store import load_sql
from tracemill.workers import worker_pool

__all__ = ["CHUNK", "Rebuilt", "rebuild"]

CHUNK = 5_000
"""Conversations rebuilt per chunk."""


class Rebuilt(NamedTuple):
    """What :func:`rebuild` read and wrote."""

    conversations: int
    """Conversation rows written."""
    spans: int
    """Spans read."""
    log_records: int
    """Log records read."""


class _Chunk(NamedTuple):
    """One chunk of the plan (a row of chunk_ranges.sql)."""

    number: int
    first_span: int
    last_span: int
    first_log: int | None
    last_log: int | None
    labeled: bool


def _plan(cursor: duckdb.DuckDBPyConnection, chunk_size: int) -> list[_Chunk]:
    cursor.execute(load_sql("processor", "chunk_plan.sql"), [chunk_size])
    cursor.execute(load_sql("processor", "chunk_records.sql"))
    return [_Chunk(*row) for row in
            cursor.execute(load_sql("processor", "chunk_ranges.sql")).fetchall()]


def _arrow(cursor: duckdb.DuckDBPyConnection, name: str, chunk: int, first: int,
           last: int) -> pa.Table:
    params = {"chunk": chunk, "first": first, "last": last}
    return cursor.sql(load_sql("processor", name), params=params).to_arrow_table()


def _fetch(cursor: duckdb.DuckDBPyConnection, chunk: _Chunk) -> ChunkInput:
    logs = None
    if chunk.first_log is not None and chunk.last_log is not None:
        logs = _arrow(cursor, "chunk_logs.sql", chunk.number, chunk.first_log, chunk.last_log)
    labels = None
    if chunk.labeled:
        labels = cursor.sql(load_sql("processor", "chunk_labels.sql"),
                            params={"chunk": chunk.number}).to_arrow_table()
    spans = _arrow(cursor, "chunk_spans.sql", chunk.number, chunk.first_span, chunk.last_span)
    return ChunkInput(spans, logs, labels)


def _write(cursor: duckdb.DuckDBPyConnection, rows: pa.Table | None) -> int:
    if rows is None:
        return 0
    cursor.register("new_conversations", rows)
    try:
        cursor.execute("INSERT INTO conversations BY NAME SELECT * FROM new_conversations")
    finally:
        cursor.unregister("new_conversations")
    return int(rows.num_rows)


def rebuild(cursor: duckdb.DuckDBPyConnection, options: ProcessOptions, now: int,
            workers: int, chunk_size: int = CHUNK) -> Rebuilt:
    """Replace the rows of the conversations in the temp table ``affected``.

    Chunks are built by ``workers`` worker processes when there is more than one chunk
    and more than one worker, else in this process. Then the history axis of every
    conversation is recomputed across its session (``session_history.sql``).
    """
    rebuilt = _rebuild_chunks(cursor, options, now, workers, chunk_size)
    cursor.execute(load_sql("processor", "session_history.sql"))
    return rebuilt


def _rebuild_chunks(cursor: duckdb.DuckDBPyConnection, options: ProcessOptions, now: int,
                    workers: int, chunk_size: int) -> Rebuilt:
    chunks = _plan(cursor, chunk_size)
    cursor.execute("DELETE FROM conversations "
                   "WHERE conversation_id IN (SELECT conversation_id FROM affected)")
    written = spans = logs = 0
    if len(chunks) <= 1 or workers <= 1:
        for chunk in chunks:
            fetched = _fetch(cursor, chunk)
            spans += fetched.spans.num_rows
            logs += fetched.logs.num_rows if fetched.logs is not None else 0
            written += _write(cursor, build_chunk(fetched, options, now))
        return Rebuilt(written, spans, logs)
    with worker_pool(workers) as pool:
        pending: deque[Future[pa.Table | None]] = deque()
        for chunk in chunks:
            fetched = _fetch(cursor, chunk)
            spans += fetched.spans.num_rows
            logs += fetched.logs.num_rows if fetched.logs is not None else 0
            pending.append(pool.submit(build_chunk, fetched, options, now))
            del fetched
            while len(pending) > workers:  # bound memory: a few chunks in flight
                written += _write(cursor, pending.popleft().result())
        while pending:
            written += _write(cursor, pending.popleft().result())
    return Rebuilt(written, spans, logs)
