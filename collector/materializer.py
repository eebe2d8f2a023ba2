"""The materializer: spooled requests → rows in the store, exactly once.

One thread reads durable records from the spool, has them decoded by a pool of worker
processes (decoding is CPU-bound Python; in processes it runs beside the receivers and
the DuckDB insert instead of sharing one interpreter lock), and inserts each group less
the re-delivered items a lookup of its keys finds stored (see ``collector/insert.py``), in one
transaction that also records the spool position reached. While one group is inserted
the next is being decoded. Segments wholly behind the committed position are deleted.

Group N's COMMIT runs on a second thread (and DuckDB cursor) while group N+1 is inserted:
DuckDB releases the interpreter lock in both and neither waits for the other, so the
commit, half of the storing time, moves onto the second core. Three rules keep this exact:

* Commits happen in spool order: N+1 is committed only after N's commit returned, and
  the position (with the spool segments it frees) moves only after a commit.
* The cursor is append-only (``collector/sql/record_cursor.sql``): two open transactions
  never write the same row, which DuckDB would refuse as a conflict.
* N+1's duplicate lookup cannot see N's rows (not committed when N+1 began), so N+1 drops rows
  whose identity N inserted, from N's identities kept in memory: a request re-delivered
  across the two groups is stored once.

When either transaction fails both are rolled back and the groups are stored again from
the committed position. On a lake, and after a group too large to keep its identities,
commits are not overlapped.

Whole row groups: a transaction that appends at least one row group of rows to a table
is written by DuckDB compressed straight to the file, no write-ahead log, no checkpoint
writing it again (about half of DuckDB's CPU per fat span, and the checkpoint is what
stalled storing for seconds: bench/README.md, "Session 7"). A transaction with a partial
row group beyond its whole ones writes that partial group too, and the next checkpoint
merges it at a cost higher than the log's. So when the store's row group is no larger
than max_commit_items (a file attached with ``ROW_GROUP_SIZE``), and another group
follows at once, the rows past the last whole row group are held back: they lead the
next group (already decoded), and the position recorded is the start of the request they
begin in. That request's counts go with the commit that stores its last rows. The rows
of it already stored are skipped when the group is read again from there (a failed
insert); after a restart the duplicate lookup drops them (counted as duplicates). Groups
of mixed signals, and requests decoded in chunks, are inserted whole.

A collector that keeps up finds less than a row group spooled each time it looks, so it
would commit only partial row groups, through the log, and pay the checkpoint again
(about three times the CPU of a whole row group, bench/README.md, "Session 7"). So a
group of fewer items than a row group (read from the spool, or the rows held back) takes
in what is spooled after it and waits for more, up to _GATHER_SECONDS, committing the
group inserted before it meanwhile; rows past the last whole row group are held back
even when nothing else is spooled yet. Rows appear up to that much later at low rates;
a flush or a stop does not wait.

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
from dataclasses import dataclass, replace

import duckdb
import pyarrow as pa

from collector._row_groups import Part, Tally, held_back, rows_of, take
from collector.dead_letters import DeadLetters
from collector.decode import DecodedBatch, decode, decode_chunks
from collector.insert import SIGNALS, identities, insert_rows, insert_statement
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
_OVERLAP_MAX_ROWS_FACTOR = 2
"""A group of more than this many times max_commit_items rows (a huge request decoded in
chunks) is committed before the next is inserted: its identities are not kept."""
_GATHER_SECONDS = 2.0
"""When transactions are cut to whole row groups, how long the materializer waits for the
spool to hold a whole row group of rows before it stores a partial one (see the module
docstring)."""
_PRUNE_EVERY = 64
"""Every this many commits, cursor rows older than the commit before are deleted (only
one of two overlapping commits can be such a multiple, so their deletes never meet)."""


_DEFAULT_ROW_GROUP_ROWS = 122_880
"""DuckDB's rows per row group in a file attached without ROW_GROUP_SIZE."""


