"""The failure map recovers planted situations from a synthetic production stream.

The stream (tests/support/synthetic.py) goes through the real collector pipeline into a
real DuckDB file; `tracemill` commands then run on that file as a user would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from processor._history_cues import cues_digest
from processor.run import ProcessOptions, process
from processor.stance_learned import reader_digest
from tests.support.pipeline import store_requests
from tests.support.synthetic import SyntheticStream, production_stream
from tracemill.cli import main
from tracemill.store import Store, open_store

ENV = {"TRACEMILL_DECODE_WORKERS": "0"}


@pytest.fixture(scope="module")
def stream() -> SyntheticStream:
    return production_stream(seed=11, conversations_per_version=400)


@pytest.fixture
def loaded(tmp_path: Path, stream: SyntheticStream) -> Iterator[Path]:
    db = tmp_path / "production.duckdb"
    store_requests(db, stream.requests)
    yield db


def _statuses(store: Store) -> dict[str, str]:
    """Situation label → status, as processing stored them."""
    return dict(store.query("SELECT label, status FROM situations"))


def _label(cell: tuple[tuple[str, str], ...]) -> str:
    return " & ".join(f"{axis}={value}" for axis, value in sorted(cell))


def _naming(planted: tuple[tuple[str, str], ...], labels: set[str]) -> str:
    """The one situation label holding the planted coordinates (a situation may be named
    by one more coordinate where that isolates its failures better)."""
    wanted = {f"{axis}={value}" for axis, value in planted}
    (found,) = [label for label in labels if wanted <= set(label.split(" & "))]
    return found


def test_planted_cells_get_their_statuses(loaded: Path, stream: SyntheticStream) -> None:
    store = open_store(loaded)
    try:
        result = process(store, ProcessOptions())
        assert result.conversations_rebuilt == stream.conversations
        assert result.periods.mode == "versions"
        assert (result.periods.latest, result.periods.previous) == ("v2", "v1")
        statuses = _statuses(store)
        for cell, expected in stream.truth.items():
            assert statuses[_naming(cell, set(statuses))] == expected, (cell, statuses)
        flagged = {label for label, status in statuses.items()
                   if status in ("new", "persistent", "fixed")}
        planted = {_naming(cell, set(statuses)) for cell in stream.truth}
        # every planted situation is one situation; spill-over stays small
        assert planted <= flagged
        assert len(flagged - planted) <= 1
        assert {s.label: s.status for s in result.situations} == statuses
        # the pair cells stay as detail, each carrying the status of its situation
        cells = store.query("SELECT axis_a, value_a, axis_b, value_b, status FROM failure_map "
                            "WHERE status <> 'passing'")
        pairs = {_label(((a, va), (b, vb))) for a, va, b, vb, _ in cells if b != "*"}
        assert {_label(cell) for cell in stream.truth} <= pairs
        again = process(store, ProcessOptions())
        assert again.conversations_rebuilt == 0
        assert {s.situation_id for s in again.situations} == {
            s.situation_id for s in result.situations}
    finally:
        store.close()


def test_incremental_rebuilds_only_what_new_spans_touch(tmp_path: Path,
                                                       stream: SyntheticStream) -> None:
    db = tmp_path / "incremental.duckdb"
    half = len(stream.requests) // 2
    store_requests(db, stream.requests[:half])
    store = open_store(db)
    first = process(store, ProcessOptions())
    store.close()
    store_requests(db, stream.requests[half:])
    store = open_store(db)
    try:
        second = process(store, ProcessOptions())
        total = store.query("SELECT count(*) FROM conversations")[0][0]
        assert total == stream.conversations
        # only conversations with spans in the second half are rebuilt
        assert 0 < second.conversations_rebuilt < total
        assert first.conversations_rebuilt + second.conversations_rebuilt >= total
        assert second.spans_read < stream.spans
    finally:
        store.close()


@pytest.mark.parametrize(("key", "digest"), [("stance_reader", reader_digest),
                                             ("history_cues", cues_digest)])
def test_a_new_reader_rebuilds_every_conversation(tmp_path: Path, stream: SyntheticStream,
                                                  key: str, digest: Callable[[], str]) -> None:
    # a new version's reader (the stance reader's weights, the history axis's cues) reads the
    # asks another way: what is stored was read by the old
    db = tmp_path / "reader.duckdb"
    store_requests(db, stream.requests)
    store = open_store(db)
    try:
        process(store, ProcessOptions())
        with store.transaction() as cursor:
            row = cursor.execute("SELECT options FROM processor_state").fetchone()
            assert row is not None
            built = json.loads(row[0])
            assert built[key] == digest()
            built[key] = "an older reader"
            cursor.execute("UPDATE processor_state SET options = ?", [json.dumps(built)])
        assert process(store, ProcessOptions()).conversations_rebuilt == stream.conversations
        assert process(store, ProcessOptions()).conversations_rebuilt == 0
    finally:
        store.close()


def test_commands_map_conversations_report_and_ci_gate(
        loaded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        stream: SyntheticStream) -> None:
    db = str(loaded)
    assert main(["map", "--db", db], environ=ENV) == 0
    table = capsys.readouterr().out
    assert "comparing v2 with v1" in table
    assert "tool=issue_refund & user_stance=hurried" in table

    assert main(["map", "--db", db, "--json"], environ=ENV) == 0
    cells = json.loads(capsys.readouterr().out)
    assert {cell["status"] for cell in cells} >= {"new", "persistent", "fixed"}

    assert main(["conversations", "--db", db, "--json", "--outcome", "fail", "--limit", "5",
                 "--tool", "issue_refund"], environ=ENV) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert 0 < len(rows) <= 5
    assert all(row["outcome"] == "fail" and row["tool"] == "issue_refund" for row in rows)
    assert all(isinstance(row["steps"], list) and row["steps"] for row in rows)

    out = tmp_path / "report"
    assert main(["report", "--db", db, "--out", str(out)], environ=ENV) == 0
    capsys.readouterr()
    data = json.loads((out / "report.json").read_text())
    assert data["census"]["conversations"] == stream.conversations
    assert data["comparison"] == {"mode": "versions", "latest": "v2", "previous": "v1"}
    assert data["statuses"]["new"] >= 2
    assert "issue_refund" in (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "<svg" in page and "http" not in page.split(
        "<svg", 1)[0].replace("http://www.w3.org", "")

    assert main(["report", "--db", db, "--out", str(out), "--since", "v1",
                 "--fail-on", "new"], environ=ENV) == 1
    assert "situations are new" in capsys.readouterr().err
    assert main(["report", "--db", db, "--out", str(out), "--since", "v9"], environ=ENV) == 2
    assert "model version 'v9' is not in the store" in capsys.readouterr().err


def test_labels_override_and_unread_scores_are_loud(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.otlp import genai_span, kv, trace_request

    db = tmp_path / "labels.duckdb"
    spans = []
    for index in range(4):
        span = genai_span(f"invoke_agent {index}", conversation=f"conv-{index}")
        span.attributes.append(kv("score", 0.9))
        spans.append(span)
    store_requests(db, [trace_request(spans).SerializeToString()])
    out = tmp_path / "r"
    assert main(["report", "--db", str(db), "--out", str(out)], environ=ENV) == 0
    warnings = capsys.readouterr().err
    assert "4 conversations carry `score`" in warnings
    assert "TRACEMILL_REWARD_KEYS" in warnings

    labels = tmp_path / "labels.csv"
    labels.write_text("conversation_id,passed,kind,labeled_by\nconv-0,fail,human,ana\n"
                      "conv-1,pass,human,ana\nconv-typo,pass,human,ana\n")
    assert main(["label", "--db", str(db), str(labels)], environ=ENV) == 0
    # stored all the same (the spans may come later), but a target nobody knows is named
    assert "1 labels name no processed conversation, trace or rollout: conv-typo" in \
        capsys.readouterr().err
    assert main(["conversations", "--db", str(db), "--json"], environ=ENV) == 0
    outcomes = {row["conversation_id"]: (row["outcome"], row["outcome_source"])
                for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert outcomes["conv-0"] == ("fail", "label:human")
    assert outcomes["conv-1"] == ("pass", "label:human")
    assert outcomes["conv-2"] == (None, None)

    # other options rebuild every conversation: `score` now decides the unlabelled ones
    assert main(["conversations", "--db", str(db), "--json", "--reward-keys", "score"],
                environ=ENV) == 0
    rescored = {row["conversation_id"]: (row["outcome"], row["outcome_source"])
                for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rescored["conv-2"] == ("pass", "attribute:score")
    assert rescored["conv-0"] == ("fail", "label:human")

    bad = tmp_path / "bad.csv"
    bad.write_text("conversation_id,passed\nconv-0,maybe\n,true\n")
    assert main(["label", "--db", str(db), str(bad), "--by", "ana"], environ=ENV) == 2
    err = capsys.readouterr().err
    assert "bad.csv:2: passed must be true/false" in err and "bad.csv:3: needs" in err
