"""RL groups: repeated rollouts of a task (a situation) with their pass statistics.

Rollouts pass three gates first, each counted: ``junk`` (it ended on an error, or the agent
never answered), ``do_nothing`` (the agent neither called a tool nor said anything), and
``duplicate`` (the same transcript as an earlier rollout of the task). A group keeps only
tasks whose pass rate lies in the band (20-80% by default): a group that all passes or all
fails carries no gradient. ``prompts/`` holds GRPO rows: the opening a policy is sampled
from (system prompt and the person's first message) with the tools' schemas.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import orjson

from generator.decontaminate import normalise
from generator.exports._base import ExportOptions, FormatResult, sides, write_jsonl
from generator.exports._data import ExportData, ExportRollout


def _gate(row: ExportRollout, seen: set[bytes]) -> str | None:
    agent = [m for m in row.messages if m["role"] == "assistant"]
    if row.error or not agent:
        return "junk"
    if not any(m.get("tool_calls") or str(m.get("content") or "").strip() for m in agent):
        return "do_nothing"
    digest = hashlib.md5(orjson.dumps([[m["role"], normalise(str(m.get("content") or "")),
                                        m.get("tool_calls")] for m in row.messages],
                                      option=orjson.OPT_SORT_KEYS),
                         usedforsecurity=False).digest()
    if digest in seen:
        return "duplicate"
    seen.add(digest)
    return None


def _reward(row: ExportRollout) -> float:
    return row.reward if row.reward is not None else float(row.passed)


def write_rl(data: ExportData, out: Path, options: ExportOptions) -> FormatResult:
    """``groups/`` and ``prompts/`` (GRPO) per side."""
    low, high = options.band
    files: dict[str, int] = {}
    counts: dict[str, Any] = {"band": [low, high]}
    for side, rows in sides(data).items():
        gates: Counter[str] = Counter()
        tasks: dict[str, list[ExportRollout]] = defaultdict(list)
        seen: dict[str, set[bytes]] = defaultdict(set)
        for row in rows:
            gate = _gate(row, seen[row.situation_key])
            if gate:
                gates[gate] += 1
            else:
                tasks[row.situation_key].append(row)
        groups: list[dict[str, Any]] = []
        prompts: list[dict[str, Any]] = []
        outside = 0
        for key in sorted(tasks):
            members = tasks[key]
            passed = sum(1 for r in members if r.passed)
            rate = passed / len(members)
            if len(members) < 2 or not low <= rate <= high:
                outside += 1
                continue
            rewards = [_reward(r) for r in members]
            groups.append({
                "group_id": key, "situation": members[0].situation, "k": len(members),
                "passed": passed, "failed": len(members) - passed,
                "mean": statistics.fmean(rewards), "std": statistics.pstdev(rewards),
                "rollout_ids": [r.rollout_id for r in members], "rewards": rewards})
            for r in members:
                first_user = next((i for i, m in enumerate(r.messages) if m["role"] == "user"), 0)
                prompts.append({"prompt": list(r.messages[:first_user + 1]),
                                "tools": data.tools_of(r), "group_id": key,
                                "rollout_id": r.rollout_id})
        files[f"groups/{side}.jsonl"] = write_jsonl(out / "groups" / f"{side}.jsonl", groups)
        files[f"prompts/{side}.jsonl"] = write_jsonl(out / "prompts" / f"{side}.jsonl",
                                                     prompts)
        counts[side] = {"gates": {g: gates.get(g, 0) for g in ("junk", "do_nothing",
                                                                "duplicate")},
                        "groups": len(groups), "tasks_outside_band": outside}
    return FormatResult(files=files, counts=counts)
