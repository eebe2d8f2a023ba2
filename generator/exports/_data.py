"""What every export starts from: the stored rollouts, split and decontaminated.

:func:`load_export_data` reads every rollout with its situation's stored side, turns its
transcript into OpenAI chat messages (:func:`generator.rollout_views.chat_messages`, the
conversion ``rollouts show --json`` uses) with tool-call arguments as objects and each
tool result named after its call, leaves out (and counts) what must not be trained or
evaluated on, and decontaminates the training side against the held-out side and the
production conversations it came from.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import duckdb
import orjson

from generator.decontaminate import (
    SEMANTIC_NOT_RUN,
    DecontaminationReport,
    Embedder,
    TextRow,
    decontaminate,
)
from generator.exports._bulk import paused_gc
from generator.rollout_views import chat_messages
from generator.split import SplitError, require_split_table
from tracemill.redact import Redactor
from tracemill.store import load_sql

if TYPE_CHECKING:
    from generator.exports._worlds import TaskWorlds

Side = Literal["train", "held_out"]
ChatMessage = dict[str, Any]
"""One message in OpenAI chat format (JSON by nature: it is what the files hold)."""


@dataclass(frozen=True)
class ExportRollout:
    """One rollout as the exports read it."""

    rollout_id: str
    """``run_id:index``."""
    run_id: str
    """The generation run."""
    situation_key: str
    """The situation's key (what the split is by)."""
    situation: str
    """The situation's label."""
    side: Side
    """train or held_out."""
    passed: bool
    """The grade's verdict."""
    reward: float | None
    """The grade's reward."""
    failure_class: str | None
    """Why it failed."""
    labeled_by: str | None
    """Who graded it (checks stamp plus the grader's)."""
    agent: str
    """The agent backend's spec (the policy)."""
    error: str | None
    """The error that ended it, if any."""
    tool: str | None
    """The tool the person's ask needs (the goal's)."""
    source_conversations: tuple[str, ...]
    """Production conversations it derives from."""
    task_ids: frozenset[str]
    """Its task ids: the goal's digest and its source conversations."""
    messages: tuple[ChatMessage, ...]
    """The conversation in OpenAI chat format, arguments as objects."""
    system_prompt: str
    """The system message the agent was given ('' when none)."""

    @property
    def user_text(self) -> str:
        """What the person wrote, turn by turn."""
        return "\n".join(str(m.get("content") or "") for m in self.messages
                         if m["role"] == "user")


@dataclass(frozen=True)
class ExportData:
    """Rollouts ready to export, with everything the data card reports."""

    train: tuple[ExportRollout, ...]
    """Training rows that survived decontamination."""
    held_out: tuple[ExportRollout, ...]
    """Held-out rows."""
    tools: dict[str, list[dict[str, Any]]]
    """Per run: its tool schemas in OpenAI function format."""
    runs: dict[str, dict[str, Any]]
    """Per run: agent, seed, grader and judge as configured."""
    total: int
    """Rollouts in the store."""
    excluded: dict[str, int]
    """Rollouts left out, per reason (mutation_not_fired, ungraded, unsplit, ...)."""
    decontamination: DecontaminationReport
    """What decontamination removed from the training side, per rule."""
    removed: dict[str, str] = field(default_factory=dict)
    """Training rollouts removed (id -> rule)."""
    split: dict[str, Any] = field(default_factory=dict)
    """The stored split: seed, held-out share, situations per side."""
    worlds: TaskWorlds | None = None
    """The rollouts' worlds grouped into tasks (loaded only for exports that rebuild them:
    :func:`generator.exports._worlds.load_task_worlds`)."""
    redacted: tuple[str, ...] = ()
    """Key patterns whose values were masked in the rows (the ``redact`` setting)."""

    def redact(self, patterns: tuple[str, ...]) -> ExportData:
        """These rows with the values under keys matching ``patterns`` masked in their
        messages and system prompts (:mod:`tracemill.redact`; an echo of a masked value
        elsewhere in the same rollout is masked too)."""
        masker = Redactor(patterns)
        if not masker:
            return self

        def one(row: ExportRollout) -> ExportRollout:
            doc = masker.apply({"messages": [dict(m) for m in row.messages],
                                "system_prompt": row.system_prompt})
            return replace(row, messages=tuple(doc["messages"]),
                           system_prompt=doc["system_prompt"])

        return replace(self, train=tuple(one(r) for r in self.train),
                       held_out=tuple(one(r) for r in self.held_out),
                       redacted=masker.patterns)

    def tools_of(self, row: ExportRollout) -> list[dict[str, Any]]:
        """The tool schemas the row's agent was offered."""
        return self.tools.get(row.run_id, [])


def _openai_tool(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": spec["name"], "description": spec.get("description", ""),
        "parameters": spec.get("parameters") or {"type": "object", "properties": {}}}}


