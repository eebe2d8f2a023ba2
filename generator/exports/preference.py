"""Preference pairs: a passing and a failing rollout of the same situation and ask.

Rollouts pair within one situation, one asked tool and one system prompt; each rollout is
used once (passing and failing ones are zipped in a seeded order), so pairs grow linearly
with rows. Rollouts that opened with the same
words pair first. The prompt is what both sides truly share: the system prompt, and the
person's first message when both opened with it (``same_opening``; the same plan item run
against two agents, say); otherwise the whole conversation after the system prompt is the
completion. Each pair records both grades,
the margin, whether one policy wrote both sides, and the length difference; when chosen
is longer in more than 70% of pairs the export refuses (a trainer would learn "longer is
better") unless ``--allow-length-bias``, and then says so loudly.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.decontaminate import normalise
from generator.exports._base import (
    ExportError,
    ExportOptions,
    FormatResult,
    sides,
    text_length,
    write_jsonl,
)
from generator.exports._data import ChatMessage, ExportData, ExportRollout

LENGTH_BIAS = 0.7
"""Share of pairs with a longer chosen side above which the export refuses."""


@dataclass(frozen=True)
class Pair:
    """One preference pair."""

    prompt: list[ChatMessage]
    """The messages both sides share."""
    chosen: ExportRollout
    """The passing rollout."""
    rejected: ExportRollout
    """The failing rollout."""

    @property
    def chosen_messages(self) -> list[ChatMessage]:
        """The chosen side after the shared prompt."""
        return list(self.chosen.messages[len(self.prompt):])

    @property
    def rejected_messages(self) -> list[ChatMessage]:
        """The rejected side after the shared prompt."""
        return list(self.rejected.messages[len(self.prompt):])

    @property
    def shares_the_ask(self) -> bool:
        """Both sides opened with the same words (the prompt ends with the person's ask);
        otherwise only the system prompt is shared, which TRL's templates refuse."""
        return bool(self.prompt) and self.prompt[-1]["role"] == "user"

    @property
    def length_difference(self) -> int:
        """Characters of chosen minus characters of rejected."""
        return text_length(self.chosen_messages) - text_length(self.rejected_messages)


def _order(seed: int, rollout_id: str) -> str:
    return hashlib.md5(f"{seed}|{rollout_id}".encode(), usedforsecurity=False).hexdigest()


def _prompt(a: ExportRollout, b: ExportRollout) -> list[ChatMessage]:
    shared: list[ChatMessage] = []
    for x, y in zip(a.messages, b.messages, strict=False):
        if x["role"] == "assistant" or x["role"] != y["role"] or \
                normalise(str(x.get("content") or "")) != normalise(str(y.get("content") or "")):
            break
        shared.append(x)
        if x["role"] == "user":
            break
    return shared


def make_pairs(rows: tuple[ExportRollout, ...], seed: int) -> list[Pair]:
    """Pairs of one side's rows (see the module's docstring)."""
    groups: dict[tuple[str, str, str], list[ExportRollout]] = defaultdict(list)
    for row in rows:
        groups[(row.situation_key, row.tool or "", row.system_prompt)].append(row)
    pairs: list[Pair] = []
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda r: _order(seed, r.rollout_id))
        # rollouts that opened with the same words pair first: their prompt is that opening
        openings: dict[str, list[ExportRollout]] = defaultdict(list)
        for row in members:
            openings[_opening(row)].append(row)
        left: list[ExportRollout] = []
        for opening in sorted(openings):
            left += _zip(openings[opening], pairs)
        _zip(left, pairs)
    return pairs


def _opening(row: ExportRollout) -> str:
    return next((normalise(str(m.get("content") or "")) for m in row.messages
                 if m["role"] == "user"), "")


def _zip(members: list[ExportRollout], pairs: list[Pair]) -> list[ExportRollout]:
    """Pair passing with failing members in order; returns the members left unpaired."""
    passing = [r for r in members if r.passed]
    failing = [r for r in members if not r.passed]
    for chosen, rejected in zip(passing, failing, strict=False):
        prompt = _prompt(chosen, rejected)
        if prompt:
            pairs.append(Pair(prompt, chosen, rejected))
    n = min(len(passing), len(failing))
    return passing[n:] + failing[n:]


def length_bias(pairs: list[Pair], options: ExportOptions) -> tuple[str, ...]:
    """Refuse (or, when allowed, warn) when chosen is longer in most pairs."""
    if not pairs:
        return ("no preference pairs: no situation has both a passing and a failing "
                "rollout of the same ask on this side",)
    longer = sum(1 for p in pairs if p.length_difference > 0) / len(pairs)
    if longer <= LENGTH_BIAS:
        return ()
    message = (f"chosen is longer than rejected in {longer:.0%} of {len(pairs)} pairs (over "
               f"{LENGTH_BIAS:.0%}): a trainer would learn that longer is better")
    if not options.allow_length_bias:
        raise ExportError(message + "; pass --allow-length-bias to write them anyway")
    return ("LENGTH BIAS: " + message + " (written because of --allow-length-bias)",)


def _grade(row: ExportRollout) -> dict[str, Any]:
    return {"rollout_id": row.rollout_id, "passed": row.passed, "reward": row.reward,
            "failure_class": row.failure_class, "labeled_by": row.labeled_by,
            "agent": row.agent}


def _reward(row: ExportRollout) -> float:
    return row.reward if row.reward is not None else float(row.passed)


def pair_record(pair: Pair, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A pair with everything a reader needs to trust it."""
    return {"prompt": pair.prompt, "chosen": pair.chosen_messages,
            "rejected": pair.rejected_messages, "tools": tools,
            "situation": pair.chosen.situation,
            "chosen_grade": _grade(pair.chosen), "rejected_grade": _grade(pair.rejected),
            "margin": _reward(pair.chosen) - _reward(pair.rejected),
            "same_policy": pair.chosen.agent == pair.rejected.agent,
            "same_opening": pair.shares_the_ask,
            "length_difference": pair.length_difference}


def write_preference(data: ExportData, out: Path, options: ExportOptions) -> FormatResult:
    """``train.jsonl`` and ``held_out.jsonl`` of pairs with their grades."""
    files: dict[str, int] = {}
    counts: dict[str, Any] = {}
    warnings: list[str] = []
    for side, rows in sides(data).items():
        pairs = make_pairs(rows, options.seed)
        warnings += [f"{side}: {w}" for w in length_bias(pairs, options)]
        files[f"{side}.jsonl"] = write_jsonl(
            out / f"{side}.jsonl",
            (pair_record(p, data.tools_of(p.chosen)) for p in pairs))
        counts[f"{side}_pairs"] = len(pairs)
        counts[f"{side}_same_policy"] = sum(1 for p in pairs
                                            if p.chosen.agent == p.rejected.agent)
        counts[f"{side}_chosen_longer"] = sum(1 for p in pairs if p.length_difference > 0)
        counts[f"{side}_same_opening"] = sum(1 for p in pairs if p.shares_the_ask)
    return FormatResult(files=files, counts=counts, warnings=tuple(warnings))
