"""``tracemill ingest``: load OTLP files through the same decode path as the receivers.

Accepted files (optionally gzip-compressed, ``.gz``):

* OTLP/JSON: one ``Export*ServiceRequest`` object per file, or JSON lines with one per
  line (what the OpenTelemetry Collector's file exporter writes). The signal of each
  document is read from its top-level key (``resourceSpans`` / ``resourceLogs``).
* OTLP protobuf: one serialized ``Export*ServiceRequest`` per file; protobuf does not say
  which signal it holds, so it is ``traces`` unless the caller says ``logs``.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from collector.checks import NOTHING_REFUSED, Signal
from collector.errors import InvalidRequest
from collector.intake import Intake
from collector.otlp_json import JsonRequest, document_to_protobuf
from tracemill.errors import TracemillError


@dataclass
class FileReport:
    """What one file contributed."""

    path: Path
    """The file."""
    requests: int = 0
    """Export requests read from it."""
    accepted: dict[str, int] = field(default_factory=lambda: {"traces": 0, "logs": 0})
    """Items accepted, per signal (a re-delivered item is stored once)."""
    rejected: dict[str, int] = field(default_factory=lambda: {"traces": 0, "logs": 0})
    """Items refused for unusable content, per signal."""
    problems: list[str] = field(default_factory=list)
    """Why items or documents were refused, each naming where."""


def ingest_file(intake: Intake, path: Path, protobuf_signal: Signal = "traces") -> FileReport:
    """Store every request in ``path``; problems with single documents are reported, not raised.

    Raises TracemillError when the file cannot be read at all.
    """
    report = FileReport(path)
    for where, signal, request in _requests(path, protobuf_signal, report):
        try:
            result = intake.export_blocking(signal, request.payload, "file", peer=where,
                                            refused=request.refused)
        except InvalidRequest as exc:
            report.problems.append(f"{where}: {exc}")
            continue
        report.requests += 1
        report.accepted[signal] += result.accepted
        report.rejected[signal] += result.rejected
        if result.message:
            report.problems.append(f"{where}: {result.message}")
    return report


def _read(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TracemillError(f"{path} does not exist") from None
    except OSError as exc:
        raise TracemillError(f"cannot read {path}: {exc.strerror}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise TracemillError(
                f"{path} looks gzip-compressed but is not valid gzip: {exc}") from None
    return data


def _requests(path: Path, protobuf_signal: Signal,
              report: FileReport) -> Iterator[tuple[str, Signal, JsonRequest]]:
    data = _read(path)
    if data.lstrip()[:1] not in (b"{", b"["):
        yield str(path), protobuf_signal, JsonRequest(data, NOTHING_REFUSED)
        return
    try:
        documents: list[tuple[str, Any]] = [(str(path), orjson.loads(data))]
    except orjson.JSONDecodeError:
        documents = []
        for number, line in enumerate(data.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                documents.append((where, orjson.loads(line)))
            except orjson.JSONDecodeError as exc:
                report.problems.append(f"{where}: not valid JSON ({exc})")
    for where, document in documents:
        for item in document if isinstance(document, list) else [document]:
            signal = _signal_of(item)
            if signal is None:
                report.problems.append(
                    f"{where}: not an OTLP/JSON request (no resourceSpans or resourceLogs)")
                continue
            try:
                yield where, signal, document_to_protobuf(signal, item)
            except InvalidRequest as exc:
                report.problems.append(f"{where}: {exc}")


def _signal_of(document: Any) -> Signal | None:
    if not isinstance(document, dict):
        return None
    if "resourceSpans" in document or "resource_spans" in document:
        return "traces"
    if "resourceLogs" in document or "resource_logs" in document:
        return "logs"
    return None
