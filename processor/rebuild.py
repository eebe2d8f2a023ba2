"""Rebuilding the affected conversations, chunk by chunk.

The affected conversations (``affected.sql``) are numbered in the order of their first
stored span and cut into chunks (``chunk_plan.sql``, ``chunk_records.sql``). Each chunk's
spans, log records and labels are fetched as Arrow tables from the collector's published
views (``spans``, ``log_records``; never its tables, whose storage it may change), reading
only the commits (``ingest_seq``) and start times its spans lie in;
:func:`processor.rows.build_chunk` turns them into conversation rows,
in worker processes when there is more than one chunk (while the next chunk is fetched
and the last one written), and the rows are inserted. Every affected conversation's old
row is deleted first, and written again if the conversation still has spans. Last, the
history axis is placed across sessions (``session_history.sql``): a SQL post-pass over
every conversation with a session id, so a late-arriving earlier conversation updates the
later ones of its session.

The main process only runs SQL and moves Arrow buffers; everything done row by row in
Python happens in :func:`~processor.rows.build_chunk`. Reading a chunk by a narrow range and
handing Arrow tables (not Python tuples) to the workers cut the main process's CPU time
of a full build of 1,000,000 spans from ~50 s to ~13 s (bench/README.md).

Memory is bounded by the chunk: a few chunks are in flight, each chunk's rows are let go
as soon as they are inserted (:func:`_write`), and the workers do not load pandas
(:func:`~processor.rows.build_chunk_in_worker`). What DuckDB keeps of the uncommitted
rows counts against its own memory limit (and spills past it).
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from typing import NamedTuple

import duckdb
import pyarrow as pa

from processor.options import ProcessOptions
from processor.rows import ChunkInput, build_chunk, build_chunk_in_worker
from tracemill.store import load_sql
from tracemill.workers import worker_pool

__all__ = ["CHUNK", "Rebuilt", "rebuild"]

CHUNK = 2_500
"""Conversations rebuilt per chunk. Memory grows with it: a worker holds its chunk's
spans and rows, the main process the chunks in flight. At 5,000 the two workers peaked
~140 MB higher on 1,000,000 spans, for no measurable gain in time (bench/README.md)."""


class Rebuilt(NamedTuple):
    """What :func:`rebuild` read and wrote."""

    conversations: int
    """Conversation rows written."""
    spans: int
    """Spans read."""
    log_records: int
    """Log records read."""


class _Chunk(NamedTuple):
    """One chunk of the plan (a row of chunk_ranges.sql): where its rows lie."""

    number: int
    first_seq: int
    """First collector commit (ingest_seq) holding one of its spans."""
    last_seq: int
    first_start: int
    """Earliest start time of its spans."""
    last_start: int
    first_log_seq: int | None
    """First commit holding one of its log records (None: it has none)."""
    last_log_seq: int | None
    labeled: bool


def _plan(cursor: duckdb.DuckDBPyConnection, chunk_size: int) -> list[_Chunk]:
    cursor.execute(load_sql("processor", "chunk_plan.sql"), [chunk_size])
    cursor.execute(load_sql("processor", "chunk_records.sql"))
    return [_Chunk(*row) for row in
            cursor.execute(load_sql("processor", "chunk_ranges.sql")).fetchall()]


def _arrow(cursor: duckdb.DuckDBPyConnection, name: str,
           params: dict[str, int]) -> pa.Table:
    return cursor.sql(load_sql("processor", name), params=params).to_arrow_table()


def _fetch(cursor: duckdb.DuckDBPyConnection, chunk: _Chunk) -> ChunkInput:
    logs = None
    if chunk.first_log_seq is not None and chunk.last_log_seq is not None:
        logs = _arrow(cursor, "chunk_logs.sql",
                      {"chunk": chunk.number, "first_seq": chunk.first_log_seq,
                       "last_seq": chunk.last_log_seq})
    labels = None
    if chunk.labeled:
        labels = _arrow(cursor, "chunk_labels.sql", {"chunk": chunk.number})
    spans = _arrow(cursor, "chunk_spans.sql",
                   {"chunk": chunk.number, "first_seq": chunk.first_seq,
                    "last_seq": chunk.last_seq, "first_start": chunk.first_start,
                    "last_start": chunk.last_start})
    return ChunkInput(spans, logs, labels)


def _write(cursor: duckdb.DuckDBPyConnection, rows: pa.Table | None) -> int:
    if rows is None:
        return 0
    # Read through DuckDB's replacement scan (the local variable's name), not
    # cursor.register(): a registered table is held by DuckDB until the transaction
    # commits, even once unregistered, so a full build kept every chunk's rows in memory
    # (~540 MB of 1,000,000 spans' conversations; bench/README.md).
    new_conversations = rows
    cursor.execute("INSERT INTO conversations BY NAME SELECT * FROM new_conversations")
    del new_conversations
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
            pending.append(pool.submit(build_chunk_in_worker, fetched, options, now))
            del fetched
            while len(pending) > workers:  # bound memory: a few chunks in flight
                written += _write(cursor, pending.popleft().result())
        while pending:
            written += _write(cursor, pending.popleft().result())
    return Rebuilt(written, spans, logs)
