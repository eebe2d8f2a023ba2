"""Cutting the materializer's transactions to whole row groups (see the module docstring
of :mod:`collector.materializer`): the rows waiting to be inserted, per request, and which
of them to hold back for the next transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from collector.decode import DecodedBatch


@dataclass
class Tally:
    """What one commit stored of one signal (for collector_commits and the metrics)."""

    requests: int = 0
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

    def remove(self, batch: DecodedBatch, rows: int) -> None:
        """Take out a request whose ``rows`` were held back for the next commit (its
        counts go with the commit that stores its last rows)."""
        self.requests -= 1
        self.received -= batch.received
        self.rejected -= batch.rejected
        self.payload_bytes -= batch.payload_bytes
        self.rows -= rows


@dataclass
class Part:
    """Rows of one batch waiting to be inserted."""

    index: int
    """Its request's index in the group."""
    batch: DecodedBatch
    """The batch (its counts)."""
    rows: pa.Table
    """Its rows not inserted yet."""


def rows_of(parts: list[Part]) -> int:
    return sum(part.rows.num_rows for part in parts)


def take(parts: list[Part], count: int | None) -> list[pa.Table]:
    """The first ``count`` rows of ``parts`` (all when None), removed from them."""
    if count is None:
        tables = [part.rows for part in parts]
        parts.clear()
        return tables
    tables = []
    while count > 0 and parts:
        part = parts[0]
        if part.rows.num_rows <= count:
            tables.append(part.rows)
            count -= part.rows.num_rows
            parts.pop(0)
        else:
            tables.append(part.rows.slice(0, count))
            part.rows = part.rows.slice(count)
            count = 0
    return tables


def held_back(parts: list[Part], align: int, tally: Tally,
              futures: Sequence[object | None]) -> list[Part]:
    """The waiting parts to hold back so that the transaction stores whole row groups of
    ``align`` rows (taken out of ``tally``); none when it would store no whole row group or
    they lie in a request decoded in chunks."""
    keep = rows_of(parts) % align
    if not keep or tally.rows - keep < align:
        return []
    held: list[Part] = []
    remaining = keep
    for part in reversed(parts):
        if remaining <= 0:
            break
        held.insert(0, part)
        remaining -= part.rows.num_rows
    if any(futures[part.index] is None for part in held):
        return []
    # the first held part may be partly inserted: only its last rows are held
    overshoot = -remaining
    first = held[0]
    held[0] = Part(first.index, first.batch, first.rows.slice(overshoot))
    for part in held:
        tally.remove(part.batch, part.rows.num_rows)
    return held
