"""Parquet that Hugging Face ``datasets`` reads as it was exported.

One file per side, one row per graded rollout (passing and failing, with the grade
columns). Tool-call ``arguments`` and ``tools`` are DuckDB ``JSON`` columns: Parquet
carries them as JSON, Arrow reads them as its JSON extension type, and each row keeps
exactly its own keys (a struct column would make Arrow merge every row's fields and pad
the missing ones with nulls).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from generator.exports._base import ExportOptions, FormatResult, sides
from generator.exports._data import ExportData, ExportRollout
from tracemill.store import load_sql

_CALL = pa.struct([("id", pa.string()), ("type", pa.string()),
                   ("function", pa.struct([("name", pa.string()),
                                           ("arguments", pa.string())]))])
_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string()), ("name", pa.string()),
                      ("tool_call_id", pa.string()), ("tool_calls", pa.list_(_CALL))])
_SCHEMA = pa.schema([("rollout_id", pa.string()), ("run_id", pa.string()),
                     ("side", pa.string()), ("situation", pa.string()),
                     ("passed", pa.bool_()), ("reward", pa.float64()),
                     ("failure_class", pa.string()), ("labeled_by", pa.string()),
                     ("messages", pa.list_(_MESSAGE)), ("tools", pa.string())])


def _message(m: dict[str, Any]) -> dict[str, Any]:
    calls = m.get("tool_calls")
    return {"role": m["role"], "content": m.get("content"), "name": m.get("name"),
            "tool_call_id": m.get("tool_call_id"),
            "tool_calls": None if calls is None else [
                {"id": c["id"], "type": c["type"],
                 "function": {"name": c["function"]["name"],
                              "arguments": orjson.dumps(c["function"]["arguments"]).decode()}}
                for c in calls]}


def _table(data: ExportData, rows: tuple[ExportRollout, ...]) -> pa.Table:
    return pa.Table.from_pylist([{
        "rollout_id": r.rollout_id, "run_id": r.run_id, "side": r.side,
        "situation": r.situation, "passed": r.passed, "reward": r.reward,
        "failure_class": r.failure_class, "labeled_by": r.labeled_by,
        "messages": [_message(m) for m in r.messages],
        "tools": orjson.dumps(data.tools_of(r)).decode()} for r in rows], schema=_SCHEMA)


def write_parquet(data: ExportData, out: Path, options: ExportOptions) -> FormatResult:
    """``train.parquet`` and ``held_out.parquet``."""
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, int] = {}
    connection = duckdb.connect()
    try:
        for side, rows in sides(data).items():
            table = _table(data, rows)
            connection.register("export_rows", table)
            connection.sql(load_sql("generator", "export_parquet.sql")).write_parquet(
                str(out / f"{side}.parquet"))
            connection.unregister("export_rows")
            files[f"{side}.parquet"] = len(rows)
    finally:
        connection.close()
    return FormatResult(files=files)
