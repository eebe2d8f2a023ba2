"""Storing situations and their members (``situations``, ``situation_members``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import duckdb
import orjson
import pyarrow as pa

from tracemill.store import load_sql

if TYPE_CHECKING:
    from processor.situations import Situation

__all__ = ["store_situations"]

_SITUATION_COLUMNS = (
    "situation_id", "label", "coordinates", "latest_version", "previous_version",
    "conversations", "graded_latest", "failed_latest", "graded_previous", "failed_previous",
    "fail_rate_latest", "low_latest", "high_latest", "fail_rate_previous", "low_previous",
    "high_previous", "baseline_latest", "baseline_previous", "diff_low", "diff_high",
    "p_value", "compared", "status", "reason", "low_support", "priority", "budget_share",
    "cells", "computed_unix_nano", "judged_without")


def store_situations(cursor: duckdb.DuckDBPyConnection, situations: Sequence[Situation],
                     latest: str | None, previous: str | None) -> None:
    """Replace the situations and their members (inside the caller's transaction).

    Members are every conversation matching all coordinates, with its period and outcome,
    and whether it is the situation's own (a member of none of the situations it was judged
    without) (needs ``conversation_coordinates`` and ``conversation_periods``)."""
    now = time.time_ns()
    cursor.execute("DELETE FROM situation_members")
    cursor.execute("DELETE FROM situations")
    if not situations:
        return
    rows = []
    for s in situations:
        difference = s.difference or (None, None)
        rows.append((
            s.situation_id, s.label,
            orjson.dumps([{"axis": a, "value": v} for a, v in s.coordinates]).decode(),
            latest, previous, s.conversations, s.graded_latest, s.failed_latest,
            s.graded_previous, s.failed_previous, s.fail_rate_latest, *s.interval_latest,
            s.fail_rate_previous, *s.interval_previous, s.baseline_latest,
            s.baseline_previous, *difference, s.p_value, s.compared, s.status, s.reason,
            s.low_support, s.priority, s.budget_share, orjson.dumps(list(s.cells)).decode(),
            now, orjson.dumps(list(s.judged_without)).decode()))
    table = pa.Table.from_pylist([dict(zip(_SITUATION_COLUMNS, row, strict=True))
                                  for row in rows])
    coordinates = pa.Table.from_pylist([
        {"situation_id": s.situation_id, "axis": a, "value": v, "size": len(s.coordinates)}
        for s in situations for a, v in s.coordinates])
    inside = pa.Table.from_pylist(
        [{"situation_id": s.situation_id, "inner_id": inner}
         for s in situations for inner in s.judged_without],
        schema=pa.schema([("situation_id", pa.string()), ("inner_id", pa.string())]))
    cursor.register("new_situations", table)
    cursor.register("situation_coordinates", coordinates)
    cursor.register("situation_inside", inside)
    try:
        cursor.execute(load_sql("processor", "insert_situations.sql"))
        cursor.execute(load_sql("processor", "insert_situation_members.sql"))
    finally:
        cursor.unregister("new_situations")
        cursor.unregister("situation_coordinates")
        cursor.unregister("situation_inside")
