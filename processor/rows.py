"""One chunk of conversations: the rows fetched for them → their rows of the conversations table.

:func:`build_chunk` takes the spans, log records and labels of a set of conversations as
Arrow tables (as :mod:`processor.rebuild` fetches them) and returns the conversations'
rows as an Arrow table (as the conversations table is written). It is pure and both ends
are Arrow so that it can run in a worker process: an Arrow table crosses a process
boundary as a few buffers, where Python rows were pickled and unpickled object by object
(when the main process did that, it was a third of a full build's time).
"""

from __future__ import annotations

import gc
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from importlib.machinery import ModuleSpec
from operator import attrgetter
from types import ModuleType
from typing import Any

import orjson
import pyarrow as pa

from processor.assemble import assemble
from processor.axes import Situation, policy_rule, situate, user_turn_steps
from processor.options import ProcessOptions
from processor.outcomes import Label, decide, unread_scores
from processor.records import LogRow, SpanRow
from processor.transcript import chat_messages_json

__all__ = ["COLUMNS", "ChunkInput", "build_chunk", "build_chunk_in_worker"]


@dataclass(frozen=True)
class ChunkInput:
    """The rows fetched for one chunk of conversations (picklable for worker processes)."""

    spans: pa.Table
    """chunk_spans.sql rows: the conversation id, then :class:`SpanRow`'s fields in order
    (attributes and events as JSON text)."""
    logs: pa.Table | None
    """chunk_logs.sql rows; None when the chunk has none."""
    labels: pa.Table | None
    """chunk_labels.sql rows, newest first; None when the chunk has none."""


COLUMNS: tuple[str, ...] = (
    "conversation_id", "trace_ids", "session_id", "user_id", "first_ask", "user_turns",
    "assistant_turns", "final_reply", "steps", "errors", "input_tokens", "output_tokens",
    "agent_name", "model_version", "model_version_source", "content_missing",
    "start_unix_nano", "end_unix_nano", "outcome", "reward", "outcome_source", "labeled_by",
    "evaluations", "failure_class", "tool", "tool_condition", "world_state", "history",
    "user_stance", "policy_rule", "tools", "focal_step", "score_attributes",
    "processed_unix_nano", "messages", "history_within")
"""The conversations table's columns, in the order :func:`build_chunk` fills them."""


def _columns(table: pa.Table | None) -> list[list[Any]]:
    return [] if table is None else [column.to_pylist() for column in table.columns]


_SPAN_FIELDS = tuple(field.name for field in fields(SpanRow))
# A frozen dataclass's __init__ sets each of SpanRow's 21 fields through
# object.__setattr__; filling the new instance's __dict__ gives the same object several
# times faster. Done only while SpanRow is a plain dataclass whose __init__ does nothing else.
_FAST_SPAN_ROW = (not hasattr(SpanRow, "__post_init__") and "__slots__" not in vars(SpanRow)
                  and all(field.init for field in fields(SpanRow)))
_new = object.__new__
_set = object.__setattr__


def _span_groups(spans: pa.Table) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of chunk_spans.sql by conversation id (in order of first row): each row
    the values of :class:`SpanRow`'s fields, attributes and events still JSON text.

    The JSON is parsed one conversation at a time (:func:`_span_row`), just before the
    conversation is built: the parsed attributes of a whole chunk were most of a worker's
    memory (~200 MB for 5,000 conversations), those of one conversation are nothing.
    """
    grouped: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    columns = _columns(spans)
    if columns:
        for conversation_id, values in zip(columns[0], zip(*columns[1:], strict=True),
                                           strict=True):
            grouped[conversation_id].append(values)
    return grouped


def _span_row(values: tuple[Any, ...], attributes: int, events: int) -> SpanRow:
    """One span from its :func:`_span_groups` values (``attributes`` and ``events``: the
    positions of those two JSON texts)."""
    parsed = list(values)
    parsed[attributes] = orjson.loads(parsed[attributes])
    value = parsed[events]
    parsed[events] = () if value == "[]" else tuple(orjson.loads(value))
    if _FAST_SPAN_ROW:
        span = _new(SpanRow)
        _set(span, "__dict__", dict(zip(_SPAN_FIELDS, parsed, strict=True)))
        return span
    return SpanRow(*parsed)


def build_chunk(chunk: ChunkInput, options: ProcessOptions, now: int) -> pa.Table | None:
    """The conversations table's rows for one chunk (None when it has no spans)."""
    with _collector_paused():
        return _build_chunk(chunk, options, now)


