"""The tool catalog: definitions offered to the model, read from the spans by ``process``,
reach the planner as the tools the world answers.

Definitions come from ``gen_ai.tool.definitions`` (flat and OpenAI nested forms, on spans
built by hand and stored through the real pipeline) and from OpenInference's
``llm.tools.N.tool.json_schema`` (emitted by the real OpenInference instrumentation of the
real ``openai`` client against a loopback server). A definition wins over the structure
observed in the arguments of the same tool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from collector.metrics import Metrics
from collector.pipeline import Pipeline
from generator.plan_inputs import PlanInputs, load_plan_inputs
from processor.run import process
from tests.conftest import RunningCollector
from tests.support.instrumented import (
    TOOL_NAME,
    TOOLS,
    Telemetry,
    clean_genai_environment,
    instrument_openai,
    run_weather_conversation,
    telemetry_for,
    weather_script,
)
from tests.support.openai_loopback import OpenAILoopback
from tests.support.otlp import genai_span, kv, trace_request
from tracemill.config import Settings
from tracemill.store import Store, open_store

LOOKUP = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "description": "The order number."},
                   "verbose": {"type": "boolean"}},
    "required": ["order_id"],
}
REFUND = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
    "required": ["order_id", "amount"],
}


def _offering(definitions: object, at: int, *, conversation: str) -> Span:
    """A chat span offering ``definitions`` (recorded as JSON text) at ``at`` seconds."""
    span = genai_span(conversation=conversation)
    span.start_time_unix_nano = at * 1_000_000_000
    span.end_time_unix_nano = span.start_time_unix_nano + 1_000_000
    span.attributes.append(kv("gen_ai.tool.definitions", json.dumps(definitions)))
    return span


def _tool_span(parent: Span, tool: str, arguments: str) -> Span:
    span = Span(trace_id=parent.trace_id, span_id=os.urandom(8),
                parent_span_id=parent.span_id, name=f"execute_tool {tool}",
                kind=Span.SPAN_KIND_INTERNAL,
                start_time_unix_nano=parent.end_time_unix_nano,
                end_time_unix_nano=parent.end_time_unix_nano + 1_000_000)
    span.attributes.extend([
        kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", tool),
        kv("gen_ai.tool.call.id", "call-1"), kv("gen_ai.tool.call.arguments", arguments),
        kv("gen_ai.tool.call.result", '{"status": "shipped"}'),
    ])
    return span


def _store_spans(db: Path, spans: list[Span]) -> None:
    store = open_store(db)
    pipeline = Pipeline(Settings(db=db, decode_workers=0), store, Metrics())
    pipeline.start()
    try:
        pipeline.intake.export_blocking("traces", trace_request(spans).SerializeToString(),
                                        "test")
    finally:
        pipeline.close(drain_all=True)
        store.close()


def _plan_inputs(store: Store) -> PlanInputs:
    cursor = store.cursor()
    try:
        return load_plan_inputs(cursor)
    finally:
        cursor.close()


@pytest.fixture
def offered(tmp_path: Path) -> Iterator[Store]:
    """A store holding three chat spans that offer tools in both forms, an older
    description of ``lookup_order`` first, plus a call of it with arguments that a
    structure alone could not tell apart from the definition."""
    old = _offering([{"type": "function", "name": "lookup_order",
                      "description": "Old text.", "parameters": LOOKUP}],
                    1_700_000_000, conversation="c-old")
    new = _offering([
        {"type": "function", "name": "lookup_order",
         "description": "Find an order by its number.", "parameters": LOOKUP},
        {"type": "function", "function": {"name": "refund", "description": "Refund money.",
                                          "parameters": REFUND}},
        {"type": "web_search"},  # a provider's built-in tool: not a function to simulate
    ], 1_700_000_100, conversation="c-new")
    third = _offering([{"type": "function", "name": "lookup_order",
                        "description": "Find an order by its number.",
                        "parameters": LOOKUP}],
                      1_700_000_050, conversation="c-mid")
    call = _tool_span(third, "lookup_order", '{"order_id": "123", "note": "x"}')
    _store_spans(tmp_path / "store.duckdb", [old, new, third, call])
    store = open_store(tmp_path / "store.duckdb")
    try:
        process(store, workers=1)
        yield store
    finally:
        store.close()


def test_definitions_are_stored_one_row_per_tool(offered: Store) -> None:
    rows = offered.query(
        "SELECT tool, schema, calls FROM tool_schemas WHERE source = 'definitions' "
        "ORDER BY tool")
    assert [(tool, json.loads(schema), calls) for tool, schema, calls in rows] == [
        ("lookup_order", {"description": "Find an order by its number.",
                          "parameters": LOOKUP}, 3),
        ("refund", {"description": "Refund money.", "parameters": REFUND}, 1),
    ]
    # the arguments seen are still catalogued, as their own source
    assert offered.query("SELECT tool FROM tool_schemas WHERE source = 'observed'") == [
        ("lookup_order",)]


def test_the_planner_gets_the_definitions(offered: Store) -> None:
    tools = {tool.name: tool for tool in _plan_inputs(offered).tools}
    assert sorted(tools) == ["lookup_order", "refund"]
    lookup = tools["lookup_order"]
    assert (lookup.source, lookup.description) == ("definitions", "Find an order by its number.")
    # the definition, not the observed structure (which has "note" and no "verbose")
    assert dict(lookup.parameters) == LOOKUP
    assert lookup.exemplars == ('{"status": "shipped"}',)
    refund = tools["refund"]
    assert (refund.source, refund.parameters["required"]) == ("definitions",
                                                              ["order_id", "amount"])


def test_a_stray_required_name_is_dropped(tmp_path: Path) -> None:
    """Nobody validates an agent's definitions: a required name with no property, or a
    definition with no parameters, still gives a schema the world can check against."""
    span = _offering([
        {"type": "function", "name": "ping", "description": ""},
        {"type": "function", "name": "cancel",
         "parameters": {"type": "object", "properties": {"id": {"type": "string"}},
                        "required": ["id", "reason"]}},
    ], 1_700_000_000, conversation="c")
    _store_spans(tmp_path / "store.duckdb", [span])
    store = open_store(tmp_path / "store.duckdb")
    try:
        process(store, workers=1)
        tools = {tool.name: tool for tool in _plan_inputs(store).tools}
    finally:
        store.close()
    assert dict(tools["cancel"].parameters) == {
        "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    assert dict(tools["ping"].parameters) == {"type": "object", "properties": {},
                                              "required": []}
    assert tools["ping"].description == "Ping."


def test_openinference_llm_tools(collector_server: RunningCollector,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The real OpenInference instrumentation records ``llm.tools`` for a request with
    tools; the weather conversation offers ``get_weather`` on each of its three calls."""
    clean_genai_environment(monkeypatch)
    with telemetry_for(collector_server, "grpc") as telemetry:
        _converse(telemetry, monkeypatch)
    assert collector_server.query(
        "SELECT count(*) FROM spans WHERE json_exists(attributes, "
        "'$.\"llm.tools.0.tool.json_schema\"')") == [(3,)]
    process(collector_server.store, workers=1)
    (tool,) = _plan_inputs(collector_server.store).tools
    function = TOOLS[0]["function"]
    assert (tool.name, tool.source, tool.description) == (
        TOOL_NAME, "definitions", function["description"])
    assert dict(tool.parameters) == function["parameters"]
    assert collector_server.query(
        "SELECT calls FROM tool_schemas WHERE source = 'definitions'") == [(3,)]


def _converse(telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        instrument_openai("openinference", telemetry, monkeypatch),
        OpenAILoopback(script=weather_script()) as srv,
    ):
        run_weather_conversation(srv)
    telemetry.flush()
