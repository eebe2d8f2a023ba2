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
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import orjson

from collector.spool import SpooledRequest, SpoolEntry, record_header

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
                             "record_offset": offset, "reason": reason})
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
