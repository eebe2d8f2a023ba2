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
corruption: it is skipped and counted, loudly.
"""

from __future__ import annotations

import logging
import os
import struct
import threading
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


class Spool:
    """An fsync'd append-only request log in segment files under one folder."""

    def __init__(self, folder: Path, segment_bytes: int = 64 * 1024 * 1024) -> None:
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
        self._file = self._path(last).open("ab")
        self._file_start = last

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
        """Write the requests, fsync, and return the new end. Called from one thread."""
        parts: list[bytes] = []
        size = 0
        for request in requests:
            tail = struct.pack("<IBQ", request.items, _SIGNALS[request.signal],
                               request.received_unix_nano)
            crc = zlib.crc32(request.payload, zlib.crc32(tail))
            header = _HEADER.pack(len(request.payload), crc, request.items,
                                  _SIGNALS[request.signal], request.received_unix_nano)
            parts += (header, request.payload)
            size += len(header) + len(request.payload)
        if self._end - self._file_start >= self._segment_bytes:
            self._rotate()
        try:
            self._file.write(b"".join(parts))
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError:
            # Nothing of this group is acknowledged: cut it off so that later records
            # do not follow a partial one.
            self._file.close()
            with self._path(self._file_start).open("r+b") as handle:
                handle.truncate(self._end - self._file_start)
            self._file = self._path(self._file_start).open("ab")
            raise
        with self._lock:
            self._end += size
            self._lock.notify_all()
            return self._end

    def _rotate(self) -> None:
        self._file.close()
        start = self._end
        self._file = self._path(start).open("ab")
        self._file_start = start
        # make the new file's name durable before anything in it is acknowledged
        descriptor = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
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
            doomed = [s for s in self._starts[:-1]
                      if min((n for n in self._starts if n > s), default=s) <= position]
            self._starts = [s for s in self._starts if s not in doomed]
        for start in doomed:
            self._path(start).unlink(missing_ok=True)

    def close(self) -> None:
        """Close the open segment."""
        self._file.close()

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
