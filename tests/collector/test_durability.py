"""A real `tracemill serve` process: what it acknowledged survives SIGKILL; SIGTERM drains."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import grpc
import psutil
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.pipeline import spool_folder
from collector.spool import Spool
from tests.collector.serving import ServeProcess as ServeProcess  # tests/processor import it here
from tests.support.otlp import genai_span, kv, trace_request
from tracemill.store import load_sql

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
pytestmark = pytest.mark.integration


Serve = Callable[..., ServeProcess]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    started: list[ServeProcess] = []

    def start(db: Path, *extra: str, env: dict[str, str] | None = None) -> ServeProcess:
        started.append(ServeProcess(db, tmp_path, *extra, env=env))
        return started[-1]

    yield start
    for item in started:
        if item.process.poll() is None:
            item.process.kill()
        item.process.communicate()


def _stored_span_ids(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return {row[0] for row in connection.execute("SELECT span_id FROM spans").fetchall()}


def _spooled_span_ids(db: Path) -> set[str]:
    """Span ids of the spooled requests the store's cursor has not passed (not stored yet)."""
    with duckdb.connect(str(db), read_only=True) as connection:
        row = connection.execute(load_sql("collector", "spool_cursor.sql")).fetchone()
    assert row is not None
    spool = Spool(spool_folder(db))
    try:
        entries = spool.read(int(row[0]), 1 << 62, 1 << 62) if spool.end > int(row[0]) else []
        ids: set[str] = set()
        for entry in entries:
            request = ExportTraceServiceRequest.FromString(entry.read_payload())
            ids.update(span.span_id.hex() for resource in request.resource_spans
                       for scope in resource.scope_spans for span in scope.spans)
        return ids
    finally:
        spool.close()


def _sender(address: str, acked: set[str], stop: threading.Event) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = channel.unary_unary(TRACES)
        while not stop.is_set():
            spans = [genai_span() for _ in range(64)]
            try:
                stub(trace_request(spans).SerializeToString(), timeout=10)
            except grpc.RpcError:
                return  # the server died: this request was never acknowledged
            acked.update(span.span_id.hex() for span in spans)


@pytest.mark.parametrize("max_commit_items", [None, 48], ids=["groups", "chunked-requests"])
def test_sigkill_loses_nothing_acknowledged(serve: Serve, tmp_path: Path,
                                            max_commit_items: int | None) -> None:
    # chunked-requests: every 64-span request holds more items than a commit, so it is
    # decoded in chunks and inserted as several statements of one transaction
    env = ({} if max_commit_items is None
           else {"TRACEMILL_MAX_COMMIT_ITEMS": str(max_commit_items)})
    db = tmp_path / "kill.duckdb"
    acked: set[str] = set()
    for _ in range(3):
        server = serve(db, "--decode-workers", "2", env=env)
        stop = threading.Event()
        senders = [threading.Thread(target=_sender, args=(server.grpc, acked, stop))
                   for _ in range(4)]
        for sender in senders:
            sender.start()
        time.sleep(1.5)
        workers = psutil.Process(server.process.pid).children(recursive=True)
        assert workers, "the collector should decode in worker processes"
        server.process.send_signal(signal.SIGKILL)  # while exports are in flight
        server.process.wait()
        _, alive = psutil.wait_procs(workers, timeout=10)
        assert alive == [], "decode workers outlived their collector"
        stop.set()
        for sender in senders:
            sender.join()
    assert len(acked) > 0
    # What was acknowledged but not yet stored as rows waits in the spool; the next start
    # stores it. Its drain has no practical time limit: with the default 20 s a slow
    # materializer (a loaded machine, a slower commit) leaves requests in the spool for
    # the start after, which is no loss, and reading only the rows would call them lost.
    final = serve(db, env={**env, "TRACEMILL_SHUTDOWN_DRAIN_SECONDS": "600"})
    final.process.send_signal(signal.SIGTERM)
    _, stderr = final.process.communicate(timeout=660)
    assert final.process.returncode == 0, stderr
    stored = _stored_span_ids(db)
    waiting = _spooled_span_ids(db)
    lost = acked - stored - waiting
    assert not lost, f"{len(lost)} acknowledged spans are neither stored nor in the spool"
    assert acked <= stored, (f"{len(acked - stored)} acknowledged spans are safe in the spool "
                             "but were not stored by a start that drains without a limit")


def test_sigterm_drains_commits_and_exits_cleanly(serve: Serve,
                                                  tmp_path: Path) -> None:
    db = tmp_path / "term.duckdb"
    server = serve(db)
    acked: set[str] = set()
    stop = threading.Event()
    senders = [threading.Thread(target=_sender, args=(server.grpc, acked, stop))
               for _ in range(4)]
    for sender in senders:
        sender.start()
    time.sleep(1.0)
    server.process.send_signal(signal.SIGTERM)
    _, stderr = server.process.communicate(timeout=60)
    stop.set()
    for sender in senders:
        sender.join()
    assert server.process.returncode == 0, stderr
    assert "collector stopped" in stderr
    assert "Traceback" not in stderr
    assert "order 123" not in stderr  # span content never reaches the logs
    assert acked <= _stored_span_ids(db)
    assert not Path(str(db) + ".wal").exists()  # checkpointed on the way out


def test_second_writer_is_told_who_holds_the_store(serve: Serve,
                                                   tmp_path: Path) -> None:
    db = tmp_path / "locked.duckdb"
    server = serve(db)
    result = subprocess.run(
        [sys.executable, "-m", "tracemill", "migrate", "--db", str(db)],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 3
    assert f"locked by process {server.process.pid}" in result.stderr
    assert "Traceback" not in result.stderr
    stats = subprocess.run(
        [sys.executable, "-m", "tracemill", "stats", "--db", str(db), "--json",
         "--http-address", server.http],
        capture_output=True, text=True, timeout=60)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["spans"] == 0
    assert os.path.exists(db)


def test_serve_keeps_the_failure_map_current(serve: Serve, tmp_path: Path) -> None:
    db = tmp_path / "live.duckdb"
    server = serve(db, "--process-every", "0.5")
    spans = []
    for index in range(6):
        span = genai_span(f"invoke_agent {index}", conversation=f"live-{index}")
        span.attributes.append(kv("reward", 0.0 if index % 2 else 1.0))
        spans.append(span)
    with grpc.insecure_channel(server.grpc) as channel:
        channel.unary_unary(TRACES)(trace_request(spans).SerializeToString(), timeout=10)
    deadline = time.monotonic() + 60
    cells: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not cells:
        result = subprocess.run(
            [sys.executable, "-m", "tracemill", "map", "--db", str(db), "--cells", "--json",
             "--all", "--http-address", server.http], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        cells = json.loads(result.stdout)
        time.sleep(0.5)
    graded = [cell for cell in cells if cell["axis_b"] == "*" and cell["axis_a"] == "tool"]
    assert graded and graded[0]["latest"]["graded"] + graded[0]["previous"]["graded"] == 6
    report = subprocess.run(
        [sys.executable, "-m", "tracemill", "report", "--db", str(db), "--out",
         str(tmp_path / "r")], capture_output=True, text=True, timeout=60)
    # the report goes through the running service, which holds the file: no lock met
    assert report.returncode == 0, report.stderr
    assert "Traceback" not in report.stderr
    assert (tmp_path / "r").is_dir() and any((tmp_path / "r").iterdir())
