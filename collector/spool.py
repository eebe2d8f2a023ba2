"""The spool: an append-only, fsync'd log of accepted export requests.

The collector acknowledges an export once its request is in the spool and the spool is
fsync'd, then turns spooled requests into rows in the background (the materializer), so
the acknowledgement waits on one sequential write instead of on decoding and indexing.
This is the OpenTelemetry Collector's persistent-queue pattern, kept beside the store:
``<db>.spool/``.

Segments are files named by the global byte offset of their first record (20 digits).
A record is a header ``<IIIBQ`` (payload length, CRC32 of everything after the CRC, item
count, signal, received time in ns) followed by the request bytes. A position is a global
offset; the materializer stores the position it has committed in the store, in the same
transaction as the rows, so every record becomes rows exactly once.

A crash can leave a torn record at the end of the last segment: it was never fsync'd, so
never acknowledged, and opening the spool cuts it off. A bad record anywhere else is
corruption: it is skipped and counted, loudly. Records this process appended are not read
back to find them: their places are kept in memory until they are stored (the decoder
still reads the payload, and refuses one that does not parse).
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import threading
import weakref
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger("tracemill.collector.spool")

Signal = Literal["traces", "logs"]
_HEADER = struct.Struct("<IIIBQ")
_SIGNALS: dict[Signal, int] = {"traces": 1, "logs": 2}
_SIGNAL_NAMES: dict[int, Signal] = {code: name for name, code in _SIGNALS.items()}
_SUFFIX = ".seg"
_MAX_RECENT = 100_000
"""Records appended by this process that :meth:`Spool.read` serves without reading them
(beyond, a stalled materializer reads them from the file)."""


@dataclass(frozen=True)
class SpooledRequest:
    """One request as stored in the spool."""

    signal: Signal
    """traces or logs."""
    payload: bytes
    """The protobuf Export*ServiceRequest bytes."""
    items: int
    """Spans or log records it holds (including rejected ones)."""
    received_unix_nano: int
    """When it arrived."""


@dataclass(frozen=True)
class SpoolEntry:
    """Where a spooled request lies, so a worker can read it without a copy in between."""

    signal: Signal
    """traces or logs."""
    path: Path
    """The segment file."""
    offset: int
    """Offset of the payload inside that file."""
    length: int
    """Payload length."""
    items: int
    """Spans or log records in it."""
    received_unix_nano: int
    """When it arrived."""
    end: int
    """Global position just after this record."""

    def read_payload(self) -> bytes:
        """The request bytes."""
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            return handle.read(self.length)


@dataclass(frozen=True)
class SpoolBacklog:
    """Durable requests in a spool beyond a position: acknowledged, not yet rows."""

    folder: Path
    """The spool folder."""
    requests: int
    """Export requests."""
    items: int
    """Spans and log records they hold (including ones rejected at intake)."""
    payload_bytes: int
    """Their request bytes."""


def record_header(request: SpooledRequest) -> bytes:
    """The header that precedes ``request.payload`` in a spool segment (and a dead-letter file)."""
    tail = struct.pack("<IBQ", request.items, _SIGNALS[request.signal],
                       request.received_unix_nano)
    crc = zlib.crc32(request.payload, zlib.crc32(tail))
    return _HEADER.pack(len(request.payload), crc, request.items, _SIGNALS[request.signal],
                        request.received_unix_nano)


def scan_backlog(folder: Path, position: int) -> SpoolBacklog:
    """Count the records after ``position`` without opening the spool for writing.

    Reads headers only (payloads are skipped, a torn tail ends the count), so it is cheap
    even for gigabytes. A position outside the spool counts the whole spool, as the
    materializer would read it all again.
    """
    starts = sorted(int(p.stem) for p in folder.glob("*" + _SUFFIX) if p.stem.isdigit())
    sizes = {start: (folder / f"{start:020d}{_SUFFIX}").stat().st_size for start in starts}
    if not starts or not starts[0] <= position <= starts[-1] + sizes[starts[-1]]:
        position = starts[0] if starts else 0
    requests = items = size = 0
    for start in starts:
        if start + sizes[start] <= position:
            continue
        offset = max(position - start, 0)
        with (folder / f"{start:020d}{_SUFFIX}").open("rb") as handle:
            while offset + _HEADER.size <= sizes[start]:
                handle.seek(offset)
                length, _, count, code, _ = _HEADER.unpack(handle.read(_HEADER.size))
                if code not in _SIGNAL_NAMES or offset + _HEADER.size + length > sizes[start]:
                    break
                requests += 1
                items += count
                size += length
                offset += _HEADER.size + length
    return SpoolBacklog(folder, requests, items, size)


class SpoolInUse(OSError):
    """The spool is already open in this process (another process cannot get this far: it
    holds the store's DuckDB file first)."""


_OPEN_SPOOLS: weakref.WeakValueDictionary[Path, Spool] = weakref.WeakValueDictionary()
"""The spools open in this process, by resolved folder: one writer per spool."""
_OPEN_SPOOLS_LOCK = threading.Lock()


class Spool:
    """An fsync'd append-only request log in segment files under one folder."""

    def __init__(self, folder: Path, segment_bytes: int = 64 * 1024 * 1024) -> None:
        self._key = folder.resolve()
        with _OPEN_SPOOLS_LOCK:
            if self._key in _OPEN_SPOOLS:
                # a store opened twice in this process shares one DuckDB file
                # (tracemill.store); two materializers on one spool could store a record twice
                raise SpoolInUse(
                    f"the spool {folder} is already open in this process (a collector here "
                    "stores it); use that collector's store, or close it first")
            _OPEN_SPOOLS[self._key] = self
        self._fd = -1
        try:
            self._open(folder, segment_bytes)
        except BaseException:
            self.close()
            raise

    def _open(self, folder: Path, segment_bytes: int) -> None:
        self.folder = folder
        self._segment_bytes = segment_bytes
        self._lock = threading.Condition()
        self.corrupt_records = 0
        """Records skipped because their checksum or header was wrong (not torn tails)."""
        folder.mkdir(parents=True, exist_ok=True)
        self._starts = sorted(int(p.stem) for p in folder.glob("*" + _SUFFIX) if p.stem.isdigit())
        if not self._starts:
            self._starts = [0]
            self._path(0).touch()
        last = self._starts[-1]
        valid = self._valid_length(self._path(last))
        with self._path(last).open("r+b") as handle:
            if handle.seek(0, os.SEEK_END) != valid:
                log.warning("cut a torn record off the spool", extra={"fields": {
                    "segment": self._path(last).name, "kept_bytes": valid}})
                handle.truncate(valid)
                handle.flush()
                os.fsync(handle.fileno())
        self._end = last + valid
        self._recent: dict[int, SpoolEntry] = {}
        """The records this process appended and that are not yet released, by position:
        :meth:`read` takes them from here instead of reading and checking them again
        (the CRC of what it wrote and fsync'd itself; ~1.4 CPU-µs a fat span)."""
        self._fd = _open_append(self._path(last))
        self._file_start = last
        self._torn = False
        """Whether a failed append may have left bytes after ``_end`` in the open segment."""

    def _path(self, start: int) -> Path:
        return self.folder / f"{start:020d}{_SUFFIX}"

    @property
    def end(self) -> int:
        """Global position after the last durable record."""
        with self._lock:
            return self._end

    @property
    def start(self) -> int:
        """Global position of the oldest segment still kept."""
        with self._lock:
            return self._starts[0]

    def append(self, requests: list[SpooledRequest]) -> int:
        """Write the requests, fsync, and return the new end. Called from one thread.

        Raises OSError (a full disk, an I/O error) with nothing of this group kept: the
        bytes written are cut off again, so later records never follow a partial one.
        If even the cut fails, it is retried before the next append, and until it
        succeeds every append fails, so the spool stays a valid log.
        """
        parts: list[bytes] = []
        size = 0
        for request in requests:
            header = record_header(request)
            parts += (header, request.payload)
            size += len(header) + len(request.payload)
        # written from the request buffers as they are (writev): joining them first cost
        # a copy and, for a group of megabytes, a fresh allocation's page faults, ~3x the
        # CPU of the write itself (bench/collector_cpu.py, "spool")
        if self._torn:
            self._cut()
        if self._end - self._file_start >= self._segment_bytes:
            self._rotate()
        try:
            _write_all(self._fd, parts)
            os.fsync(self._fd)
        except OSError:
            # Nothing of this group is acknowledged: cut it off now if the disk lets us,
            # else before the next append.
            self._torn = True
            with contextlib.suppress(OSError):
                self._cut()
            raise
        path, position = self._path(self._file_start), self._end
        appended: dict[int, SpoolEntry] = {}  # by the position each record starts at
        for request in requests:
            start, position = position, position + _HEADER.size + len(request.payload)
            appended[start] = SpoolEntry(request.signal, path,
                                         start - self._file_start + _HEADER.size,
                                         len(request.payload), request.items,
                                         request.received_unix_nano, position)
        with self._lock:
            self._end += size
            if len(self._recent) > _MAX_RECENT:  # a stalled materializer: read the file
                self._recent.clear()
            self._recent.update(appended)
            self._lock.notify_all()
            return self._end

    def _cut(self) -> None:
        """Truncate the open segment back to the last durable record."""
        os.ftruncate(self._fd, self._end - self._file_start)
        os.fsync(self._fd)
        self._torn = False

    def _rotate(self) -> None:
        start = self._end
        descriptor = _open_append(self._path(start))
        try:
            # make the new file's name durable before anything in it is acknowledged
            folder = os.open(self.folder, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except OSError:
            os.close(descriptor)
            raise
        os.close(self._fd)
        self._fd = descriptor
        self._file_start = start
        with self._lock:
            self._starts.append(start)

    def wait_beyond(self, position: int, timeout: float) -> bool:
        """Wait until the spool ends after ``position``; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: self._end > position, timeout)

    def read(self, position: int, max_items: int, max_bytes: int) -> list[SpoolEntry]:
        """Durable records from ``position`` on, up to the limits (at least one record)."""
        with self._lock:
            end = self._end
            starts = list(self._starts)
        position = max(position, starts[0])
        entries: list[SpoolEntry] = []
        items = size = 0
        while position < end and (not entries or (items < max_items and size < max_bytes)):
            with self._lock:
                known = self._recent.get(position)
            if known is not None:
                entries.append(known)
                items += known.items
                size += known.length
                position = known.end
                continue
            start = max(s for s in starts if s <= position)
            next_start = min((s for s in starts if s > start), default=end)
            if position >= next_start:
                position = next_start
                continue
            path = self._path(start)
            with path.open("rb") as handle:
                handle.seek(position - start)
                header = handle.read(_HEADER.size)
                if len(header) < _HEADER.size:
                    position = next_start  # end of this segment
                    continue
                length, crc, count, code, received = _HEADER.unpack(header)
                payload = handle.read(length)
                tail = struct.pack("<IBQ", count, code, received)
                if len(payload) < length or zlib.crc32(payload, zlib.crc32(tail)) != crc or (
                        code not in _SIGNAL_NAMES):
                    self.corrupt_records += 1
                    log.error("skipped a corrupt spool segment tail", extra={"fields": {
                        "segment": path.name, "offset": position - start}})
                    position = next_start
                    continue
            record_end = position + _HEADER.size + length
            entries.append(SpoolEntry(_SIGNAL_NAMES[code], path,
                                      position - start + _HEADER.size, length, count,
                                      received, record_end))
            items += count
            size += length
            position = record_end
        return entries

    def release_before(self, position: int) -> None:
        """Delete segments wholly before ``position`` (already materialized)."""
        with self._lock:
            for stored in [p for p in self._recent if p < position]:
                del self._recent[stored]
            doomed = [s for s in self._starts[:-1]
                      if min((n for n in self._starts if n > s), default=s) <= position]
            self._starts = [s for s in self._starts if s not in doomed]
        for start in doomed:
            self._path(start).unlink(missing_ok=True)

    def close(self) -> None:
        """Close the open segment (safe to call twice)."""
        if self._fd >= 0:
            if self._torn:
                with contextlib.suppress(OSError):
                    self._cut()
            os.close(self._fd)
            self._fd = -1
        with _OPEN_SPOOLS_LOCK:
            if _OPEN_SPOOLS.get(self._key) is self:
                del _OPEN_SPOOLS[self._key]

    def _valid_length(self, path: Path) -> int:
        data = path.read_bytes()
        offset = 0
        while offset + _HEADER.size <= len(data):
            length, crc, count, code, received = _HEADER.unpack_from(data, offset)
            end = offset + _HEADER.size + length
            tail = struct.pack("<IBQ", count, code, received)
            payload = data[offset + _HEADER.size:end]
            if end > len(data) or zlib.crc32(payload, zlib.crc32(tail)) != crc:
                break
            offset = end
        return offset


def _open_append(path: Path) -> int:
    """An unbuffered append-only descriptor: a failed write leaves no buffer to re-flush."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


_IOV_MAX = 512
"""Buffers one writev takes at most (Linux allows 1024)."""


def _write_all(descriptor: int, parts: list[bytes]) -> None:
    """Write ``parts`` in order, all of them (a short write goes on where it stopped)."""
    views = [memoryview(part) for part in parts if part]
    while views:
        written = os.writev(descriptor, views[:_IOV_MAX])
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if written:
            views[0] = views[0][written:]