def _row_group_rows(store: Store) -> int:
    """Rows per row group of the store's file (0 for a lake, which writes Parquet)."""
    if store.is_lake:
        return 0
    rows = store.query(load_sql("collector", "row_group_size.sql"))
    return int(rows[0][0]) if rows and rows[0][0] else _DEFAULT_ROW_GROUP_ROWS


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
    start: int
    """Spool position of its first record."""
    end: int
    """Spool position after the last record read (dead letters skipped included)."""
    entries: list[SpoolEntry]
    futures: list[Future[DecodedBatch] | None]
    """Decoding under way for the first entries (a window of _DECODE_AHEAD, moved on as
    batches are inserted); None for a large request, decoded here in chunks."""
    skip: int = 0
    """Rows of the first entry a committed transaction already stored (see
    Materializer._resume)."""
    items: int = 0
    """Its items (of a group that leads with rows held back: those rows, then the items
    of the records after them)."""

    def cancel(self) -> None:
        """Drop the decoding not yet started (the group will be read again)."""
        for future in self.futures:
            if future is not None:
                future.cancel()


def _size(group: _Group) -> int:
    """The payload bytes of a group's records."""
    return sum(entry.length for entry in group.entries)


def _full(group: _Group) -> bool:
    """Whether a group holds its most bytes (``_MAX_GROUP_BYTES``): it takes in no more
    records, and a row group is not waited for."""
    return _size(group) >= _MAX_GROUP_BYTES


@dataclass
class _Open:
    """A group inserted in a transaction not yet committed."""

    cursor: duckdb.DuckDBPyConnection
    """The cursor whose transaction holds the rows."""
    end: int
    """The group's spool end: the position once committed (the group itself, whose
    decoded batches are large, is not kept)."""
    sequence: int
    """The commit's number (ingest_seq of its rows)."""
    stored: dict[str, tuple[int, int]]
    """Per signal: (rows inserted, rows offered)."""
    keys: dict[str, pa.Table] | None
    """Per signal: identities of every row offered (None when the group is too large to
    keep them, and the next must wait for this commit)."""
    started: float
    """perf_counter() when the insert began."""
    resume: tuple[int, int] | None = None
    """When rows were held back for whole row groups: (the position ``end``, rows of the
    request there that this transaction stores)."""


@dataclass
class _State:
    """Where the materializer thread is between steps."""

    open: _Open | None = None
    """Inserted, to be committed next."""
    group: _Group | None = None
    """Read and being decoded, to be inserted next (after ``open``)."""

    def abandon(self) -> None:
        """Roll back what is open and drop the group (both are read again)."""
        if self.open is not None:
            _rollback(self.open.cursor)
            self.open = None
        if self.group is not None:
            self.group.cancel()
            self.group = None


def _rollback(cursor: duckdb.DuckDBPyConnection) -> None:
    # A failed COMMIT (a full disk) has already ended the transaction; the error to
    # report is the original one, not "cannot rollback - no transaction".
    with contextlib.suppress(duckdb.Error):
        cursor.rollback()


