"""Decoded rows into the store: one INSERT per signal, re-delivered items dropped.

A spooled request can be stored twice (a client retry, a crash between commit and cursor),
so every insert first keeps one row per identity within the batch (in Arrow, on the
identity columns only: DuckDB's window over every column of ~3 KB rows cost ~12 % of the
insert, ``bench/collector_cpu.py``; the first row of an identity is the one kept), then
asks which of those identities are stored already (a semi join of the batch's keys,
bounded by the batch's time range, and for spans its range of ``tid_hi`` too, see
``collector/sql/stored_*.sql``) and drops them, and inserts the rest with a plain INSERT
(its JSON columns typed as JSON, so DuckDB does not parse them again: :func:`as_json`).
The lookup reads the identity columns only and hashes the batch, not the stored rows, so
its cost does not grow with the rows stored for the same minutes (an anti-join inside
the INSERT did). A batch goes in as statements of at most MAX_STATEMENT_BYTES, so a few
huge rows do not make DuckDB allocate all their strings at once (16 MB of 68 KB
attributes failed under a 64 MB ``db_memory_limit``, and the materializer retried that
commit forever).

The lookup sees only committed rows (and the caller's own). While the materializer
commits one group it inserts the next in another transaction, which cannot see the rows
being committed; it passes their identities as ``in_flight`` and those rows are dropped
here as well.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from tracemill.store import load_sql

_T = TypeVar("_T")


@dataclass(frozen=True)
class InsertStatement:
    """How one signal's rows are inserted."""

    sql: str
    """The INSERT reading the registered Arrow table ``incoming_rows``; $1 is the
    commit's ingest_seq."""
    stored_sql: str
    """The SELECT of the identities in the registered Arrow table ``incoming_keys`` that
    are stored already; $1/$2 bound the time column, then a pair of bounds per
    ``narrowing`` column ($3/$4, ...)."""
    time_column: str
    """The column whose range bounds the lookup of stored identities."""
    identity: tuple[str, ...]
    """The columns that identify an item (one row per identity is stored)."""
    narrowing: tuple[str, ...] = ()
    """More identity columns whose range bounds the lookup: a stored duplicate lies in
    the batch's range of each, so row groups whose zone maps miss it are not read."""
    json_columns: tuple[str, ...] = ()
    """The JSON columns: handed to DuckDB typed as JSON (see :func:`as_json`)."""


_STATEMENTS = {
    "traces": ("spans", "start_time_unix_nano",
               ("tid_hi", "tid_lo", "sid", "start_time_unix_nano"), ("tid_hi",),
               ("attributes", "events", "links", "resource_attributes", "scope_attributes")),
    "logs": ("log_records", "time_unix_nano", ("key_hi", "key_lo", "time_unix_nano"), (),
             ("body", "attributes", "resource_attributes", "scope_attributes")),
}
SIGNALS = tuple(_STATEMENTS)
"""The signals that have a table."""
MAX_STATEMENT_BYTES = 12 * 1024 * 1024
"""About the most Arrow bytes one INSERT statement reads (more go in several statements
of the same transaction, each seeing the rows of the ones before)."""


def insert_statement(signal: str) -> InsertStatement:
    """The insert of ``signal``'s rows (``traces`` or ``logs``)."""
    table, column, identity, narrowing, json_columns = _STATEMENTS[signal]
    return InsertStatement(load_sql("collector", f"insert_{table}.sql"),
                           load_sql("collector", f"stored_{table}.sql"), column, identity,
                           narrowing, json_columns)


