"""The synthetic production stream says what it contains.

The checks read the generated protobufs with a plain reference reading of the six axes,
written apart from the generator, so that a generator bug cannot hide behind itself.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from tests.support.synthetic import (
    AXES,
    MAX_SPANS_PER_REQUEST,
    TRUTH,
    Cell,
    SyntheticStream,
    production_stream,
    scaled_stream,
)

SEEDS = (0, 1, 7)
MIN_GRADED = 20


@pytest.fixture(scope="module", params=SEEDS)
def stream(request: pytest.FixtureRequest) -> SyntheticStream:
    seed: int = request.param
    return production_stream(seed)


Reading = tuple[str, dict[str, str], bool | None]
"""(version, axes, passed) of one conversation, by the reference reading."""


@pytest.fixture(scope="module")
def readings(stream: SyntheticStream) -> list[Reading]:
    return [(read.version, _axes(read), read.passed) for read in _read(stream).values()]


# --- a reference reading of the axes ---------------------------------------------------


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def _attributes(items: list[KeyValue]) -> dict[str, object]:
    return {item.key: _value(item.value) for item in items}


@dataclass
class _Read:
    version: str = ""
    traces: list[tuple[int, bytes]] = field(default_factory=list)
    chats: list[tuple[int, dict[str, object]]] = field(default_factory=list)
    tools: list[tuple[int, dict[str, object], bool]] = field(default_factory=list)
    rule: str | None = None
    passed: bool | None = None


def _read(stream: SyntheticStream) -> dict[str, _Read]:
    """Conversations by id, from roots carrying gen_ai.conversation.id."""
    roots: dict[bytes, str] = {}
    spans: list[Span] = []
    for body in stream.requests:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                spans.extend(scope_spans.spans)
    conversations: dict[str, _Read] = defaultdict(_Read)
    for span in spans:
        if not span.parent_span_id:
            attributes = _attributes(list(span.attributes))
            conversation_id = str(attributes["gen_ai.conversation.id"])
            roots[span.trace_id] = conversation_id
            read = conversations[conversation_id]
            read.version = str(attributes["gen_ai.agent.version"])
            read.traces.append((span.start_time_unix_nano, span.trace_id))
            for event in span.events:
                if event.name == "gen_ai.evaluation.result":
                    verdict = _attributes(list(event.attributes))
                    read.rule = str(verdict["gen_ai.evaluation.name"])
                    read.passed = verdict["gen_ai.evaluation.score.value"] == 1.0
    for span in spans:
        if not span.parent_span_id:
            continue
        read = conversations[roots[span.trace_id]]
        attributes = _attributes(list(span.attributes))
        if attributes["gen_ai.operation.name"] == "chat":
            read.chats.append((span.start_time_unix_nano, attributes))
        elif attributes["gen_ai.operation.name"] == "execute_tool":
            error = span.status.code == Status.STATUS_CODE_ERROR
            read.tools.append((span.start_time_unix_nano, attributes, error))
    return dict(conversations)


def _condition(attributes: dict[str, object], error: bool) -> tuple[str, dict[str, object]]:
    """A step's condition and its result as a JSON object ({} when there is none)."""
    error_type = str(attributes.get("error.type", ""))
    text = attributes.get("gen_ai.tool.call.result")
    result: dict[str, object] = {}
    malformed = False
    if isinstance(text, str):
        try:
            result = json.loads(text)
        except ValueError:
            malformed = text.startswith("{")
    if error and "Timeout" in error_type:
        return "timeout", result
    if error and ("Permission" in error_type or "Forbidden" in error_type):
        return "permission_denied", result
    if result.get("error") == "not_found" or "NotFound" in error_type:
        return "not_found", result
    if malformed:
        return "malformed_result", result
    if result.get("stale") is True:
        return "stale_result", result
    if error:
        return "error", result
    return "success", result


_STANCES = (
    ("hurried", ("asap", "right now", "urgent", "quickly", "hurry")),
    ("adversarial", ("ignore previous", "ignore your instructions", "system prompt",
                     "pretend you")),
    ("unsure", ("not sure", "i think", "maybe")),
    ("frustrated", ("!!!", "ridiculous", "third time", "unacceptable")),
    ("mistaken", ("i was told", "wasn't it", "i thought")),
)


def _user_messages(read: _Read) -> list[str]:
    seen: list[str] = []
    for _, attributes in sorted(read.chats, key=lambda item: item[0]):
        for message in json.loads(str(attributes["gen_ai.input.messages"])):
            if message["role"] == "user":
                text = " ".join(part["content"] for part in message["parts"])
                if text not in seen:
                    seen.append(text)
    return seen


def _steps(read: _Read) -> list[tuple[str, dict[str, object], str]]:
    """(condition, result object, tool) per tool step, in time order."""
    return [(*_condition(attributes, error), str(attributes["gen_ai.tool.name"]))
            for _, attributes, error in sorted(read.tools, key=lambda item: item[0])]


