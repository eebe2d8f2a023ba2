"""The materializer: spooled requests → rows in the store, exactly once.

One thread reads durable records from the spool, has them decoded by a pool of worker
processes (decoding is CPU-bound Python; in processes it runs beside the receivers and
the DuckDB insert instead of sharing one interpreter lock), and inserts each group with
an anti-join that drops re-delivered items (see ``collector/insert.py``), in one
transaction that
also records the spool position reached. While one group is inserted the next is being
decoded. Segments wholly behind the committed position are deleted.

A request that cannot be decoded (the intake checked it, so this is a decoder bug or a
spool from an older collector) is moved to the dead-letter file and skipped (see
``collector/dead_letters.py``): retrying it would block every request behind it forever.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import CancelledError, Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from collector.dead_letters import DeadLetters
from collector.decode import DecodedBatch, decode, decode_chunks
from collector.insert import SIGNALS, insert_rows, insert_statement
from collector.metrics import Metrics
from collector.spool import Spool, SpoolEntry
from tracemill.store import Store, load_sql
from tracemill.workers import worker_pool

log = logging.getLogger("tracemill.collector.materializer")

_MAX_GROUP_BYTES = 512 * 1024 * 1024
"""Spool bytes one commit may cover: max_commit_items is the limit that counts (requests
are decoded a few at a time, so a group's size does not set the memory it takes)."""
_DECODE_AHEAD = 4
"""Requests decoded ahead of the insert (their rows wait in memory)."""


def _decode_entry(entry: SpoolEntry) -> DecodedBatch:
    return decode(entry.signal, entry.read_payload(), entry.received_unix_nano)


class DecodePool:
    """Worker processes that decode spooled requests (or one thread when ``processes`` is 0)."""

    def __init__(self, processes: int) -> None:
        self._processes = processes
        self._executor = self._new_executor()

    def _new_executor(self) -> Executor:
        if self._processes == 0:
            return ThreadPoolExecutor(1, thread_name_prefix="tracemill-decode")
        return worker_pool(self._processes)

    def warm_up(self) -> None:
        """Start the workers now rather than on the first request."""
        futures = [self._executor.submit(decode, "traces", b"", 0)
                   for _ in range(max(1, self._processes))]
        for future in futures:
            future.result()

    def submit(self, entry: SpoolEntry) -> Future[DecodedBatch]:
        """Decode one spooled request on a worker."""
        return self._executor.submit(_decode_entry, entry)

    def restart(self) -> None:
        """Replace workers after one died."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._executor = self._new_executor()

    def shutdown(self) -> None:
        """Stop the workers."""
        self._executor.shutdown(wait=True)


class _Undecodable(Exception):
    """A spooled request whose decoding failed (not for want of a worker or of memory)."""

    def __init__(self, entry: SpoolEntry, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.entry = entry


_NOT_THE_REQUEST = (OSError, MemoryError, BrokenProcessPool, CancelledError, duckdb.Error)
"""Failures while decoding that say nothing about the request: retried, never moved aside."""


@dataclass
class _Group:
    end: int
    """Spool position after the last record read (dead letters skipped included)."""
    entries: list[SpoolEntry]
    futures: list[Future[DecodedBatch] | None]
    """Decoding under way for the first entries (a window of _DECODE_AHEAD, moved on as
    batches are inserted); None for a large request, decoded here in chunks."""

    def cancel(self) -> None:
        """Drop the decoding not yet started (the group will be read again)."""
        for future in self.futures:
            if future is not None:
                future.cancel()


class Materializer:
    """Turns the spool into rows from one thread; see the module docstring."""

    def __init__(self, store: Store, spool: Spool, metrics: Metrics, decoders: DecodePool,
                 *, max_commit_items: int) -> None:
        self._store = store
        self._spool = spool
        self._metrics = metrics
        self._decoders = decoders
        self._max_items = max_commit_items
        self._stop = threading.Event()
        self._progress = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="tracemill-materializer",
                                        daemon=True)
        self._commit_sql = load_sql("collector", "record_commit.sql")
        self._statements = {signal: insert_statement(signal) for signal in SIGNALS}
        self.failing: str | None = None
        """The last store error while it persists (None when commits succeed)."""
        self._failures = 0
        self.dead_letters = DeadLetters(spool.folder)
        """Requests moved aside because they cannot be decoded."""
        metrics.dead_letters = lambda: self.dead_letters.count
        self._retry_now = False
        position, commits = store.query(load_sql("collector", "spool_cursor.sql"))[0]
        position = int(position)
        self._commits = int(commits)
        if position > spool.end or position < spool.start:
            log.warning("the spool does not match the store's cursor; reading it all again "
                        "(duplicates are dropped)", extra={"fields": {
                            "cursor": position, "spool_start": spool.start,
                            "spool_end": spool.end}})
            position = spool.start
        self._position = position

    @property
    def position(self) -> int:
        """Spool position committed to the store."""
        with self._progress:
            return self._position

    def backlog(self) -> int:
        """Bytes acknowledged but not yet stored as rows."""
        return self._spool.end - self.position

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    @property
    def alive(self) -> bool:
        """Whether the thread runs."""
        return self._thread.is_alive()

    @property
    def dead(self) -> bool:
        """Whether the thread was started and ended without being asked to stop."""
        return (self._thread.ident is not None and not self._thread.is_alive()
                and not self._stop.is_set())

    def flush(self, timeout: float | None = 60.0) -> bool:
        """Wait until everything acknowledged so far is stored; False on timeout.

        ``timeout=None`` waits as long as it takes.
        """
        target = self._spool.end
        with self._progress:
            return self._progress.wait_for(lambda: self._position >= target, timeout)

    def close(self, drain_seconds: float | None) -> None:
        """Store what is spooled (for up to ``drain_seconds``; None: all), then stop."""
        if self._thread.is_alive() and not self.flush(drain_seconds):
            log.warning("stopping with requests still spooled; they are stored at the next "
                        "start", extra={"fields": {"backlog_bytes": self.backlog()}})
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        cursor = self._store.cursor()
        try:
            group: _Group | None = None
            while not self._stop.is_set():
                try:
                    group = self._step(cursor, group)
                except Exception as exc:  # this thread must outlive any error
                    self._failed(exc)
                    group = None
                    self._stop.wait(1.0)
        finally:
            cursor.close()

    def _step(self, cursor: duckdb.DuckDBPyConnection, group: _Group | None) -> _Group | None:
        """Store one group (reading it first if needed); return the group to store next."""
        if group is None:
            if not self._spool.wait_beyond(self.position, 0.2):
                return None
            group = self._next_group(self.position)
        # decode the next group while this one is inserted
        following = None
        if self._spool.end > group.end:
            following = self._next_group(group.end)
        if self._commit(cursor, group):
            return following
        if following is not None:
            following.cancel()
        if not self._retry_now:
            self._stop.wait(1.0)
        self._retry_now = False
        return None

    def store_all(self) -> int:
        """Store everything spooled from the calling thread (the thread is not started).

        Returns the spool bytes stored; raises the store's error when a commit fails.
        """
        cursor = self._store.cursor()
        stored_from = self.position
        try:
            while self.position < self._spool.end:
                group = self._next_group(self.position)
                try:
                    self._store_group(cursor, group)
                except _Undecodable as bad:
                    group.cancel()
                    self._quarantine(bad)
        finally:
            cursor.close()
        return self.position - stored_from

    def _failed(self, exc: Exception) -> None:
        text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, duckdb.Error) else str(exc)
        if self.failing is None:
            # once per episode: the first error explains the retries that follow
            log.error("storing spooled requests failed; retrying every second (acknowledged "
                      "requests stay in the spool)", exc_info=not isinstance(exc, duckdb.Error),
                      extra={"fields": {"error": text, "backlog_bytes": self.backlog()}})
        self.failing = text
        self._failures += 1

    def _next_group(self, position: int) -> _Group:
        entries = self._spool.read(position, self._max_items, _MAX_GROUP_BYTES)
        group = _Group(entries[-1].end, [e for e in entries if e not in self.dead_letters], [])
        self._decode_ahead(group, _DECODE_AHEAD)
        return group

    def _decode_ahead(self, group: _Group, upto: int) -> None:
        """Start decoding the group's entries before index ``upto``."""
        for entry in group.entries[len(group.futures):upto]:
            group.futures.append(None if entry.items > self._max_items
                                 else self._decoders.submit(entry))

    def _batches(self, group: _Group) -> Iterator[DecodedBatch]:
        """The group's batches in spool order; a large request in chunks of max items."""
        for index, entry in enumerate(group.entries):
            self._decode_ahead(group, index + 1 + _DECODE_AHEAD)
            future = group.futures[index]
            try:
                if future is not None:
                    yield future.result()
                else:
                    yield from decode_chunks(entry.signal, entry.read_payload(),
                                             entry.received_unix_nano, self._max_items)
            except _NOT_THE_REQUEST:
                raise
            except Exception as exc:
                raise _Undecodable(entry, exc) from exc

    def _quarantine(self, bad: _Undecodable) -> None:
        """Move an undecodable request aside, so the ones behind it are stored."""
        self.dead_letters.add(bad.entry, bad.entry.read_payload(), str(bad))

    def _commit(self, cursor: duckdb.DuckDBPyConnection, group: _Group) -> bool:
        try:
            self._store_group(cursor, group)
        except _Undecodable as bad:
            group.cancel()
            self._quarantine(bad)
            self._retry_now = True  # the group again, without it
            return False
        except BrokenProcessPool:
            log.error("a decode worker died; starting new workers and decoding again")
            group.cancel()
            self._decoders.restart()
            return False
        except duckdb.Error as exc:
            group.cancel()
            self._failed(exc)
            return False
        if self.failing is not None:
            log.warning("storing spooled requests succeeds again", extra={"fields": {
                "failed_attempts": self._failures, "error": self.failing}})
            self.failing = None
            self._failures = 0
        return True

    def _store_group(self, cursor: duckdb.DuckDBPyConnection, group: _Group) -> None:
        started = time.perf_counter()
        end = group.end
        requests = {signal: sum(entry.signal == signal for entry in group.entries)
                    for signal in self._statements}
        stored = self._insert(cursor, self._batches(group), requests, end, self._commits + 1)
        self._commits += 1
        self._metrics.observe_store(time.perf_counter() - started)
        for signal, (inserted, offered) in stored.items():
            self._metrics.add_items(signal, "stored", inserted)
            self._metrics.add_items(signal, "duplicates", offered - inserted)
        with self._progress:
            self._position = end
            self._progress.notify_all()
        self._spool.release_before(end)

    def _insert(self, cursor: duckdb.DuckDBPyConnection, batches: Iterator[DecodedBatch],
                requests: dict[str, int], end: int,
                sequence: int) -> dict[str, tuple[int, int]]:
        """Insert the batches and move the cursor to ``end``, in one transaction.

        Rows go in as slices of at most max_commit_items, so a group with one huge
        request holds one slice in memory, not the request's rows.
        """
        tallies = {signal: _Tally() for signal in self._statements}
        waiting: dict[str, list[pa.Table]] = {signal: [] for signal in self._statements}
        cursor.begin()
        try:
            for batch in batches:
                tally = tallies[batch.signal]
                tally.add(batch)
                waiting[batch.signal].append(batch.rows)
                if sum(table.num_rows for table in waiting[batch.signal]) >= self._max_items:
                    tally.inserted += self._insert_rows(cursor, batch.signal,
                                                        waiting[batch.signal], sequence)
                    waiting[batch.signal] = []
            now = time.time_ns()
            stored: dict[str, tuple[int, int]] = {}
            for signal, tally in tallies.items():
                if not requests[signal]:
                    continue
                tally.inserted += self._insert_rows(cursor, signal, waiting[signal], sequence)
                cursor.execute(self._commit_sql, [
                    now, signal, requests[signal], tally.received, tally.inserted,
                    tally.rows - tally.inserted, tally.rejected, tally.payload_bytes, end,
                ])
                stored[signal] = (tally.inserted, tally.rows)
            cursor.execute("UPDATE collector_spool_cursor SET position = ?, commits = ?",
                           [end, sequence])
            cursor.commit()
        except BaseException:
            # A failed COMMIT (a full disk) has already ended the transaction; the error
            # to report is the original one, not "cannot rollback - no transaction".
            with contextlib.suppress(duckdb.Error):
                cursor.rollback()
            raise
        return stored

    def _insert_rows(self, cursor: duckdb.DuckDBPyConnection, signal: str,
                     tables: list[pa.Table], sequence: int) -> int:
        return insert_rows(cursor, self._statements[signal], tables, sequence)


@dataclass
class _Tally:
    """What one commit stored of one signal (for collector_commits and the metrics)."""

    received: int = 0
    rejected: int = 0
    payload_bytes: int = 0
    rows: int = 0
    inserted: int = 0

    def add(self, batch: DecodedBatch) -> None:
        self.received += batch.received
        self.rejected += batch.rejected
        self.payload_bytes += batch.payload_bytes
        self.rows += batch.rows.num_rows
