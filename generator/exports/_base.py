"""What every export format shares: its options, its result, the protocol and JSONL writing."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson

from generator.errors import GeneratorError
from generator.exports._data import ChatMessage, ExportData, ExportRollout

LossMask = Literal["per-message", "final-turn"]


class ExportError(GeneratorError):
    """An export would be misleading or cannot be written (names the fix)."""


@dataclass(frozen=True)
class ExportOptions:
    """Choices an export takes from the command line."""

    loss_mask: LossMask = "per-message"
    """SFT: train on every agent turn, or only on the final one."""
    seed: int = 0
    """Seed of pairings and orders."""
    allow_length_bias: bool = False
    """Preference: write pairs even when chosen is longer in most of them (warned loudly)."""
    band: tuple[float, float] = (0.2, 0.8)
    """RL: the pass-rate band a group must lie in to carry a gradient."""
    redact: tuple[str, ...] = ()
    """Key patterns whose values are masked in every row (the ``redact`` setting)."""


@dataclass(frozen=True)
class FormatResult:
    """What one format wrote."""

    files: dict[str, int]
    """File (relative to the output folder) -> rows written."""
    counts: dict[str, Any] = field(default_factory=dict)
    """Format-specific counts the data card reports (pairs, groups, gates...)."""
    warnings: tuple[str, ...] = ()
    """Loud notes about the data written."""


class Exporter(Protocol):
    """One export format: writes files under ``out`` from the prepared data."""

    def __call__(self, data: ExportData, out: Path, options: ExportOptions) -> FormatResult:
        """Write the format's files; raise :class:`ExportError` rather than mislead."""
        ...


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write one JSON object per line; returns the rows written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("wb") as handle:
        for row in rows:
            handle.write(orjson.dumps(row))
            handle.write(b"\n")
            count += 1
    return count


def sides(data: ExportData) -> dict[str, tuple[ExportRollout, ...]]:
    """The rows of each side, by file stem."""
    return {"train": data.train, "held_out": data.held_out}


def last_answered(messages: tuple[ChatMessage, ...]) -> int:
    """Index of the person's last message the agent answered (-1: none); a closing
    message nobody answered ("thanks, bye") does not count."""
    last = answered = -1
    for i, m in enumerate(messages):
        if m["role"] == "user":
            last = i
        elif m["role"] == "assistant" and last >= 0:
            answered = last
    return answered


def split_at_last_user(messages: tuple[ChatMessage, ...]
                       ) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """(prompt, completion): everything through the person's last answered message, and the
    agent's answer to it (assistant messages and the tool results they called for); an
    unanswered closing message is dropped."""
    last = last_answered(messages)
    if last < 0:
        return list(messages), []
    end = len(messages)
    while end > last + 1 and messages[end - 1]["role"] == "user":
        end -= 1
    return list(messages[:last + 1]), list(messages[last + 1:end])


def text_length(messages: Iterable[ChatMessage]) -> int:
    """Characters of content and tool-call arguments (what a length bias is measured on)."""
    total = 0
    for m in messages:
        total += len(str(m.get("content") or ""))
        for call in m.get("tool_calls") or ():
            total += len(orjson.dumps(call["function"]["arguments"]))
    return total