def _signal(condition: str, result: dict[str, object]) -> str | None:
    """The world-state signal of one step's result, if any."""
    status = str(result.get("status", ""))
    if condition == "not_found":
        return "missing"
    if status.startswith("already_"):
        return "already_acted_on"
    if result.get("duplicate") is True:
        return "duplicate"
    if status == "partial":
        return "partially_completed"
    return None


def _signals(steps: list[tuple[str, dict[str, object], str]]) -> list[str]:
    """The world-state signals of each step, in step order."""
    signals = []
    for condition, result, _ in steps:
        signal = _signal(condition, result)
        if signal is not None:
            signals.append(signal)
        if condition == "success" and ("id" in result or "order_id" in result):
            signals.append("entity_exists")
    return signals


_STATE_CHANGING = ("issue_refund", "cancel_order", "update_address")


def _axes(read: _Read) -> dict[str, str]:
    steps = _steps(read)
    focal = next((step for step in steps
                  if step[0] != "success" or _signal(step[0], step[1]) is not None), None)
    if focal is not None:
        condition, _, tool = focal
    elif not steps:
        tool, condition = "no_tool", "none"
    else:
        tool = next((step[2] for step in steps if step[2] in _STATE_CHANGING), steps[-1][2])
        condition = "success"
    signals = _signals(steps)
    focal_signal = _signal(focal[0], focal[1]) if focal is not None else None
    world = focal_signal or next((name for name in signals if name != "entity_exists"),
                                 "entity_exists" if "entity_exists" in signals else "unknown")
    users = _user_messages(read)
    first = users[0].lower()
    stance = next((name for name, words in _STANCES if any(w in first for w in words)),
                  "ordinary")
    history = "repeat_visit" if "again" in first or "already contacted" in first else "fresh"
    return {"history": history, "policy_rule": read.rule or "unspecified", "tool": tool,
            "tool_condition": condition, "user_stance": stance, "world_state": world}


def _cells(axes: dict[str, str]) -> list[Cell]:
    items = sorted(axes.items())
    return [(a, b) for a, b in itertools.combinations(items, 2)]


def _rates(readings: list[Reading]) -> dict[tuple[Cell, str], tuple[int, int]]:
    """(failed, graded) per (cell, version)."""
    counts: dict[tuple[Cell, str], list[int]] = defaultdict(lambda: [0, 0])
    for version, axes, passed in readings:
        if passed is None:
            continue
        for cell in _cells(axes):
            counts[(cell, version)][0] += not passed
            counts[(cell, version)][1] += 1
    return {key: (failed, graded) for key, (failed, graded) in counts.items()}


# --- tests -----------------------------------------------------------------------------


def test_same_seed_same_stream_and_another_seed_another() -> None:
    first, again, other = production_stream(3), production_stream(3), production_stream(4)
    assert first.requests == again.requests
    assert first.expected == again.expected
    assert first.requests != other.requests


def test_requests_parse_and_hold_at_most_512_spans(stream: SyntheticStream) -> None:
    total = 0
    for body in stream.requests:
        request = ExportTraceServiceRequest.FromString(body)
        spans = sum(len(scope.spans) for resource in request.resource_spans
                    for scope in resource.scope_spans)
        assert 0 < spans <= MAX_SPANS_PER_REQUEST
        for resource in request.resource_spans:
            attributes = _attributes(list(resource.resource.attributes))
            assert attributes["service.name"] == "support-bot"
            assert attributes["service.version"] in ("v1", "v2")
        total += spans
    assert total == stream.spans
    assert stream.conversations == 800 == len(stream.expected)
    assert 4.0 <= stream.spans / stream.conversations <= 6.0
    assert stream.log_requests == []
    assert 800 <= sum(map(len, stream.requests)) / stream.spans <= 3000


def test_truth_plants_at_least_two_cells_of_each_status(stream: SyntheticStream) -> None:
    assert stream.truth == TRUTH
    statuses = Counter(stream.truth.values())
    assert statuses == {"new": 2, "persistent": 2, "fixed": 2}
    axis_pairs = {(a[0], b[0]) for a, b in stream.truth}
    assert len(axis_pairs) == len(stream.truth)
    for a, b in stream.truth:
        assert a[0] < b[0] and a[0] in AXES and b[0] in AXES


def test_reference_reading_agrees_with_what_was_planted(stream: SyntheticStream) -> None:
    reads = _read(stream)
    assert reads.keys() == stream.expected.keys()
    split = 0
    for conversation_id, read in reads.items():
        expected = stream.expected[conversation_id]
        assert read.version == expected.version
        assert read.passed is expected.passed
        assert tuple(sorted(_axes(read).items())) == expected.coordinates, conversation_id
        split += len(read.traces) == 2
    assert 0.05 <= split / len(reads) <= 0.15
    graded = sum(read.passed is not None for read in reads.values())
    assert 0.85 <= graded / len(reads) <= 0.95


