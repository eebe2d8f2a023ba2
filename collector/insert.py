"""Decoded rows into the store: one INSERT per signal, re-delivered items dropped.

A spooled request can be stored twice (a client retry, a crash between commit and cursor),
so every insert drops rows whose identity is already stored (an anti-join bounded by the
batch's time range, and for spans its range of ``tid_hi`` too, see
``collector/sql/insert_*.sql``) and keeps one row per identity
within the batch. The latter happens here in Arrow, on the identity columns only: DuckDB's
window over every column of ~3 KB rows cost ~12 % of the insert
(``bench/collector_cpu.py``); the first row of an identity is the one kept. A batch goes
in as statements of at most MAX_STATEMENT_BYTES, so a few huge rows do not make DuckDB
allocate all their strings at once (16 MB of 68 KB attributes failed under a 64 MB
``db_memory_limit``, and the materializer retried that commit forever).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from tracemill.store import load_sql


@dataclass(frozen=True)
class InsertStatement:
    """How one signal's rows are inserted."""

    sql: str
    """The INSERT reading the registered Arrow table ``incoming_rows``; $1/$2 bound the
    time column, $3 is the commit's ingest_seq, then a pair of bounds per ``narrowing``
    column ($4/$5, ...)."""
    time_column: str
    """The column whose range bounds the anti-join."""
    identity: tuple[str, ...]
    """The columns that identify an item (one row per identity is stored)."""
    narrowing: tuple[str, ...] = ()
    """More identity columns whose range bounds the anti-join: a stored duplicate lies in
    the batch's range of each, so row groups whose zone maps miss it are not read."""


_STATEMENTS = {
    "traces": ("insert_spans.sql", "start_time_unix_nano",
               ("tid_hi", "tid_lo", "sid", "start_time_unix_nano"), ("tid_hi",)),
    "logs": ("insert_log_records.sql", "time_unix_nano", ("key_hi", "key_lo", "time_unix_nano"),
             ()),
}
SIGNALS = tuple(_STATEMENTS)
"""The signals that have a table."""
MAX_STATEMENT_BYTES = 12 * 1024 * 1024
"""About the most Arrow bytes one INSERT statement reads (more go in several statements
of the same transaction, each seeing the rows of the ones before)."""


def insert_statement(signal: str) -> InsertStatement:
    """The insert of ``signal``'s rows (``traces`` or ``logs``)."""
    name, column, identity, narrowing = _STATEMENTS[signal]
    return InsertStatement(load_sql("collector", name), column, identity, narrowing)


def insert_rows(cursor: duckdb.DuckDBPyConnection, statement: InsertStatement,
                tables: list[pa.Table], sequence: int) -> int:
    """Insert the rows not stored yet, inside the caller's transaction; returns how many.

    ``sequence`` numbers the commit (``ingest_seq``).
    """
    rows = pa.concat_tables(tables) if tables else None
    if rows is None or not rows.num_rows:
        return 0
    rows = first_of_each(rows, statement.identity)
    # slices of about MAX_STATEMENT_BYTES (see the module docstring)
    step = max(1, int(MAX_STATEMENT_BYTES * rows.num_rows // max(rows.nbytes, 1)))
    return sum(_insert_slice(cursor, statement, rows.slice(start, step), sequence)
               for start in range(0, rows.num_rows, step))


def _insert_slice(cursor: duckdb.DuckDBPyConnection, statement: InsertStatement,
                  rows: pa.Table, sequence: int) -> int:
    params = [*_bounds(rows, statement.time_column), sequence]
    for column in statement.narrowing:
        params.extend(_bounds(rows, column))
    cursor.register("incoming_rows", rows)
    try:
        result = cursor.execute(statement.sql, params).fetchone()
    except BaseException:
        # the failed statement aborted the transaction, so unregistering fails too: the
        # error to report is the statement's, not "Current transaction is aborted"
        with contextlib.suppress(duckdb.Error):
            cursor.unregister("incoming_rows")
        raise
    cursor.unregister("incoming_rows")
    return int(result[0]) if result else 0


def _bounds(rows: pa.Table, column: str) -> tuple[object, object]:
    bounds = pc.min_max(rows[column])
    return bounds["min"].as_py(), bounds["max"].as_py()


def first_of_each(rows: pa.Table, identity: tuple[str, ...]) -> pa.Table:
    """``rows`` with only the first row of each identity, in their order."""
    keys = rows.select(list(identity))
    distinct = keys.group_by(list(identity), use_threads=False).aggregate([])
    if distinct.num_rows == rows.num_rows:
        return rows
    numbered = keys.append_column("row", pa.array(range(rows.num_rows), pa.int64()))
    firsts = numbered.group_by(list(identity), use_threads=False).aggregate([("row", "min")])
    first = firsts["row_min"]
    return rows.take(pc.take(first, pc.sort_indices(first)))