def insert_rows(cursor: duckdb.DuckDBPyConnection, statement: InsertStatement,
                tables: list[pa.Table], sequence: int, *,
                in_flight: pa.Table | None = None) -> int:
    """Insert the rows not stored yet, inside the caller's transaction; returns how many.

    ``sequence`` numbers the commit (``ingest_seq``). ``in_flight`` holds the identities
    (:func:`identities`) of rows another transaction has inserted but not yet committed:
    the lookup of stored rows cannot see them, so rows with those identities are dropped
    here.
    """
    rows = pa.concat_tables(tables) if tables else None
    if rows is None or not rows.num_rows:
        return 0
    if in_flight is not None and in_flight.num_rows:
        rows = without(rows, statement.identity, in_flight)
        if not rows.num_rows:
            return 0
    rows = first_of_each(rows, statement.identity)
    stored = _stored(cursor, statement, identities(rows, statement.identity))
    if stored.num_rows:
        rows = without(rows, statement.identity, stored)
        if not rows.num_rows:
            return 0
    # slices of about MAX_STATEMENT_BYTES (see the module docstring)
    step = max(1, int(MAX_STATEMENT_BYTES * rows.num_rows // max(rows.nbytes, 1)))
    return sum(_insert_slice(cursor, statement, rows.slice(start, step), sequence)
               for start in range(0, rows.num_rows, step))


def _stored(cursor: duckdb.DuckDBPyConnection, statement: InsertStatement,
            keys: pa.Table) -> pa.Table:
    """The identities among ``keys`` that the transaction sees stored."""
    params = list(_bounds(keys, statement.time_column))
    for column in statement.narrowing:
        params.extend(_bounds(keys, column))
    return _run(cursor, "incoming_keys", keys,
                lambda: cursor.sql(statement.stored_sql, params=params).to_arrow_table())


def _insert_slice(cursor: duckdb.DuckDBPyConnection, statement: InsertStatement,
                  rows: pa.Table, sequence: int) -> int:
    rows = as_json(rows, statement.json_columns)
    _run(cursor, "incoming_rows", rows, lambda: cursor.execute(statement.sql, [sequence]))
    count: int = rows.num_rows
    return count


def _run(cursor: duckdb.DuckDBPyConnection, name: str, table: pa.Table,
         work: Callable[[], _T]) -> _T:
    """``work()`` with ``table`` registered as ``name``."""
    cursor.register(name, table)
    try:
        result = work()
    except BaseException:
        # the failed statement aborted the transaction, so unregistering fails too: the
        # error to report is the statement's, not "Current transaction is aborted"
        with contextlib.suppress(duckdb.Error):
            cursor.unregister(name)
        raise
    cursor.unregister(name)
    return result


def as_json(rows: pa.Table, columns: tuple[str, ...]) -> pa.Table:
    """``rows`` with the string ``columns`` typed as Arrow's JSON extension (no copy).

    DuckDB reads such a column as JSON as it is; a plain string column going into a JSON
    column is parsed to validate it, ~12 % of the insert and commit CPU of fat spans
    (2.8 of 23 µs a span, ``bench/collector_cpu.py``). The text comes from the decoders,
    which write JSON themselves (``collector/values.py`` and ``_fastdecode.c``; their
    round trips through the store are tested in ``tests/collector/test_values_roundtrip.py``).
    """
    for name in columns:
        index = rows.schema.get_field_index(name)
        if index < 0:
            continue
        field = rows.schema.field(index)
        if not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            continue  # already JSON, or not text: DuckDB decides
        kind = pa.json_(field.type)
        column = pa.chunked_array(
            [pa.ExtensionArray.from_storage(kind, chunk) for chunk in rows.column(index).chunks],
            type=kind)
        rows = rows.set_column(index, field.with_type(kind), column)
    return rows


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


def identities(rows: pa.Table, identity: tuple[str, ...]) -> pa.Table:
    """The identity columns of ``rows`` (what :func:`without` compares)."""
    return rows.select(list(identity))


def without(rows: pa.Table, identity: tuple[str, ...], known: pa.Table) -> pa.Table:
    """``rows`` without those whose identity is in ``known``, in their order."""
    numbered = identities(rows, identity).append_column(
        "row", pa.array(range(rows.num_rows), pa.int64()))
    kept = numbered.join(known, list(identity), join_type="left anti", use_threads=False)
    if kept.num_rows == rows.num_rows:
        return rows
    return rows.take(pc.take(kept["row"], pc.sort_indices(kept["row"])))