def test_readings_of_the_rules_cannot_disagree(stream: SyntheticStream) -> None:
    """Where the rules leave room (precedence, which step), the data leaves none."""
    for read in _read(stream).values():
        steps = _steps(read)
        signals = [signal for signal in _signals(steps) if signal != "entity_exists"]
        assert len(signals) <= 1
        assert all(step[1].get("status") != "partial" for step in steps[:-1])
        # a status-OK failure (a not-found answer, stale or malformed data) comes last
        for condition, result, _ in steps[:-1]:
            assert condition == "success" or not result
        users = [text.lower() for text in _user_messages(read)]
        repeat = "again" in users[0] or "already contacted" in users[0]
        recovered = any(a[0] != "success" and b[0] == "success"
                        for a, b in itertools.combinations(steps, 2))
        assert not (repeat and recovered)
        assert not any("again" in text or "already contacted" in text for text in users[1:])
        stances = [name for name, words in _STANCES if any(w in users[0] for w in words)]
        assert len(stances) <= 1, users[0]


@pytest.mark.parametrize("cell", sorted(TRUTH))
def test_planted_cells_fail_as_claimed(readings: list[Reading], cell: Cell) -> None:
    rates = _rates(readings)
    (old_failed, old_graded), (new_failed, new_graded) = (
        rates.get((cell, version), (0, 0)) for version in ("v1", "v2"))
    assert old_graded >= MIN_GRADED and new_graded >= MIN_GRADED
    old, new = old_failed / old_graded, new_failed / new_graded
    status = TRUTH[cell]
    if status == "new":
        assert old <= 0.05 and new >= 0.60
    elif status == "persistent":
        assert old >= 0.60 and new >= 0.60
    else:
        assert old >= 0.60 and new <= 0.05


def test_the_planted_cells_explain_the_failures(readings: list[Reading]) -> None:
    """Outside the planted cells no cell fails much, and neither coordinate alone does."""
    outside = [reading for reading in readings if not set(_cells(reading[1])) & set(TRUTH)]
    outcomes = [passed for _, _, passed in outside if passed is not None]
    assert len(outcomes) > 300
    assert 0.01 <= outcomes.count(False) / len(outcomes) <= 0.08
    for key, (failed, graded) in _rates(outside).items():
        if graded >= MIN_GRADED:
            assert failed / graded <= 0.2, key
    alone: dict[tuple[tuple[str, str], str], list[int]] = defaultdict(lambda: [0, 0])
    for version, axes, passed in outside:
        if passed is not None:
            for coordinate in axes.items():
                alone[(coordinate, version)][0] += not passed
                alone[(coordinate, version)][1] += 1
    for cell in TRUTH:
        for coordinate, version in itertools.product(cell, ("v1", "v2")):
            failed, graded = alone[(coordinate, version)]
            assert graded >= MIN_GRADED // 2 and failed / graded <= 0.25, (coordinate, version)


def test_spans_follow_the_genai_conventions(stream: SyntheticStream) -> None:
    operations: Counter[str] = Counter()
    for body in stream.requests[:3]:
        request = ExportTraceServiceRequest.FromString(body)
        for span in (span for resource in request.resource_spans
                     for scope in resource.scope_spans for span in scope.spans):
            attributes = _attributes(list(span.attributes))
            operation = str(attributes["gen_ai.operation.name"])
            operations[operation] += 1
            assert ("gen_ai.conversation.id" in attributes) == (not span.parent_span_id)
            if operation == "invoke_agent":
                assert span.name == "invoke_agent support"
                assert attributes["gen_ai.agent.name"] == "support"
                assert attributes["gen_ai.agent.version"] in ("v1", "v2")
            elif operation == "chat":
                assert span.name == "chat gpt-4o"
                assert attributes["gen_ai.provider.name"] == "openai"
                assert attributes["gen_ai.response.finish_reasons"] in (["stop"], ["tool_calls"])
                for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
                    for message in json.loads(str(attributes[key])):
                        assert message["role"] in ("system", "user", "assistant", "tool")
                        assert all("type" in part for part in message["parts"])
                assert isinstance(attributes["gen_ai.usage.input_tokens"], int)
            else:
                assert operation == "execute_tool"
                assert span.name == f"execute_tool {attributes['gen_ai.tool.name']}"
                json.loads(str(attributes["gen_ai.tool.call.arguments"]))
                error = span.status.code == Status.STATUS_CODE_ERROR
                assert ("error.type" in attributes) == error
                assert ("gen_ai.tool.call.result" in attributes) == (not error)
    assert set(operations) == {"invoke_agent", "chat", "execute_tool"}


def test_scaled_stream_is_lazy_and_bounded() -> None:
    requests = scaled_stream(5, spans=20_000)
    first = next(requests)
    assert len(ExportTraceServiceRequest.FromString(first).resource_spans) >= 1
    total = 0
    for body in [first, *requests]:
        request = ExportTraceServiceRequest.FromString(body)
        spans = sum(len(scope.spans) for resource in request.resource_spans
                    for scope in resource.scope_spans)
        assert spans <= MAX_SPANS_PER_REQUEST
        total += spans
    assert 18_000 <= total <= 22_000
