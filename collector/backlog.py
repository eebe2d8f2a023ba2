"""Never a silent half store: what a collector acknowledged but did not store yet.

A collector that stops before its spool is stored (SIGKILL, a drain that ran out of time,
a full disk) leaves acknowledged requests in ``<db>.spool/``; the next ``tracemill serve``
stores them. Commands that read the store call :func:`settle_spool` right after opening
it: it stores the backlog into the open store exactly once (the materializer's own path:
the spool position is committed with the rows), or, when the file cannot be written now,
says on stderr how many acknowledged requests the answer leaves out and how to finish.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import duckdb

from collector.materializer import DecodePool, Materializer
from collector.metrics import Metrics
from collector.pipeline import spool_folder
from collector.spool import Spool, SpoolBacklog, scan_backlog
from tracemill.config import Settings
from tracemill.errors import StoreError, StoreLockedError
from tracemill.store import Store, load_sql

Notify = Callable[[str], None]
Reopen = Callable[[bool], Store]
"""Opens the same store again: read-only when given True."""


def _stderr(text: str) -> None:
    print(f"tracemill: {text}", file=sys.stderr, flush=True)


def spool_backlog(store: Store) -> SpoolBacklog | None:
    """What the store's spool holds beyond the store's cursor (None: no spool, or no cursor)."""
    folder = spool_folder(store.path)
    if not folder.is_dir():
        return None
    try:
        position = int(store.query(load_sql("collector", "spool_cursor.sql"))[0][0])
    except (duckdb.Error, IndexError):
        return None  # a store from before the collector's schema: nothing was spooled for it
    backlog = scan_backlog(folder, position)
    return backlog if backlog.requests else None


def store_spooled(store: Store, settings: Settings) -> int:
    """Store everything in the spool of an open, writable store; returns the bytes stored.

    Raises duckdb.Error or OSError when the store or the spool cannot be written.
    """
    spool = Spool(spool_folder(store.path))
    decoders = DecodePool(0)
    try:
        materializer = Materializer(store, spool, Metrics(), decoders,
                                    max_commit_items=settings.max_commit_items)
        return materializer.store_all()
    finally:
        decoders.shutdown()
        spool.close()


def settle_spool(store: Store, settings: Settings, reopen: Reopen,
                 notify: Notify = _stderr) -> Store:
    """Store the spool's backlog before a command reads ``store``; return the store to read.

    A read-only store is closed, opened for writing to store the backlog, and opened
    read-only again. When that is not possible (another process holds the file, the disk
    is full), the store is returned as it is and ``notify`` says what it leaves out.
    """
    try:
        backlog = spool_backlog(store)
    except OSError as exc:
        notify(f"warning: cannot read the spool beside {store.path} ({exc}); this answer may "
               "leave out requests a collector acknowledged but had not stored")
        return store
    if backlog is None:
        return store
    if not store.read_only:
        _store_or_explain(store, settings, backlog, notify)
        return store
    store.close()
    try:
        writable = reopen(False)
    except StoreError as exc:
        _explain(backlog, store.path, _why_locked(exc), notify)
        return reopen(True)
    try:
        _store_or_explain(writable, settings, backlog, notify)
    finally:
        writable.close()
    return reopen(True)


def _store_or_explain(store: Store, settings: Settings, backlog: SpoolBacklog,
                      notify: Notify) -> None:
    notify(f"storing {_amount(backlog)} that a collector acknowledged but had not stored "
           f"yet (from {backlog.folder}) before reading the store")
    try:
        store_spooled(store, settings)
    except (duckdb.Error, OSError) as exc:
        left = spool_backlog(store) or backlog
        _explain(left, store.path, f"storing them failed: {exc}", notify)


def _why_locked(exc: StoreError) -> str:
    if isinstance(exc, StoreLockedError):
        return str(exc).split(". DuckDB lets")[0]
    return str(exc)


def _explain(backlog: SpoolBacklog, db: Path, reason: str, notify: Notify) -> None:
    notify(f"warning: {_amount(backlog)} acknowledged by a collector are not in {db} yet, "
           f"so this answer leaves them out ({reason}). They are safe in {backlog.folder}: "
           "run this command again once nothing else holds the file (it stores them "
           "first), or start `tracemill serve` on it.")


def _amount(backlog: SpoolBacklog) -> str:
    noun = "request" if backlog.requests == 1 else "requests"
    return (f"{backlog.requests:,} export {noun} ({backlog.items:,} spans and log records, "
            f"{backlog.payload_bytes / 1e6:.1f} MB)")
