"""End to end with no key: traffic → collector → failure map → ``tracemill generate``.

A real collector on loopback ports receives a production stream with planted failure
situations (OTLP/HTTP protobuf, as an SDK exporter sends it) and one conversation from a
real instrumentation driving the real ``openai`` client; then the command line runs
``tracemill generate --agent offline`` on the stopped store, and the stored rollouts are
checked: graded, aimed at the planted failing cells, with lineage back to production.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from opentelemetry import trace as otel_trace

from tests.conftest import StartCollector
from tests.support.instrumented import (
    clean_genai_environment,
    instrument_openai,
    run_weather_conversation,
    telemetry_for,
    weather_script,
)
from tests.support.openai_loopback import OpenAILoopback
from tests.support.synthetic import production_stream
from tracemill.cli import main
from tracemill.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _send_production(start_collector: StartCollector, monkeypatch: pytest.MonkeyPatch) -> Path:
    stream = production_stream(seed=5, conversations_per_version=400)
    server = start_collector()
    # The instrumented conversation says it ran on the older version (v1): versions are
    # ordered by first appearance, so the map still compares the stream's v2 with v1.
    clean_genai_environment(monkeypatch)
    with telemetry_for(server, "http") as telemetry:
        tracer = otel_trace.get_tracer("e2e", tracer_provider=telemetry.tracer_provider)
        with (
            instrument_openai("openinference", telemetry, monkeypatch),
            OpenAILoopback(script=weather_script()) as srv,
            tracer.start_as_current_span(
                "weather", attributes={"gen_ai.conversation.id": "weather-e2e",
                                       "gen_ai.agent.version": "v1"}),
        ):
            run_weather_conversation(srv)
        telemetry.flush()
    with httpx.Client(base_url=server.http_endpoint, timeout=30) as client:
        for body in stream.requests:
            answer = client.post("/v1/traces", content=body,
                                 headers={"Content-Type": "application/x-protobuf"})
            assert answer.status_code == 200, answer.text
    (stored,) = server.query("SELECT count(*) FROM spans")[0]
    assert stored >= stream.spans
    server.thread.stop()
    server.store.close()
    return server.db_path


def test_offline_generation_aims_at_planted_failures(
        start_collector: StartCollector, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    db = _send_production(start_collector, monkeypatch)
    code = main(["generate", "--db", str(db), "--agent", "offline", "--budget", "120",
                 "--seed", "3", "--json", "--no-progress"], environ={})
    assert code == 0
    record = json.loads(capsys.readouterr().out)
    assert record["stop_reason"] in ("budget", "plan_done")
    assert record["written"] == 120 and record["graded"] == 120
    assert record["budget"]["spent"] <= 120
    assert record["degraded"] == [] or set(record["degraded"]) <= {"dead_tools"}

    store = open_store(db, read_only=True)
    try:
        targets = store.query(
            "SELECT cell, cell_status, count(*), count(*) FILTER (WHERE NOT passed) "
            "FROM rollouts WHERE purpose = 'target' GROUP BY ALL")
        statuses = store.query(
            "SELECT axis_a || '=' || value_a || ' & ' || axis_b || '=' || value_b, status "
            "FROM failure_map WHERE status IN ('new', 'persistent')")
        lineage = store.query(
            "SELECT count(*) FROM rollouts AS r, "
            "unnest(from_json(r.lineage->'source_conversations', '[\"VARCHAR\"]')) AS s(id) "
            "WHERE s.id NOT IN (SELECT conversation_id FROM conversations)")
        sources = store.query(
            "SELECT count(*) FROM rollouts WHERE purpose = 'target' "
            "AND json_array_length(lineage->'source_conversations') = 0")
        purposes = dict(store.query("SELECT purpose, count(*) FROM rollouts GROUP BY 1"))
    finally:
        store.close()
    failing = dict(statuses)
    planted = {"tool=issue_refund & user_stance=hurried",
               "history=repeat_visit & policy_rule=escalation",
               "tool=lookup_order & tool_condition=timeout",
               "policy_rule=identity_check & user_stance=adversarial"}
    aimed = {cell for cell, _status, _n, _failed in targets}
    # most of the budget goes to the map's new and persistent cells, the planted ones among them
    assert planted <= set(failing)
    assert planted <= aimed
    assert all(status in ("new", "persistent", "uncertain") for _c, status, _n, _f in targets)
    assert purposes["target"] >= 0.6 * 120
    assert purposes.get("explore", 0) > 0
    # every rollout's lineage names real production conversations
    assert lineage == [(0,)]
    assert sources == [(0,)]