class Materializer:
    """Turns the spool into rows from one thread; see the module docstring."""

    def __init__(self, store: Store, spool: Spool, metrics: Metrics, decoders: DecodePool,
                 *, max_commit_items: int, row_group_rows: int | None = None) -> None:
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
        self._cursor_sql = load_sql("collector", "record_cursor.sql")
        self._prune_sql = load_sql("collector", "prune_cursor.sql")
        self._overlap = not store.is_lake
        row_group = _row_group_rows(store) if row_group_rows is None else row_group_rows
        self._align = row_group if row_group and row_group <= max_commit_items else 0
        """Rows of the store's row group when transactions are cut to whole row groups
        (0: they are not; see _open)."""
        self._resume: tuple[int, int] | None = None
        """(committed position, rows of the request there already stored) after a commit
        that held rows back; a group read again from there skips those rows."""
        self.overlapped_commits = 0
        """Commits that ran while the next group was inserted."""
        self._statements = {signal: insert_statement(signal) for signal in SIGNALS}
        self.failing: str | None = None
        """The last store error while it persists (None when commits succeed)."""
        self._failures = 0
        self.dead_letters = DeadLetters(spool.folder)
        """Requests moved aside because they cannot be decoded."""
        metrics.dead_letters = lambda: self.dead_letters.count
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
        self._gathering_since: float | None = None
        """monotonic() when the materializer began waiting for a whole row group."""
        self._flushes = 0
        """Callers waiting in :meth:`flush` (no waiting for whole row groups meanwhile)."""

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
            self._flushes += 1
            try:
                return self._progress.wait_for(lambda: self._position >= target, timeout)
            finally:
                self._flushes -= 1

    def close(self, drain_seconds: float | None) -> None:
        """Store what is spooled (for up to ``drain_seconds``; None: all), then stop."""
        if self._thread.is_alive() and not self.flush(drain_seconds):
            log.warning("stopping with requests still spooled; they are stored at the next "
                        "start", extra={"fields": {"backlog_bytes": self.backlog()}})
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        cursors = (self._store.cursor(), self._store.cursor())
        committer = ThreadPoolExecutor(1, thread_name_prefix="tracemill-commit")
        state = _State()
        try:
            while not self._stop.is_set():
                try:
                    self._step(cursors, committer, state)
                except Exception as exc:  # this thread must outlive any error
                    state.abandon()
                    for cursor in cursors:  # a transaction opened before the error
                        _rollback(cursor)
                    self._failed(exc)
                    self._stop.wait(1.0)
            if state.open is not None:  # inserted already: commit it on the way out
                opened, state.open = state.open, None
                try:
                    self._commit_now(opened)
                except Exception as exc:
                    self._failed(exc)
        finally:
            state.abandon()
            committer.shutdown(wait=True)
            for cursor in cursors:
                cursor.close()

    def _step(self, cursors: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
              committer: Executor, state: _State) -> None:
        """Insert one group while committing the one before; see the module docstring."""
        pending = state.open
        if state.group is None:
            start = pending.end if pending is not None else self.position
            if self._spool.end <= start:
                if pending is not None:  # nothing to overlap with: commit now
                    state.open = None
                    self._commit_now(pending)
                else:
                    self._spool.wait_beyond(self.position, 0.2)
                return
            state.group = self._next_group(start)
        group = state.group
        if group.items < self._align and not _full(group):  # wait for a whole row group
            if self._spool.end > group.end:                # (module docstring)
                self._extend(group)
            if group.items < self._align and not _full(group) and self._gathering():
                self._wait_for_rows(state)
                return
        # decode the next group while this one is inserted
        following = self._next_group(group.end) if self._spool.end > group.end else None
        self._gathering_since = None
        cursor = cursors[1] if pending is not None and pending.cursor is cursors[0] \
            else cursors[0]
        committing = committer.submit(pending.cursor.commit) if pending is not None else None
        opened: _Open | None = None
        carry: _Group | None = None
        error: Exception | None = None
        try:
            opened, carry = self._open(cursor, group, pending, overlap=self._overlap,
                                       hold_back=following is not None or self._may_gather())
        except Exception as exc:  # handled once the commit beside it has ended
            error = exc
        state.open = state.group = None
        if pending is not None and committing is not None:
            try:
                committing.result()
            except Exception:
                _rollback(pending.cursor)
                if opened is not None:  # it relied on the failed rows being stored
                    _rollback(opened.cursor)
                group.cancel()
                if following is not None:
                    following.cancel()
                raise
            self.overlapped_commits += 1
            self._committed(pending)
        if error is not None:
            group.cancel()
            if following is not None:
                following.cancel()
            if not self._insert_failed(error):
                self._stop.wait(1.0)
            return
        assert opened is not None
        if opened.keys is None:
            self._commit_now(opened)
        else:
            state.open = opened
        if carry is not None and following is not None:  # its rows lead the next group
            following.start = carry.start
            following.entries[:0] = carry.entries
            following.futures[:0] = carry.futures
            following.items += carry.items
        state.group = following if following is not None else carry

    def _may_gather(self) -> bool:
        """Whether transactions wait for whole row groups now (not in a flush or a stop)."""
        return bool(self._align) and not self._flushes and not self._stop.is_set()

    def _gathering(self) -> bool:
        """Whether to keep waiting for a whole row group (for up to _GATHER_SECONDS)."""
        if not self._may_gather():
            self._gathering_since = None
            return False
        now = time.monotonic()
        if self._gathering_since is None:
            self._gathering_since = now
        if now - self._gathering_since >= _GATHER_SECONDS:
            self._gathering_since = None
            return False
        return True

    def _extend(self, group: _Group) -> None:
        """Add the records spooled after the group to it, within the group's byte cap."""
        more = self._next_group(group.end, _MAX_GROUP_BYTES - _size(group))
        if more.skip:  # rows of its first request are stored (after a failure): not here
            more.cancel()
            return
        if len(group.futures) == len(group.entries):  # futures stay in step with entries
            group.futures += more.futures
        else:  # its decoding window is not at its end: the new entries join the window
            more.cancel()  # (_batches) instead of being decoded all at once
        group.entries += more.entries
        group.end = more.end
        group.items += more.items

    def _wait_for_rows(self, state: _State) -> None:
        """Wait a moment for more spooled requests, the inserted group committed first
        (nothing is inserted beside it meanwhile)."""
        if state.open is not None:
            opened, state.open = state.open, None
            self._commit_now(opened)
        else:
            self._spool.wait_beyond(self._spool.end, 0.1)

    def _insert_failed(self, error: Exception) -> bool:
        """Deal with a group that could not be inserted; True to retry at once."""
        if isinstance(error, _Undecodable):
            self._quarantine(error)
            return True  # the group again, without it
        if isinstance(error, BrokenProcessPool):
            log.error("a decode worker died; starting new workers and decoding again")
            self._decoders.restart()
            return False
        if isinstance(error, duckdb.Error):
            self._failed(error)
            return False
        raise error

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
                    self._commit_now(self._open(cursor, group, None, overlap=False)[0])
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

    def _next_group(self, position: int, max_bytes: int | None = None) -> _Group:
        entries = self._spool.read(position, self._max_items,
                                   _MAX_GROUP_BYTES if max_bytes is None else max_bytes)
        skip = self._resume[1] if self._resume and self._resume[0] == position else 0
        kept = [e for e in entries if e not in self.dead_letters]
        group = _Group(position, entries[-1].end, kept, [], skip,
                       items=sum(e.items for e in kept) - skip)
        self._decode_ahead(group, _DECODE_AHEAD)
        return group

    def _decode_ahead(self, group: _Group, upto: int) -> None:
        """Start decoding the group's entries before index ``upto``."""
        for entry in group.entries[len(group.futures):upto]:
            group.futures.append(None if entry.items > self._max_items
                                 else self._decoders.submit(entry))

    def _batches(self, group: _Group) -> Iterator[tuple[int, DecodedBatch]]:
        """The group's batches in spool order, with their entry's index; a large request
        in chunks of max items."""
        for index, entry in enumerate(group.entries):
            self._decode_ahead(group, index + 1 + _DECODE_AHEAD)
            future = group.futures[index]
            try:
                if future is not None:
                    yield index, future.result()
                else:
                    for batch in decode_chunks(entry.signal, entry.read_payload(),
                                               entry.received_unix_nano, self._max_items):
                        yield index, batch
            except _NOT_THE_REQUEST:
                raise
            except Exception as exc:
                raise _Undecodable(entry, exc) from exc

    def _quarantine(self, bad: _Undecodable) -> None:
        """Move an undecodable request aside, so the ones behind it are stored."""
        self.dead_letters.add(bad.entry, bad.entry.read_payload(), str(bad))

    def _commit_now(self, opened: _Open) -> None:
        """Commit an inserted group from this thread."""
        try:
            opened.cursor.commit()
        except BaseException:
            _rollback(opened.cursor)
            raise
        self._committed(opened)

    def _committed(self, opened: _Open) -> None:
        """Account for a group whose commit returned: move the position past it."""
        self._commits = opened.sequence
        self._resume = opened.resume
        self._metrics.observe_store(time.perf_counter() - opened.started)
        for signal, (inserted, offered) in opened.stored.items():
            self._metrics.add_items(signal, "stored", inserted)
            self._metrics.add_items(signal, "duplicates", offered - inserted)
        if self.failing is not None:
            log.warning("storing spooled requests succeeds again", extra={"fields": {
                "failed_attempts": self._failures, "error": self.failing}})
            self.failing = None
            self._failures = 0
        end = opened.end
        with self._progress:
            self._position = end
            self._progress.notify_all()
        try:
            self._spool.release_before(end)
        except OSError as exc:  # stored anyway; a segment left behind is read again later
            log.warning("could not delete a stored spool segment", extra={"fields": {
                "error": f"{type(exc).__name__}: {exc}"}})

    def _open(self, cursor: duckdb.DuckDBPyConnection, group: _Group,
              before: _Open | None, *, overlap: bool,
              hold_back: bool = False) -> tuple[_Open, _Group | None]:
        """Insert the group and append the cursor row, in a transaction left open.

        ``before`` is the group inserted before it and not yet committed (its rows are
        not seen by this transaction's duplicate lookup, so its identities are dropped here).
        ``overlap``: keep this group's identities, for the group inserted while it commits.
        Rows go in as slices of at most max_commit_items, so a group with one huge
        request holds one slice in memory, not the request's rows.

        ``hold_back`` (another group follows at once): when transactions are cut to whole
        row groups (see the module docstring), the rows past the last whole row group are
        not inserted. They come back as the start of the next group (already decoded), and
        the position this transaction records is the start of the request they begin in.
        """
        started = time.perf_counter()
        sequence = (before.sequence if before is not None else self._commits) + 1
        in_flight = before.keys if before is not None else None
        align = self._align if len({entry.signal for entry in group.entries}) == 1 else 0
        tallies = {signal: Tally() for signal in self._statements}
        for entry in group.entries:
            tallies[entry.signal].requests += 1
        waiting: dict[str, list[Part]] = {signal: [] for signal in self._statements}
        keys: dict[str, list[pa.Table]] | None = \
            {signal: [] for signal in self._statements} if overlap else None
        offered = 0

        def insert(signal: str, count: int | None = None) -> int:
            tables = take(waiting[signal], count)
            if keys is not None:
                keys[signal].extend(identities(table, self._statements[signal].identity)
                                    for table in tables)
            return insert_rows(cursor, self._statements[signal], tables, sequence,
                               in_flight=in_flight.get(signal) if in_flight else None)

        end, resume, carry = group.end, None, None
        try:
            cursor.begin()
            for index, batch in self._batches(group):
                if index == 0 and group.skip:  # stored by the transaction before
                    batch = replace(batch, rows=batch.rows.slice(group.skip))
                tally = tallies[batch.signal]
                tally.add(batch)
                offered += batch.rows.num_rows
                if offered > _OVERLAP_MAX_ROWS_FACTOR * self._max_items:
                    keys = None  # too many to keep: the next group waits for this commit
                parts = waiting[batch.signal]
                parts.append(Part(index, batch, batch.rows))
                rows = sum(part.rows.num_rows for part in parts)
                if rows >= self._max_items:
                    tally.inserted += insert(batch.signal, rows - rows % align if align else None)
            if align and hold_back:
                only = group.entries[0].signal
                held = held_back(waiting[only], align, tallies[only], group.futures)
                if held:
                    stored_now = rows_of(waiting[only]) - rows_of(held)
                    tallies[only].inserted += insert(only, stored_now)
                    waiting[only].clear()  # the rest is ``held``
                    end, resume, carry = self._carry(group, held)
            now = time.time_ns()
            stored: dict[str, tuple[int, int]] = {}
            for signal, tally in tallies.items():
                if not any(entry.signal == signal for entry in group.entries):
                    continue
                tally.inserted += insert(signal)
                cursor.execute(self._commit_sql, [
                    now, signal, tally.requests, tally.received, tally.inserted,
                    tally.rows - tally.inserted, tally.rejected, tally.payload_bytes, end,
                ])
                stored[signal] = (tally.inserted, tally.rows)
            cursor.execute(self._cursor_sql, [end, sequence])
            if sequence % _PRUNE_EVERY == 0:
                cursor.execute(self._prune_sql, [sequence - 1])
        except BaseException:
            _rollback(cursor)
            raise
        # combined into buffers of their own: slices would keep the batches alive
        kept = None if keys is None else {
            signal: pa.concat_tables(tables).combine_chunks()
            for signal, tables in keys.items() if tables}
        return _Open(cursor, end, sequence, stored, kept, started, resume), carry

    @staticmethod
    def _carry(group: _Group, held: list[Part]) -> tuple[int, tuple[int, int], _Group]:
        """(position, resume, next group's first entries) for rows held back."""
        first = held[0].index
        position = group.entries[first - 1].end if first else group.start
        stored_here = held[0].batch.rows.num_rows - held[0].rows.num_rows
        resume = (position, stored_here + (group.skip if first == 0 else 0))
        futures: list[Future[DecodedBatch] | None] = []
        for part in held:
            future: Future[DecodedBatch] = Future()
            future.set_result(replace(part.batch, rows=part.rows))
            futures.append(future)
        return position, resume, _Group(position, group.end, group.entries[first:], futures,
                                        items=rows_of(held))