def _training_messages(stored: list[dict[str, Any]]) -> tuple[ChatMessage, ...] | None:
    """Chat messages with arguments as objects and tool results named; None when a call's
    arguments are not a JSON object (nothing to train a tool call on)."""
    out: list[ChatMessage] = []
    names: dict[str, str] = {}
    for message in chat_messages(stored):
        for call in message.get("tool_calls") or ():
            try:
                arguments = orjson.loads(call["function"]["arguments"] or "{}")
            except orjson.JSONDecodeError:
                return None
            if not isinstance(arguments, dict):
                return None
            call["function"]["arguments"] = arguments
            names[call["id"]] = call["function"]["name"]
        if message["role"] == "tool":
            message = {"role": "tool", "name": names.get(message["tool_call_id"], ""),
                       "tool_call_id": message["tool_call_id"],
                       "content": message["content"]}
        out.append(message)
    return tuple(out)


def _system_prompt(messages: tuple[ChatMessage, ...]) -> str:
    first = messages[0] if messages else {}
    return str(first.get("content") or "") if first.get("role") == "system" else ""


def _task_ids(goal: dict[str, Any], sources: tuple[str, ...]) -> frozenset[str]:
    digest = hashlib.md5(orjson.dumps({k: goal.get(k) for k in ("ask", "tool", "facts")},
                                      option=orjson.OPT_SORT_KEYS),
                         usedforsecurity=False).hexdigest()
    return frozenset({f"goal:{digest}", *(f"conversation:{c}" for c in sources)})


def load_export_data(cursor: duckdb.DuckDBPyConnection,
                     embedder: Embedder | None = None,
                     why_not: str = SEMANTIC_NOT_RUN) -> ExportData:
    """Read, filter, split and decontaminate every stored rollout (the semantic rule only
    with an ``embedder``; ``why_not`` says why there is none)."""
    with paused_gc():
        return _load(cursor, embedder, why_not)


def _load(cursor: duckdb.DuckDBPyConnection, embedder: Embedder | None,
          why_not: str) -> ExportData:
    require_split_table(cursor)
    rows = cursor.execute(load_sql("generator", "export_rollouts.sql")).fetchall()
    if not rows:
        raise SplitError("no rollouts to export: run `tracemill generate --agent offline` "
                         "first, then `tracemill split`")
    if all(row[4] is None for row in rows):
        raise SplitError("no stored split: run `tracemill split` first (it decides which "
                         "situations are held out)")
    excluded: Counter[str] = Counter()
    kept: list[ExportRollout] = []
    for (rollout_id, run_id, key, label, side, graded, passed, reward, failure_class,
         labeled_by, agent, fired, error, messages, lineage_text, goal_text) in rows:
        if fired is False:
            excluded["mutation_not_fired"] += 1
            continue
        if not graded or passed is None:
            excluded["ungraded"] += 1
            continue
        if side is None:
            excluded["unsplit"] += 1
            continue
        chat = _training_messages(orjson.loads(messages))
        if chat is None:
            excluded["malformed_arguments"] += 1
            continue
        lineage = orjson.loads(lineage_text)
        goal = orjson.loads(goal_text)
        sources = tuple(lineage.get("source_conversations") or ())
        kept.append(ExportRollout(
            rollout_id=rollout_id, run_id=run_id, situation_key=key, situation=label,
            side=side, passed=bool(passed), reward=reward, failure_class=failure_class,
            labeled_by=labeled_by, agent=agent, error=error, tool=goal.get("tool"),
            source_conversations=sources, task_ids=_task_ids(goal, sources),
            messages=chat, system_prompt=_system_prompt(chat)))
    runs: dict[str, dict[str, Any]] = {}
    tools: dict[str, list[dict[str, Any]]] = {}
    for run_id, tools_json, agent, seed, grader, judge in cursor.execute(
            load_sql("generator", "export_runs.sql")).fetchall():
        tools[run_id] = [_openai_tool(spec) for spec in orjson.loads(tools_json)]
        runs[run_id] = {"agent": agent, "seed": seed, "grader": grader, "judge": judge}
    held_out = tuple(row for row in kept if row.side == "held_out")
    train = [row for row in kept if row.side == "train"]
    held_sources = sorted({c for row in held_out for c in row.source_conversations})
    reference = [TextRow(row.rollout_id, row.task_ids, row.user_text) for row in held_out]
    reference += [TextRow(conversation_id, frozenset({f"conversation:{conversation_id}"}),
                          "\n".join(turns or ()))
                  for conversation_id, turns in cursor.execute(
                      load_sql("generator", "export_sources.sql"), [held_sources]).fetchall()]
    removed, report = decontaminate(
        [TextRow(row.rollout_id, row.task_ids, row.user_text) for row in train], reference,
        embedder, why_not)
    seed, share, held_situations, train_situations, by_signature = cursor.execute(
        load_sql("generator", "export_split.sql")).fetchone() or (None, None, 0, 0, 0)
    split = {"seed": seed, "held_out_share": share, "held_out_situations": held_situations,
             "train_situations": train_situations,
             "held_out_first_by_signature": by_signature}
    return ExportData(
        split=split, train=tuple(row for row in train if row.rollout_id not in removed),
        held_out=held_out, tools=tools, runs=runs, total=len(rows), excluded=dict(excluded),
        decontamination=report, removed=removed)


__all__ = ["ChatMessage", "ExportData", "ExportRollout", "Side", "load_export_data"]
