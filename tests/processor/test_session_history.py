"""The history axis across a session: a SQL post-pass after every rebuild.

Real spans carrying ``session.id`` and ``gen_ai.conversation.id`` go through the real
collector pipeline into a DuckDB file in tmp_path; :func:`process` then places them.
"""

from __future__ import annotations

import os
from pathlib import Path

from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from processor.run import ProcessOptions, process
from tests.support.otlp import genai_span, kv, trace_request
from tests.support.pipeline import store_requests
from tracemill.store import open_store

T0 = 1_700_000_000_000_000_000
SECOND = 1_000_000_000


def _conversation(conversation: str, session: str | None, start: int, *,
                  reward: float | None = None, tool_error: bool = False) -> bytes:
    """One export request: a chat span (with a reward when given), optionally a failed
    tool call, in conversation ``conversation`` of session ``session``."""
    chat = genai_span(conversation=conversation)
    chat.start_time_unix_nano = start
    chat.end_time_unix_nano = start + SECOND
    if session is not None:
        chat.attributes.append(kv("session.id", session))
    if reward is not None:
        chat.attributes.append(kv("reward", reward))
    spans = [chat]
    if tool_error:
        tool = Span(trace_id=chat.trace_id, span_id=os.urandom(8), parent_span_id=chat.span_id,
                    name="execute_tool lookup_order", kind=Span.SPAN_KIND_INTERNAL,
                    start_time_unix_nano=start + SECOND // 4,
                    end_time_unix_nano=start + SECOND // 2)
        tool.attributes.extend([
            kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "lookup_order"),
            kv("gen_ai.tool.call.id", f"call-{conversation}"),
            kv("gen_ai.tool.call.arguments", '{"order_id": "123"}'),
            kv("error.type", "TimeoutError")])
        tool.status.code = Status.STATUS_CODE_ERROR
        tool.status.message = "lookup_order timed out"
        spans.append(tool)
    return trace_request(spans).SerializeToString()


def _process(db: Path) -> tuple[dict[str, tuple[str, str | None]], int]:
    """Process the store; every conversation's (history, outcome) and rows rebuilt."""
    store = open_store(db)
    try:
        rebuilt = process(store, ProcessOptions(), workers=1).conversations_rebuilt
        rows = store.query("SELECT conversation_id, history, outcome FROM conversations")
        return {conversation: (history, outcome) for conversation, history, outcome in rows}, \
            rebuilt
    finally:
        store.close()


def _histories(db: Path) -> dict[str, str]:
    return {conversation: history for conversation, (history, _) in _process(db)[0].items()}


def test_later_conversations_of_a_session_see_the_earlier_ones(tmp_path: Path) -> None:
    db = tmp_path / "sessions.duckdb"
    store_requests(db, [
        # session s-fail: a failed first visit, then a second and a third
        _conversation("a1", "s-fail", T0, reward=0.0),
        _conversation("a2", "s-fail", T0 + 60 * SECOND, reward=1.0),
        _conversation("a3", "s-fail", T0 + 120 * SECOND),
        # session s-pass: a passing first visit, then a second
        _conversation("b1", "s-pass", T0, reward=1.0),
        _conversation("b2", "s-pass", T0 + 60 * SECOND, reward=1.0),
        # session s-tool: the first passed but its tool call failed
        _conversation("c1", "s-tool", T0, reward=1.0, tool_error=True),
        _conversation("c2", "s-tool", T0 + 60 * SECOND, reward=1.0),
        # no session: later in time than a failure, still fresh
        _conversation("d1", None, T0 + 300 * SECOND, reward=0.0),
        _conversation("d2", None, T0 + 360 * SECOND, reward=1.0),
        # the same start time: the tie is broken by conversation id
        _conversation("e1", "s-tie", T0, reward=0.0),
        _conversation("e2", "s-tie", T0, reward=1.0),
    ])
    rows, rebuilt = _process(db)
    assert rebuilt == 11
    assert rows["a1"] == ("fresh", "fail")
    assert rows["b1"] == ("fresh", "pass")
    assert {key: history for key, (history, _) in rows.items()} == {
        "a1": "fresh", "a2": "prior_failure", "a3": "prior_failure",
        "b1": "fresh", "b2": "repeat_visit",
        "c1": "fresh", "c2": "prior_failure",
        "d1": "fresh", "d2": "fresh",
        "e1": "fresh", "e2": "prior_failure",
    }
    store = open_store(db)
    try:
        kept = dict(store.query("SELECT conversation_id, history_within FROM conversations"))
        before = store.query("SELECT * EXCLUDE (processed_unix_nano) FROM conversations "
                             "ORDER BY conversation_id")
        again = process(store, ProcessOptions(), workers=1)
        after = store.query("SELECT * EXCLUDE (processed_unix_nano) FROM conversations "
                            "ORDER BY conversation_id")
    finally:
        store.close()
    assert set(kept.values()) == {"fresh"}  # the within-conversation values are kept
    assert again.conversations_rebuilt == 0
    assert after == before


def test_a_late_earlier_conversation_updates_the_later_ones(tmp_path: Path) -> None:
    db = tmp_path / "late.duckdb"
    store_requests(db, [_conversation("later", "s", T0 + 60 * SECOND, reward=1.0),
               _conversation("other", "s2", T0 + 60 * SECOND, reward=1.0)])
    assert _histories(db) == {"later": "fresh", "other": "fresh"}

    store_requests(db, [_conversation("earlier", "s", T0, reward=0.0)])
    rows, rebuilt = _process(db)
    assert rebuilt == 1  # only the new conversation is rebuilt; the post-pass does the rest
    assert {key: history for key, (history, _) in rows.items()} == {
        "earlier": "fresh", "later": "prior_failure", "other": "fresh"}

    # an even earlier, passing visit changes nothing for "later" (still after a failure)
    # but the new first visit stays fresh, and a rerun is a no-op
    store_requests(db, [_conversation("first", "s", T0 - 60 * SECOND, reward=1.0)])
    assert _histories(db) == {"first": "fresh", "earlier": "repeat_visit",
                              "later": "prior_failure", "other": "fresh"}
    assert _histories(db) == {"first": "fresh", "earlier": "repeat_visit",
                              "later": "prior_failure", "other": "fresh"}


def test_within_conversation_history_is_kept(tmp_path: Path) -> None:
    """A value placed from the conversation itself wins over the session's."""
    db = tmp_path / "within.duckdb"
    again = genai_span(conversation="again")
    again.start_time_unix_nano = T0 + 60 * SECOND
    again.attributes.append(kv("session.id", "s"))
    again.attributes.append(kv("reward", 1.0))
    for attribute in again.attributes:
        if attribute.key == "gen_ai.input.messages":
            attribute.value.string_value = (
                '[{"role": "user", "parts": [{"type": "text", '
                '"content": "last time you said order 123 shipped"}]}]')
    store_requests(db, [_conversation("first", "s", T0, reward=0.0),
               trace_request([again]).SerializeToString()])
    assert _histories(db) == {"first": "fresh", "again": "repeat_visit"}
    store = open_store(db)
    try:
        within = dict(store.query("SELECT conversation_id, history_within FROM conversations"))
    finally:
        store.close()
    assert within == {"first": "fresh", "again": "repeat_visit"}