def build_chunk_in_worker(chunk: ChunkInput, options: ProcessOptions,
                          now: int) -> pa.Table | None:
    """:func:`build_chunk` in a worker process of :mod:`processor.rebuild`, which does
    nothing else: pandas is made unimportable there first (:class:`_NoPandas`)."""
    if "pandas" not in sys.modules and not any(isinstance(finder, _NoPandas)
                                               for finder in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())
    return build_chunk(chunk, options, now)


class _NoPandas:
    """An import hook that refuses pandas.

    pyarrow imports pandas the first time it turns a Python list into an array (to ask
    whether the list is a pandas object): ~50 MB in each worker process for a library
    tracemill never uses. Refused, pyarrow takes it as absent and goes on.
    """

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not loaded in conversation workers",
                                      name=name)
        return None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for a while.

    A chunk makes millions of small objects that live until it is done, none of them in
    a reference cycle: the collector's full passes over them took 10-15% of the time and
    find nothing. It is switched back on (unless something else had switched it off)
    when the chunk is done, and collects then whatever cycles were made meanwhile.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _build_chunk(chunk: ChunkInput, options: ProcessOptions, now: int) -> pa.Table | None:
    groups = _span_groups(chunk.spans)
    # positions among the values after the conversation id (the first column)
    attributes_at, events_at = (chunk.spans.schema.get_field_index(name) - 1
                                for name in ("attributes", "events"))
    logs: dict[str, list[LogRow]] = defaultdict(list)
    for trace_id, span_id, at, event_name, body, attributes in zip(*_columns(chunk.logs),
                                                                   strict=True):
        logs[span_id].append(LogRow(trace_id, span_id, at, event_name,
                                    _json(body) if body is not None else None,
                                    _json(attributes)))
    labels: dict[str, list[Label]] = defaultdict(list)
    for conversation_id, passed, reward, kind, by, _ in zip(*_columns(chunk.labels), strict=True):
        labels[conversation_id].append(Label(passed, reward, kind, by))
    rows = []
    for conversation_id in list(groups):  # popped as built: their JSON text goes too
        members = [_span_row(values, attributes_at, events_at)
                   for values in groups.pop(conversation_id)]
        rows.append(_conversation_row(conversation_id, sorted(members, key=_span_time), logs,
                                      labels.get(conversation_id, []), options, now))
    if not rows:
        return None
    return pa.table(dict(zip(COLUMNS, map(list, zip(*rows, strict=True)), strict=True)))


_span_time = attrgetter("start_unix_nano", "end_unix_nano", "span_id")
"""Spans come in no particular order: time order, ties broken the same way every run."""


def _json(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str) else value


_SITUATION_FIELDS = tuple(field.name for field in fields(Situation))


def _conversation_row(conversation_id: str, spans: list[SpanRow],
                      logs: dict[str, list[LogRow]], labels: list[Label],
                      options: ProcessOptions, now: int) -> tuple[Any, ...]:
    """One row of the conversations table, its values in :data:`COLUMNS` order."""
    mine = {span.span_id: logs.get(span.span_id, []) for span in spans} if logs else {}
    assembled = assemble(conversation_id, spans, mine, options.version_sources)
    conversation = assembled.conversation
    ordered = sorted(spans, key=lambda span: (span.parent_span_id is not None,
                                              span.start_unix_nano))
    outcome = decide(ordered, [record for records in mine.values() for record in records],
                     labels, reward_keys=options.reward_keys, threshold=options.threshold)
    policy = policy_rule(outcome, options.policy_clauses, conversation.final_reply,
                         conversation.steps)
    situation = situate(first_ask=conversation.first_ask, user_turns=conversation.user_turns,
                        steps=conversation.steps, policy_rule=policy,
                        turn_steps=user_turn_steps(assembled.transcript))
    return (
        conversation_id,
        list(conversation.trace_ids),
        assembled.session_id,
        assembled.user_id,
        conversation.first_ask,
        list(conversation.user_turns),
        list(conversation.assistant_turns),
        conversation.final_reply,
        orjson.dumps(conversation.steps).decode(),  # dataclasses: objects of their fields
        list(conversation.errors),
        conversation.input_tokens,
        conversation.output_tokens,
        conversation.agent_name,
        conversation.model_version,
        conversation.model_version_source,
        conversation.content_missing,
        conversation.start_unix_nano,
        conversation.end_unix_nano,
        outcome.outcome,
        outcome.reward,
        outcome.source,
        outcome.labeled_by,
        orjson.dumps(outcome.evaluations).decode(),
        outcome.failure_class,
        *(getattr(situation, name) for name in _SITUATION_FIELDS),
        unread_scores(spans, options.reward_keys),
        now,
        chat_messages_json(assembled.transcript, conversation.steps, assembled.contents),
        # the value placed from this conversation alone: session_history.sql would copy
        # it here with an UPDATE of every rebuilt row (a second version of each row)
        situation.history,
    )
