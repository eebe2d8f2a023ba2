"""Two `tracemill serve` processes ingest into one lake at once; one is killed and restarted.

Real collectors (``python -m tracemill serve``), real OTLP/gRPC clients that retry what was
not acknowledged, a real PostgreSQL catalog. Every acknowledged span must be stored, and
stored once, while the processor reads the lake from a third place.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from processor.run import process
from tests.collector.serving import ServeProcess
from tests.lake.conftest import lake_file
from tests.lake.load import Loader
from tracemill.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _stored(url: str) -> tuple[int, int]:
    reader = open_store(url, read_only=True)
    try:
        rows = reader.query("SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans")
    finally:
        reader.close()
    return int(rows[0][0]), int(rows[0][1])


def test_two_collectors_store_every_acknowledged_span_once(
        postgres: str, lake_database: str, tmp_path: Path) -> None:
    def url(name: str) -> str:
        """A lake file of its own for each process, all naming the same lake."""
        return str(lake_file(tmp_path / f"{name}.lake", postgres, lake_database,
                             tmp_path / "data"))

    open_store(url("setup")).close()  # the catalog exists before the collectors race
    logs = {name: tmp_path / f"{name}.log" for name in ("c1", "c2", "c1-again")}
    first = ServeProcess(Path(url("c1")), tmp_path, log_file=logs["c1"])
    second = ServeProcess(Path(url("c2")), tmp_path, log_file=logs["c2"])
    loaders = [Loader(first.grpc, requests=60, name="c1"),
               Loader(second.grpc, requests=60, name="c2")]
    restarted = None
    try:
        for loader in loaders:
            loader.start()
        deadline = time.monotonic() + 120
        while loaders[0].sent < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert loaders[0].sent >= 20, f"the first collector acknowledged too little: {first.log()}"
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(30)
        killed_at = loaders[0].sent
        restarted = ServeProcess(Path(url("c1")), tmp_path, log_file=logs["c1-again"])
        loaders[0].point_at(restarted.grpc)
        # the processor reads (and writes its own tables) while both collectors write
        reading = open_store(url("processor"))
        try:
            process(reading)
        finally:
            reading.close()
        for loader in loaders:
            loader.join(300)
            assert loader.error is None, loader.error
        acknowledged = loaders[0].acknowledged | loaders[1].acknowledged
        assert len(acknowledged) == 120 * 100
        assert killed_at < 60, "the kill should land while the first load still runs"
        assert loaders[0].retries > 0, "exports to the killed collector should have failed"
        deadline = time.monotonic() + 180
        while _stored(url("reader"))[1] < len(acknowledged) and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        for serving in (first, second, restarted):
            if serving is not None:
                serving.stop()
    reader = open_store(url("reader"), read_only=True)
    try:
        stored = {(trace, span) for trace, span in reader.query(
            "SELECT trace_id, span_id FROM spans")}
        total = reader.query("SELECT count(*) FROM spans")[0][0]
        writers = reader.query("SELECT count(DISTINCT ingest_seq) FROM spans")[0][0]
    finally:
        reader.close()
    assert acknowledged <= stored, f"{len(acknowledged - stored)} acknowledged spans missing"
    assert total == len(stored), f"{total - len(stored)} spans stored twice"
    assert writers > 2
