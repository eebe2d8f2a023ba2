"""TRL's dataset formats, each row exactly in one of the column sets TRL accepts.

- ``messages/``: ``{messages, tools}`` (language modelling; passing conversations)
- ``prompt_completion/``: ``{prompt, completion}`` (passing conversations cut after the
  person's last message)
- ``preference/``: ``{prompt, chosen, rejected}`` (conversational; pairs as in
  :mod:`generator.exports.preference` whose two sides opened with the same ask, with its
  length-bias refusal)
- ``kto/``: ``{prompt, completion, label}`` (passing and failing conversations)

Each folder holds ``train.jsonl`` and ``held_out.jsonl``; the tool schemas are in the
export's ``tools.json`` (TRL's prompt-completion and preference columns have no place
for them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.exports._base import (
    ExportOptions,
    FormatResult,
    sides,
    split_at_last_user,
    write_jsonl,
)
from generator.exports._data import ExportData
from generator.exports.preference import length_bias, make_pairs


def write_trl(data: ExportData, out: Path, options: ExportOptions) -> FormatResult:
    """The four TRL folders."""
    files: dict[str, int] = {}
    warnings: list[str] = []
    for side, rows in sides(data).items():
        pairs = make_pairs(rows, options.seed)
        warnings += [f"{side}: {w}" for w in length_bias(pairs, options)]
        passing = [row for row in rows if row.passed]
        cut = {row.rollout_id: split_at_last_user(row.messages) for row in rows}
        outputs: dict[str, list[dict[str, Any]]] = {
            "messages": [{"messages": list(row.messages), "tools": data.tools_of(row)}
                         for row in passing],
            "prompt_completion": [
                {"prompt": cut[row.rollout_id][0], "completion": cut[row.rollout_id][1]}
                for row in passing if cut[row.rollout_id][1]],
            "preference": [{"prompt": p.prompt, "chosen": p.chosen_messages,
                            "rejected": p.rejected_messages} for p in pairs
                           if p.shares_the_ask],
            "kto": [{"prompt": cut[row.rollout_id][0], "completion": cut[row.rollout_id][1],
                     "label": row.passed} for row in rows if cut[row.rollout_id][1]],
        }
        if apart := sum(1 for p in pairs if not p.shares_the_ask):
            warnings.append(f"{side}: {apart} of {len(pairs)} preference pairs opened with "
                            "different words and are left out of preference/ (TRL needs a "
                            "prompt ending in the person's ask); the preference format "
                            "keeps them")
        for name, records in outputs.items():
            files[f"{name}/{side}.jsonl"] = write_jsonl(out / name / f"{side}.jsonl", records)
    return FormatResult(files=files, warnings=tuple(warnings))
