"""The materializer: spooled requests → rows in the store, exactly once.

One thread reads durable records from the spool, has them decoded by a pool of worker
processes (decoding is CPU-bound Python; in processes it runs beside the receivers and
the DuckDB insert instead of sharing one interpreter lock), and inserts each group with
an anti-join that drops re-delivered items (see ``collector/sql/insert_spans.sql``), in one
transaction that
also records the spool position reached. While one group is inserted the next is being
decoded. Segments wholly behind the committed position are deleted.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from collector.decode import DecodedBatch, decode
from collector.metrics import Metrics
from collector.spool import Spool, SpoolEntry
from tracemill.store import Store, load_sql
from tracemill.workers import worker_pool

log = logging.getLogger("tracemill.collector.materializer")

_INSERTS = {"traces": ("insert_spans.sql", "start_time_unix_nano"),
            "logs": ("insert_log_records.sql", "time_unix_nano")}
_MAX_GROUP_BYTES = 64 * 1024 * 1024


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


@dataclass
class _Group:
    entries: list[SpoolEntry]
    futures: list[Future[DecodedBatch]]


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
        self._insert_sql = {signal: (load_sql("collector", name), column)
                            for signal, (name, column) in _INSERTS.items()}
        self.failing: str | None = None
        """The last store error while it persists (None when commits succeed)."""
        position, commits = store.query("SELECT position, commits FROM collector_spool_cursor")[0]
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
                if group is None:
                    if not self._spool.wait_beyond(self.position, 0.2):
                        continue
                    group = self._next_group(self.position)
                # decode the next group while this one is inserted
                following = None
                end = group.entries[-1].end
                if self._spool.end > end:
                    following = self._next_group(end)
                if self._commit(cursor, group):
                    group = following
                else:
                    for future in (following.futures if following else []):
                        future.cancel()
                    group = None
                    self._stop.wait(1.0)
        finally:
            cursor.close()

    def _next_group(self, position: int) -> _Group:
        entries = self._spool.read(position, self._max_items, _MAX_GROUP_BYTES)
        return _Group(entries, [self._decoders.submit(entry) for entry in entries])

    def _commit(self, cursor: duckdb.DuckDBPyConnection, group: _Group) -> bool:
        try:
            batches = [future.result() for future in group.futures]
        except BrokenProcessPool:
            log.error("a decode worker died; starting new workers and decoding again")
            self._decoders.restart()
            return False
        started = time.perf_counter()
        end = group.entries[-1].end
        try:
            stored = self._insert(cursor, batches, end, self._commits + 1)
        except duckdb.Error as exc:
            self.failing = str(exc)
            log.error("storing spooled requests failed; retrying", extra={"fields": {
                "error": str(exc), "backlog_bytes": self.backlog()}})
            return False
        self.failing = None
        self._commits += 1
        self._metrics.observe_store(time.perf_counter() - started)
        for signal, (inserted, offered) in stored.items():
            self._metrics.add_items(signal, "stored", inserted)
            self._metrics.add_items(signal, "duplicates", offered - inserted)
        with self._progress:
            self._position = end
            self._progress.notify_all()
        self._spool.release_before(end)
        return True

    def _insert(self, cursor: duckdb.DuckDBPyConnection, batches: list[DecodedBatch],
                end: int, sequence: int) -> dict[str, tuple[int, int]]:
        stored: dict[str, tuple[int, int]] = {}
        cursor.begin()
        try:
            now = time.time_ns()
            for signal, (sql, time_column) in self._insert_sql.items():
                mine = [batch for batch in batches if batch.signal == signal]
                if not mine:
                    continue
                rows = pa.concat_tables([batch.rows for batch in mine])
                inserted = 0
                if rows.num_rows:
                    bounds = pc.min_max(rows[time_column])
                    cursor.register("incoming_rows", rows)
                    try:
                        result = cursor.execute(sql, [bounds["min"].as_py(),
                                                      bounds["max"].as_py(),
                                                      sequence]).fetchone()
                    finally:
                        cursor.unregister("incoming_rows")
                    inserted = int(result[0]) if result else 0
                cursor.execute(self._commit_sql, [
                    now, signal, len(mine), sum(batch.received for batch in mine), inserted,
                    rows.num_rows - inserted, sum(batch.rejected for batch in mine),
                    sum(batch.payload_bytes for batch in mine), end,
                ])
                stored[signal] = (inserted, rows.num_rows)
            cursor.execute("UPDATE collector_spool_cursor SET position = ?, commits = ?",
                           [end, sequence])
            cursor.commit()
        except BaseException:
            cursor.rollback()
            raise
        return stored
