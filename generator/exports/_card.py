"""The data card every export carries: ``data_card.json`` and ``DATA_CARD.md``.

It says what the export holds and what it left out: rollouts per side, pass rates, who
graded them (grader and judge stamps), which runs and production conversations they came
from, the split, the decontamination report (rules run and not run, rows removed per
rule), rollouts whose mutation did not fire (left out and counted), and the format's own
counts and warnings. The system prompt(s) and tool schemas are written beside it
(``system_prompts.json``, ``tools.json``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from generator.exports._base import FormatResult
from generator.exports._data import ExportData, ExportRollout


def _side(rows: tuple[ExportRollout, ...]) -> dict[str, Any]:
    passed = sum(1 for r in rows if r.passed)
    return {"rollouts": len(rows), "passed": passed, "failed": len(rows) - passed,
            "pass_rate": passed / len(rows) if rows else None,
            "situations": len({r.situation_key for r in rows})}


def build_card(data: ExportData, fmt: str, result: FormatResult) -> dict[str, Any]:
    """The card as JSON-able data."""
    rows = data.train + data.held_out
    prompts = sorted({r.system_prompt for r in rows})
    return {
        "format": fmt,
        "files": result.files,
        "rollouts_in_store": data.total,
        "left_out": {
            **{k: data.excluded.get(k, 0) for k in ("mutation_not_fired", "ungraded",
                                                    "unsplit", "malformed_arguments")},
            "decontaminated": len(data.removed)},
        "train": _side(data.train),
        "held_out": _side(data.held_out),
        "graded_by": dict(Counter(r.labeled_by or "unknown" for r in rows).most_common()),
        "runs": {run: info for run, info in data.runs.items()
                 if any(r.run_id == run for r in rows)},
        "lineage": {"runs": len({r.run_id for r in rows}),
                    "source_conversations": len({c for r in rows
                                                 for c in r.source_conversations}),
                    "agents": sorted({r.agent for r in rows})},
        "split": {"by": "situation (cell or explored axes + mutation kind, world state, "
                        "faults); never prompt text", **data.split},
        "decontamination": data.decontamination.to_json(),
        "redacted_keys": list(data.redacted),
        "system_prompts": len(prompts),
        "tools": sorted({t["function"]["name"] for r in rows for t in data.tools_of(r)}),
        "format_counts": result.counts,
        "warnings": list(result.warnings) + (
            [f"{data.excluded['unsplit']} rollouts arrived after the split and are left "
             "out: run `tracemill split` again to place them"]
            if data.excluded.get("unsplit") else []),
    }


def _markdown(card: dict[str, Any]) -> str:
    train, held = card["train"], card["held_out"]

    def rate(side: dict[str, Any]) -> str:
        return "n/a" if side["pass_rate"] is None else f"{side['pass_rate']:.1%}"

    decon = card["decontamination"]
    lines = [
        f"# Data card: {card['format']} export", "",
        f"- rollouts in the store: {card['rollouts_in_store']}",
        f"- train: {train['rollouts']} rollouts over {train['situations']} situations, "
        f"pass rate {rate(train)}",
        f"- held out: {held['rollouts']} rollouts over {held['situations']} situations, "
        f"pass rate {rate(held)}",
        "- left out: " + ", ".join(f"{k} {v}" for k, v in card["left_out"].items()),
        "- graded by: " + ", ".join(f"{k} ({v})" for k, v in card["graded_by"].items()),
        f"- lineage: {card['lineage']['runs']} runs, "
        f"{card['lineage']['source_conversations']} production conversations, agents "
        + ", ".join(card["lineage"]["agents"]),
        f"- split: {card['split']['by']}; seed {card['split']['seed']}, held-out share "
        f"{card['split']['held_out_share']}, {card['split']['held_out_situations']} held-out "
        f"and {card['split']['train_situations']} training situations",
        f"- decontamination: rules run {', '.join(decon['rules_run'])}; removed "
        + ", ".join(f"{k} {v}" for k, v in decon["removed"].items())
        + f" of {decon['checked']} training rows"
        + (f" (semantic rule embedded by {decon['embedder']})" if decon["embedder"] else ""),
    ]
    lines += [f"- **{note}**" for note in decon["not_run"]]
    lines += ["", "## Files", ""] + [f"- `{f}`: {n} rows" for f, n in card["files"].items()]
    if card["warnings"]:
        lines += ["", "## Warnings", ""] + [f"- **{w}**" for w in card["warnings"]]
    return "\n".join(lines) + "\n"


def write_card(data: ExportData, fmt: str, result: FormatResult, out: Path) -> dict[str, Any]:
    """Write the card, the system prompts and the tool schemas; returns the card."""
    card = build_card(data, fmt, result)
    rows = data.train + data.held_out
    tools: dict[str, dict[str, Any]] = {}
    for r in rows:
        for t in data.tools_of(r):
            tools.setdefault(t["function"]["name"], t)
    (out / "data_card.json").write_bytes(orjson.dumps(card, option=orjson.OPT_INDENT_2))
    (out / "DATA_CARD.md").write_text(_markdown(card), encoding="utf-8")
    (out / "tools.json").write_bytes(orjson.dumps(sorted(tools.values(),
                                                         key=lambda t: t["function"]["name"]),
                                                  option=orjson.OPT_INDENT_2))
    (out / "system_prompts.json").write_bytes(
        orjson.dumps(sorted({r.system_prompt for r in rows}), option=orjson.OPT_INDENT_2))
    return card
