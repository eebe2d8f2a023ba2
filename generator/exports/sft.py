"""SFT chat JSONL: one passing conversation per row, ``messages`` + ``tools`` + ``loss_mask``.

Assistant tool calls carry their arguments as an object (chat templates ``tojson`` them; a
string would be encoded twice), tool results are ``{"role": "tool", "name",
"tool_call_id", "content"}``. ``loss_mask`` has one 0/1 per message: ``per-message`` marks
every assistant message (the agent's turns, never the person's words or the world's
answers); ``final-turn`` marks only the assistant messages after the person's last answered
message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.exports._base import (
    ExportOptions,
    FormatResult,
    LossMask,
    last_answered,
    sides,
    write_jsonl,
)
from generator.exports._data import ChatMessage, ExportData


def loss_mask(messages: tuple[ChatMessage, ...], mode: LossMask) -> list[int]:
    """One 0/1 per message: which messages the loss is computed on."""
    last_user = last_answered(messages)
    return [int(m["role"] == "assistant" and (mode == "per-message" or i > last_user))
            for i, m in enumerate(messages)]


def write_sft(data: ExportData, out: Path, options: ExportOptions) -> FormatResult:
    """``train.jsonl`` and ``held_out.jsonl`` of passing conversations."""
    files: dict[str, int] = {}
    for side, rows in sides(data).items():
        records: list[dict[str, Any]] = [
            {"messages": list(row.messages), "tools": data.tools_of(row),
             "loss_mask": loss_mask(row.messages, options.loss_mask),
             "rollout_id": row.rollout_id}
            for row in rows if row.passed]
        files[f"{side}.jsonl"] = write_jsonl(out / f"{side}.jsonl", records)
    return FormatResult(files=files, counts={"loss_mask": options.loss_mask})
