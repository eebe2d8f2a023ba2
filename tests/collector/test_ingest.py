"""`tracemill ingest`: files take the same path as exports, duplicates are stored once."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pytest

from tests.support.otlp import genai_span, log_request, trace_request
from tracemill.cli import main

ENV = {"TRACEMILL_DECODE_WORKERS": "0"}

JSON_TRACES = {"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "filed"}}]}, "scopeSpans": [{"spans": [{
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
        "name": "chat", "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}]}]}]}
JSON_LOGS = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{
    "timeUnixNano": "5", "eventName": "gen_ai.user.message",
    "body": {"stringValue": "hello"}}]}]}]}


def _count(db: Path, table: str) -> int:
    with duckdb.connect(str(db), read_only=True) as connection:
        row = connection.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608
    assert row is not None
    return int(row[0])


def test_json_jsonl_protobuf_and_gzip_files(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "filed.duckdb"
    single = tmp_path / "one.json"
    single.write_text(json.dumps(JSON_TRACES))
    lines = tmp_path / "export.jsonl"
    lines.write_text(json.dumps(JSON_LOGS) + "\n\n" + json.dumps(JSON_TRACES) + "\n")
    proto = tmp_path / "batch.binpb"
    proto.write_bytes(trace_request([genai_span() for _ in range(3)]).SerializeToString())
    logs_proto = tmp_path / "logs.binpb.gz"
    logs_proto.write_bytes(gzip.compress(log_request(["a", "b"]).SerializeToString()))

    assert main(["ingest", "--db", str(db), str(single), str(lines), str(proto)],
                environ=ENV) == 0
    out = capsys.readouterr().out
    assert "stored 4 new spans and 1 new log records; 1 spans" in out
    assert main(["ingest", "--db", str(db), "--signal", "logs", str(logs_proto)],
                environ=ENV) == 0
    assert "2 log records accepted" in capsys.readouterr().out
    assert _count(db, "spans") == 4
    assert _count(db, "log_records") == 3

    # the same files again: nothing new, everything counted as already stored
    assert main(["ingest", "--db", str(db), "--json", str(single), str(proto)],
                environ=ENV) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"]["traces"] == {"stored": 0, "duplicates": 4}
    assert _count(db, "spans") == 4


def test_bad_documents_are_reported_by_line_and_the_rest_is_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "mixed.duckdb"
    lines = tmp_path / "mixed.jsonl"
    lines.write_text("\n".join([
        json.dumps(JSON_TRACES), "{not json", json.dumps({"hello": "world"}),
        json.dumps(JSON_LOGS)]) + "\n")
    assert main(["ingest", "--db", str(db), str(lines)], environ=ENV) == 1
    out = capsys.readouterr().out
    assert f"{lines}:2: not valid JSON" in out
    assert f"{lines}:3: not an OTLP/JSON request" in out
    assert _count(db, "spans") == 1 and _count(db, "log_records") == 1


def test_missing_file_is_a_clear_error(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ingest", "--db", str(tmp_path / "x.duckdb"), str(tmp_path / "nope.json")],
                environ=ENV)
    assert code == 2
    err = capsys.readouterr().err
    assert "nope.json does not exist" in err and "Traceback" not in err
