"""Training and evaluation exports (``tracemill export --format NAME --out DIR``).

Each format is one module and one entry of :data:`FORMATS`; :func:`export` reads the
store (split and decontaminated, see :mod:`generator.exports._data`), writes the format's
files under ``out`` and the data card beside them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb

from generator.decontaminate import SEMANTIC_NOT_RUN, Embedder
from generator.exports._base import Exporter, ExportError, ExportOptions, FormatResult
from generator.exports._bulk import paused_gc
from generator.exports._card import write_card
from generator.exports._data import ExportData, ExportRollout, load_export_data
from generator.exports._worlds import load_task_worlds
from generator.exports.parquet import write_parquet
from generator.exports.preference import write_preference
from generator.exports.rl import write_rl
from generator.exports.sft import write_sft
from generator.exports.trl import write_trl
from generator.exports.verifiers import write_verifiers

FORMATS: dict[str, Exporter] = {
    "sft": write_sft,
    "trl": write_trl,
    "preference": write_preference,
    "rl": write_rl,
    "parquet": write_parquet,
    "verifiers": write_verifiers,
}
"""Export formats by name."""
NEEDS_WORLDS = frozenset({"verifiers"})
"""Formats that rebuild the rollouts' worlds (the plan items of their runs)."""


def exporter(name: str) -> Exporter:
    """The format called ``name``, or an :class:`ExportError` naming the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ExportError(f"unknown export format {name!r}: use one of "
                          + ", ".join(sorted(FORMATS))) from None


def export(cursor: duckdb.DuckDBPyConnection, name: str, out: Path,
           options: ExportOptions, data: ExportData | None = None,
           embedder: Embedder | None = None,
           why_not: str = SEMANTIC_NOT_RUN) -> dict[str, Any]:
    """Write one format and its data card under ``out``; returns the card (``why_not``:
    what the card says when there is no ``embedder``)."""
    write = exporter(name)
    with paused_gc():
        data = data if data is not None else load_export_data(cursor, embedder, why_not)
        data = data.redact(options.redact)
        if name in NEEDS_WORLDS and data.worlds is None:
            data = replace(data, worlds=load_task_worlds(cursor, data))
        out.mkdir(parents=True, exist_ok=True)
        result = write(data, out, options)
        return write_card(data, name, result, out)


__all__ = ["FORMATS", "ExportData", "ExportError", "ExportOptions", "ExportRollout",
           "Exporter", "FormatResult", "export", "exporter", "load_export_data"]
