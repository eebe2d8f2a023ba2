"""``tracemill label FILE``: outcomes attached after the fact, from CSV or JSON lines.

Each row names its target with ``conversation_id``, ``trace_id`` or (for a generated
conversation, to measure a judge) ``rollout_id``, its verdict with
``passed`` (true/false, pass/fail, 1/0) and/or ``reward`` (a number, compared with the pass
threshold), and who made it: ``kind`` (human, program or model; default human) and
``labeled_by`` (required, or given once with ``--by``). ``note`` is optional. A file with
any bad row is refused whole, naming every bad row.
"""

from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from processor.errors import LabelFileError
from tracemill.store import Store, load_sql

KINDS = ("human", "program", "model")
_TRUE = {"true", "pass", "passed", "1", "yes"}
_FALSE = {"false", "fail", "failed", "0", "no"}


@dataclass(frozen=True)
class LabelRow:
    """One label to store."""

    target: str
    """Conversation id, trace id or rollout id."""
    passed: bool | None
    """The verdict, when given."""
    reward: float | None
    """The reward, when given."""
    kind: str
    """human, program or model."""
    labeled_by: str
    """Who made it."""
    note: str | None
    """Free text."""


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelFileError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelFileError(f"cannot read {path}: {exc}") from None
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise LabelFileError(f"{path}:{number}: not valid JSON ({exc})") from None
            if not isinstance(row, dict):
                raise LabelFileError(f"{path}:{number}: each line must be a JSON object")
            rows.append((number, row))
        return rows
    reader = csv.DictReader(io.StringIO(text))
    return [(number, dict(row)) for number, row in enumerate(reader, start=2)]


def _verdict(value: Any) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"passed must be true/false or pass/fail, got {value!r}")


def read_labels(path: Path, default_by: str | None = None) -> list[LabelRow]:
    """Parse a label file, or raise LabelFileError naming every bad row."""
    labels: list[LabelRow] = []
    problems: list[str] = []
    for number, row in _rows(path):
        where = f"{path}:{number}"
        target = row.get("conversation_id") or row.get("trace_id") or row.get("rollout_id")
        kind = (row.get("kind") or "human").strip().lower()
        by = row.get("labeled_by") or default_by
        try:
            passed = _verdict(row.get("passed"))
            raw_reward = row.get("reward")
            reward = None if raw_reward in (None, "") else float(raw_reward)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if not target:
            problems.append(f"{where}: needs conversation_id, trace_id or rollout_id")
        elif passed is None and reward is None:
            problems.append(f"{where}: needs passed or reward")
        elif kind not in KINDS:
            problems.append(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        elif not by:
            problems.append(f"{where}: needs labeled_by (or pass --by NAME)")
        else:
            labels.append(LabelRow(str(target), passed, reward, kind, str(by),
                                   str(row["note"]) if row.get("note") else None))
    if problems:
        more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
        raise LabelFileError("nothing was stored; fix these rows: "
                             + "; ".join(problems[:20]) + more)
    return labels


def store_labels(store: Store, labels: list[LabelRow], source: Path) -> int:
    """Insert labels; the next processing run folds them into conversations."""
    now = time.time_ns()
    with store.transaction() as cursor:
        for label in labels:
            cursor.execute(load_sql("processor", "insert_label.sql"), [
                label.target, label.passed, label.reward, label.kind, label.labeled_by,
                label.note, str(source), now])
    return len(labels)


def unknown_targets(store: Store, labels: list[LabelRow]) -> list[str]:
    """Targets that name no processed conversation, trace or rollout (a typo, or spans not
    processed yet): the command warns about them."""
    targets = sorted({label.target for label in labels})
    return [row[0] for row in store.query(load_sql("processor", "unknown_targets.sql"),
                                          [targets])]
