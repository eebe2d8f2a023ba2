"""Dead letters: spooled requests that can never become rows, moved aside.

The intake checks every request before acknowledging it, so a spooled request should
always decode. If one does not (a decoder bug, a spool written by an older collector
that checked less), retrying it would block every request behind it forever. The
materializer instead copies it here and goes on:

* ``dead-letter.records`` (in the spool folder): the requests, in the spool's record
  format (header ``<IIIBQ`` + request bytes), so they can be inspected or replayed;
* ``dead-letter.jsonl``: one line per request: its spool position (``end``), signal, item
  count, where its record starts in ``dead-letter.records``, and why it failed.

Both are fsync'd before the store's cursor moves past the request, and the positions are
read back at start, so a request is moved aside once and never retried.

``tracemill dead-letters`` (:mod:`collector.commands`) lists them
(:func:`read_dead_letters`), replays them through the current decoder (:func:`replay`), or
discards them. A replayed letter is recorded in the store (``collector_replayed_dead_letters``)
in the transaction of its rows and its ``collector_commits`` row, and leaves the files only
afterwards: a replay repeated after a crash between the two finds it recorded and only
removes it, so nothing, rows or bookkeeping, is stored twice.

Removing entries rewrites the index atomically (a temporary file renamed over it); the
requests that stay are first copied into a new records file the new index names
(``records`` in each line; a line without it means ``dead-letter.records``), so the index
never points into a file being rewritten, whenever a crash comes. Files the index no
longer names are deleted afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa

from collector.decode import DecodedBatch, decode_chunks
from collector.insert import InsertStatement, insert_rows, insert_statement
from collector.spool import Signal, SpooledRequest, SpoolEntry, record_header
from tracemill.store import Store, load_sql

log = logging.getLogger("tracemill.collector.dead_letters")

RECORDS = "dead-letter.records"
"""The file of moved-aside requests, in the spool folder."""
INDEX = "dead-letter.jsonl"
"""Their index (one JSON object a line), in the spool folder."""


class DeadLetters:
    """The requests of one spool that were moved aside (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._ends: set[int] = set()
        index = folder / INDEX
        if index.exists():
            self._cut_torn_line(index)
            for number, line in enumerate(index.read_bytes().splitlines(), 1):
                try:
                    self._ends.add(int(orjson.loads(line)["end"]))
                except (ValueError, KeyError, TypeError):  # damaged: that request is retried
                    log.warning("skipping a damaged line of the dead-letter index",
                                extra={"fields": {"file": str(index), "line": number}})

    @staticmethod
    def _cut_torn_line(index: Path) -> None:
        """Cut a last line a crash or a full disk left without its newline (that request
        was not moved aside yet), so the next line starts on a line of its own."""
        data = index.read_bytes()
        whole = len(data[:data.rfind(b"\n") + 1])
        if whole < len(data):
            with index.open("r+b") as handle:
                handle.truncate(whole)

    @property
    def count(self) -> int:
        """Requests moved aside so far (across restarts)."""
        with self._lock:
            return len(self._ends)

    def __contains__(self, entry: SpoolEntry) -> bool:
        with self._lock:
            return entry.end in self._ends

    def add(self, entry: SpoolEntry, payload: bytes, reason: str) -> None:
        """Copy one spooled request aside (fsync'd) and log it once, loudly.

        Raises OSError when the copy cannot be written (then nothing is skipped).
        """
        if entry in self:
            return
        request = SpooledRequest(entry.signal, payload, entry.items, entry.received_unix_nano)
        records = self.folder / RECORDS
        with records.open("ab") as handle:
            offset = handle.tell()
            handle.write(record_header(request) + payload)
            handle.flush()
            os.fsync(handle.fileno())
        line = orjson.dumps({"end": entry.end, "signal": entry.signal, "items": entry.items,
                             "received_unix_nano": entry.received_unix_nano,
                             "record_offset": offset, "reason": reason,
                             "moved_unix_nano": time.time_ns(),
                             "payload_bytes": len(payload)})
        index = self.folder / INDEX
        if index.exists():
            self._cut_torn_line(index)
        with index.open("ab") as handle:
            handle.write(line + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        with self._lock:
            self._ends.add(entry.end)
            count = len(self._ends)
        log.error("a spooled request cannot be decoded; moved it aside to the dead-letter file "
                  "and went on (its items are not stored; inspect or replay it from there)",
                  extra={"fields": {"reason": reason, "signal": entry.signal,
                                    "items": entry.items, "spool_position": entry.end,
                                    "dead_letter_file": str(records),
                                    "dead_letters": count}})


_HEADER = struct.Struct("<IIIBQ")
_MAX_REASON = 500
"""Characters of an error kept in the index (a decoder's message may quote a few bytes)."""


@dataclass(frozen=True)
class DeadLetter:
    """One moved-aside request, as its index line and record header describe it."""

    end: int
    """Its position in the spool it came from (identifies it)."""
    signal: Signal
    """traces or logs."""
    items: int
    """Spans or log records it holds."""
    received_unix_nano: int
    """When the collector acknowledged it."""
    moved_unix_nano: int | None
    """When it was moved aside (None: by a collector that did not record it)."""
    payload_bytes: int | None
    """Size of the request (None: its record is missing or damaged)."""
    reason: str
    """Why it could not be decoded (the last attempt's error)."""
    records: str
    """The file in the spool folder that holds its record."""
    record_offset: int
    """Where its record (header + request) starts in that file."""
    damaged: str | None = None
    """Why its record cannot be read back (None: it can)."""

    def read_payload(self, folder: Path) -> bytes:
        """The request bytes, checked against the record's checksum.

        Raises DeadLetterDamaged when the record is missing, cut short or changed.
        """
        payload = _read_record(folder / self.records, self.record_offset)
        if isinstance(payload, str):
            raise DeadLetterDamaged(payload)
        return payload

    def line(self) -> bytes:
        """Its index line (without the newline)."""
        return orjson.dumps({
            "end": self.end, "signal": self.signal, "items": self.items,
            "received_unix_nano": self.received_unix_nano, "records": self.records,
            "record_offset": self.record_offset, "reason": self.reason,
            "moved_unix_nano": self.moved_unix_nano, "payload_bytes": self.payload_bytes})


class DeadLetterDamaged(Exception):
    """A dead letter's record cannot be read back (the message says how it is damaged)."""


@dataclass(frozen=True)
class DeadLetterIndex:
    """What the dead-letter files of one spool folder hold."""

    folder: Path
    """The spool folder."""
    letters: tuple[DeadLetter, ...]
    """The moved-aside requests, oldest first."""
    damaged_lines: int
    """Index lines that could not be read (a request whose line is damaged is not
    skipped by the collector: it is decoded again, or moved aside again)."""


def read_dead_letters(folder: Path) -> DeadLetterIndex:
    """The dead letters of the spool folder ``folder``, read without changing anything.

    A last line without its newline (a collector writing it right now, or a crash) is
    left out; record headers are read, payloads are not.
    """
    index = folder / INDEX
    try:
        data = index.read_bytes()
    except FileNotFoundError:
        return DeadLetterIndex(folder, (), 0)
    letters: dict[int, DeadLetter] = {}
    damaged = 0
    for line in data[:data.rfind(b"\n") + 1].splitlines():
        try:
            fields = orjson.loads(line)
            records = str(fields.get("records", RECORDS))
            offset = int(fields["record_offset"])
            letter = DeadLetter(
                end=int(fields["end"]), signal=_signal(fields["signal"]),
                items=int(fields["items"]),
                received_unix_nano=int(fields["received_unix_nano"]),
                moved_unix_nano=_optional_int(fields.get("moved_unix_nano")),
                payload_bytes=None, reason=str(fields["reason"]), records=records,
                record_offset=offset)
            if os.sep in records or records in ("", ".", ".."):
                raise ValueError(f"records file {records!r} is not in the spool folder")
        except (ValueError, KeyError, TypeError, AttributeError):
            damaged += 1
            continue
        size, problem = _record_size(folder / records, offset)
        letters.setdefault(letter.end, replace(letter, payload_bytes=size, damaged=problem))
    return DeadLetterIndex(folder, tuple(letters.values()), damaged)


def keep_only(index: DeadLetterIndex, kept: list[DeadLetter], *,
              drop_damaged: bool = False) -> None:
    """Leave only ``kept`` (letters of ``index``, possibly with new reasons) in the folder.

    Only while nothing else writes the dead-letter files (the caller holds the store, so
    no collector runs on this spool). Crash-safe: see the module docstring. Records files
    stay when the index had damaged lines, unless ``drop_damaged`` (a discard): their
    requests may be in them, and a damaged line is no reason to lose acknowledged bytes.
    """
    folder = index.folder
    fresh = None
    if not kept:
        (folder / INDEX).unlink(missing_ok=True)
        _fsync_folder(folder)
    else:
        fresh = f"dead-letter.{time.time_ns()}.records"
        moved: list[DeadLetter] = []
        with (folder / fresh).open("xb") as handle:
            for letter in kept:
                try:
                    payload = letter.read_payload(folder)
                except DeadLetterDamaged:  # nothing to copy: keep the line, pointing nowhere
                    moved.append(replace(letter, records=fresh, record_offset=-1))
                    continue
                offset = handle.tell()
                handle.write(record_header(SpooledRequest(
                    letter.signal, payload, letter.items, letter.received_unix_nano))
                    + payload)
                moved.append(replace(letter, records=fresh, record_offset=offset))
            handle.flush()
            os.fsync(handle.fileno())
        _replace(folder / INDEX, b"".join(letter.line() + b"\n" for letter in moved))
    if index.damaged_lines and not drop_damaged:
        _fsync_folder(folder)
        return
    # no line names these any more (a crash before this point leaves them for next time)
    for path in folder.glob("dead-letter*.records"):
        if path.name != fresh:
            path.unlink(missing_ok=True)
    _fsync_folder(folder)


def _replace(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` atomically (a fsync'd temporary file renamed over it)."""
    temporary = path.with_name(path.name + ".new")
    with temporary.open("wb") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _read_record(path: Path, offset: int) -> bytes | str:
    """The payload of the record at ``offset``, or why it cannot be read."""
    if offset < 0:
        return "its record was lost when the dead letters were rewritten"
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            header = handle.read(_HEADER.size)
            if len(header) < _HEADER.size:
                return f"{path.name} ends before its record"
            length, crc, count, code, received = _HEADER.unpack(header)
            payload = handle.read(length)
    except FileNotFoundError:
        return f"{path.name} is missing"
    except OSError as exc:
        return f"cannot read {path.name}: {exc.strerror}"
    tail = struct.pack("<IBQ", count, code, received)
    if len(payload) < length or zlib.crc32(payload, zlib.crc32(tail)) != crc:
        return f"its record in {path.name} is cut short or damaged (checksum mismatch)"
    return payload


def _record_size(path: Path, offset: int) -> tuple[int | None, str | None]:
    """(payload bytes, None), or (None, why the record is unreadable), from its header."""
    if offset < 0:
        return None, "its record was lost when the dead letters were rewritten"
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(offset)
            header = handle.read(_HEADER.size)
    except FileNotFoundError:
        return None, f"{path.name} is missing"
    except OSError as exc:
        return None, f"cannot read {path.name}: {exc.strerror}"
    if len(header) < _HEADER.size:
        return None, f"{path.name} ends before its record"
    length = _HEADER.unpack(header)[0]
    if offset + _HEADER.size + length > size:
        return None, f"{path.name} ends inside its record"
    return length, None


def _signal(value: object) -> Signal:
    if value == "traces":
        return "traces"
    if value == "logs":
        return "logs"
    raise ValueError(f"unknown signal {value!r}")


def _optional_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def short_reason(error: BaseException) -> str:
    """How a decoding error is recorded: its type and message, cut to a few hundred
    characters (never the request itself)."""
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= _MAX_REASON else text[:_MAX_REASON - 3] + "..."


@dataclass
class ReplayReport:
    """What :func:`replay` did."""

    replayed: int = 0
    """Dead letters that decoded and were stored (and removed from the files)."""
    stored_before: int = 0
    """Of those, the ones an interrupted replay had stored already (only removed now)."""
    failing: list[DeadLetter] = field(default_factory=list)
    """Dead letters that still cannot be decoded (they stay, with the new error)."""
    stored: dict[str, int] = field(default_factory=lambda: {"traces": 0, "logs": 0})
    """New rows, per signal."""
    duplicates: dict[str, int] = field(default_factory=lambda: {"traces": 0, "logs": 0})
    """Items already stored (a replay repeated after a crash), per signal."""
    rejected: dict[str, int] = field(default_factory=lambda: {"traces": 0, "logs": 0})
    """Items refused for their content (bad ids, kinds), per signal."""


class _StillUndecodable(Exception):
    """Decoding a dead letter failed again (the message is its new reason)."""


_NOT_THE_REQUEST = (OSError, MemoryError, duckdb.Error)
"""Failures that say nothing about the request: they stop the replay, nothing is changed."""


def replay(store: Store, folder: Path, max_items: int) -> ReplayReport:
    """Decode every dead letter of ``folder`` again and store what now decodes in ``store``.

    Each request is stored in a transaction of its own through the materializer's insert
    (items already stored are dropped), with a ``collector_commits`` row, so ``tracemill
    stats`` counts it like any export, and a ``collector_replayed_dead_letters`` row; then
    it leaves the dead-letter files. A letter that row names (a replay stored it and
    crashed before the files changed) is not stored again, only removed. Requests that
    still fail stay with their new error. The caller holds ``store`` for writing, so no
    collector uses the spool.

    Raises duckdb.Error or OSError when the store cannot be written (what was stored
    before that has left the dead-letter files; the rest stays).
    """
    index = read_dead_letters(folder)
    report = ReplayReport()
    kept: list[DeadLetter] = []
    statements = {signal: insert_statement(signal) for signal in ("traces", "logs")}
    cursor = store.cursor()
    done = 0
    try:
        for letter in index.letters:
            try:
                payload = letter.read_payload(folder)
                stored = _store_one(cursor, statements[letter.signal], letter, payload,
                                    max_items)
            except DeadLetterDamaged as exc:
                kept.append(replace(letter, damaged=str(exc)))
            except _StillUndecodable as exc:
                kept.append(replace(letter, reason=str(exc)))
            else:
                report.replayed += 1
                if stored is None:
                    report.stored_before += 1
                else:
                    offered, inserted, rejected = stored
                    report.stored[letter.signal] += inserted
                    report.duplicates[letter.signal] += offered - inserted
                    report.rejected[letter.signal] += rejected
            done += 1
    finally:
        cursor.close()
        if index.letters:
            kept += index.letters[done:]  # not tried: a store error stopped the replay
            keep_only(index, kept)
    report.failing = [letter for letter in kept if letter.damaged is None]
    report.failing += [letter for letter in kept if letter.damaged is not None]
    return report


def stored_by_replay(store: Store, index: DeadLetterIndex) -> set[int]:
    """Spool positions (``end``) of the letters of ``index`` that a replay stored and was
    interrupted before removing them (the next replay only removes them). A letter whose
    record cannot be read back is not among them; a store older than the table holds none.
    """
    found: set[int] = set()
    cursor = store.cursor()
    try:
        for letter in index.letters:
            try:
                payload = letter.read_payload(index.folder)
            except DeadLetterDamaged:
                continue
            try:
                if _replayed(cursor, _identity(letter, payload)):
                    found.add(letter.end)
            except duckdb.CatalogException:  # written before migration 002: none recorded
                return set()
    finally:
        cursor.close()
    return found


def _store_one(cursor: duckdb.DuckDBPyConnection, statement: InsertStatement,
               letter: DeadLetter, payload: bytes,
               max_items: int) -> tuple[int, int, int] | None:
    """Store one request in its own transaction; (rows offered, rows new, items refused),
    or None when a replay stored it before (nothing is written)."""
    identity = _identity(letter, payload)
    cursor.begin()
    try:
        if _replayed(cursor, identity):
            cursor.rollback()
            return None
        position, sequence = _take_commit_number(cursor)
        received = rejected = payload_bytes = offered = inserted = 0
        waiting: list[pa.Table] = []
        for batch in _decoded(letter, payload, max_items):
            received += batch.received
            rejected += batch.rejected
            payload_bytes += batch.payload_bytes
            offered += batch.rows.num_rows
            waiting.append(batch.rows)
            if sum(table.num_rows for table in waiting) >= max_items:
                inserted += insert_rows(cursor, statement, waiting, sequence)
                waiting = []
        inserted += insert_rows(cursor, statement, waiting, sequence)
        cursor.execute(load_sql("collector", "record_commit.sql"), [
            time.time_ns(), letter.signal, 1, received, inserted, offered - inserted,
            rejected, payload_bytes, position])
        cursor.execute(load_sql("collector", "record_replayed_dead_letter.sql"),
                       [*identity, time.time_ns()])
        cursor.commit()
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # a failed COMMIT ended it already
            cursor.rollback()
        raise
    return offered, inserted, rejected


def _identity(letter: DeadLetter, payload: bytes) -> list[int]:
    """What ``collector_replayed_dead_letters`` knows a letter by."""
    return [letter.end, letter.received_unix_nano, zlib.crc32(payload)]


def _replayed(cursor: duckdb.DuckDBPyConnection, identity: list[int]) -> bool:
    """Whether a replay stored the letter of this identity already."""
    ((recorded,),) = cursor.execute(load_sql("collector", "replayed_dead_letter.sql"),
                                    identity).fetchall()
    return bool(recorded)


def _take_commit_number(cursor: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(the spool cursor's position, the number of this commit), counting the commit in
    the cursor, inside the caller's transaction. The only place this module touches
    ``collector_spool_cursor`` (rows carry the commit number as ``ingest_seq``)."""
    # the collector's migration inserts the first row; each commit appends one
    ((position, commits),) = cursor.execute(load_sql("collector", "spool_cursor.sql")
                                            ).fetchall()
    sequence = int(commits) + 1
    cursor.execute(load_sql("collector", "record_cursor.sql"), [int(position), sequence])
    return int(position), sequence


def _decoded(letter: DeadLetter, payload: bytes, max_items: int) -> Iterator[DecodedBatch]:
    """The request's batches; a decoding failure raises _StillUndecodable."""
    batches = decode_chunks(letter.signal, payload, letter.received_unix_nano, max_items)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except _NOT_THE_REQUEST:
            raise
        except Exception as exc:
            raise _StillUndecodable(short_reason(exc)) from exc
        yield batch
