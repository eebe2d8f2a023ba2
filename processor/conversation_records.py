"""Processed conversations as users see them: ``tracemill conversations`` and exports.

:class:`ConversationRecord` is one row of the conversations table as ``conversations
--json`` prints it: the ordered exchange in OpenAI chat format (``messages``, ready for
exports: ``tool_calls`` with ``arguments`` as sent, tool results with ``tool_call_id``),
every tool called (``tools``) and the focal step, the steps, evaluations and outcome, the
six coordinates, and the situations it belongs to.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
from pydantic import BaseModel, Field

from tracemill.store import load_sql

__all__ = ["ConversationRecord", "read_conversations"]


class ConversationRecord(BaseModel):
    """One processed conversation, in full."""

    conversation_id: str = Field(description="gen_ai.conversation.id / session.id / ..., "
                                             "else the trace id.")
    model_version: str | None = Field(description="The model version it ran on.")
    outcome: str | None = Field(description="pass, fail, or None (ungraded).")
    outcome_source: str | None = Field(description="Which label, evaluation or attribute "
                                                   "decided the outcome.")
    reward: float | None = Field(description="The score behind the outcome, when numeric.")
    labeled_by: str | None = Field(description="Who made the deciding label.")
    first_ask: str | None = Field(description="The first user message (None: not captured).")
    final_reply: str | None = Field(description="The last assistant text.")
    messages: list[dict[str, Any]] = Field(
        description="The ordered exchange in OpenAI chat format (system, user, assistant "
                    "with tool_calls, tool with tool_call_id), each message once.")
    steps: list[dict[str, Any]] = Field(description="Tool calls bound to their results.")
    tools: list[str] | None = Field(description="Every tool called, in order of first call.")
    focal_step: int | None = Field(description="Index in steps of where it went wrong.")
    evaluations: list[dict[str, Any]] = Field(description="Every evaluation result read.")
    errors: list[str] = Field(description="Failed model calls and agent runs.")
    tool: str = Field(description="Coordinate: the focal tool.")
    tool_condition: str = Field(description="Coordinate: what the tools answered.")
    world_state: str = Field(description="Coordinate: the state of what was acted on.")
    history: str = Field(description="Coordinate: what came before the failure point.")
    user_stance: str = Field(description="Coordinate: how the person behaved.")
    policy_rule: str = Field(description="Coordinate: the policy rule at stake.")
    situations: list[str] = Field(description="Ids of the situations it is a member of.")
    trace_ids: list[str] = Field(description="Source traces, in time order.")
    session_id: str | None = Field(description="session.id, when recorded apart.")
    input_tokens: int | None = Field(description="Tokens in (model calls, counted once).")
    output_tokens: int | None = Field(description="Tokens out.")
    content_missing: bool = Field(description="Some content was not captured.")
    start_unix_nano: int = Field(description="When it started.")
    end_unix_nano: int = Field(description="When it ended.")


_JSON_COLUMNS = ("messages", "steps", "evaluations")


def read_conversations(cursor: duckdb.DuckDBPyConnection, *, outcome: str | None = None,
                       version: str | None = None, tool: str | None = None,
                       situation: str | None = None, conversation_id: str | None = None,
                       limit: int = 50) -> list[ConversationRecord]:
    """Processed conversations matching every filter given, newest first."""
    relation = cursor.execute(load_sql("processor", "list_conversations.sql"),
                              [outcome, version, tool, situation, conversation_id, limit])
    names = [column[0] for column in relation.description or ()]
    records = []
    for row in relation.fetchall():
        values = dict(zip(names, row, strict=True))
        for name in _JSON_COLUMNS:
            text = values[name]
            values[name] = json.loads(text) if text is not None else []
        records.append(ConversationRecord(**values))
    return records
