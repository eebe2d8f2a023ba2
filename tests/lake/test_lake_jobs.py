"""`tracemill process` and `tracemill generate` as separate processes on a lake that a
running `tracemill serve` writes to at the same time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.collector.serving import ServeProcess
from tests.lake.conftest import lake_file
from tests.lake.load import Loader
from tests.support.pipeline import store_requests
from tests.support.synthetic import production_stream
from tracemill.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _tracemill(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemill", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600, check=False)


def test_process_and_generate_run_beside_a_collector(
        postgres: str, lake_database: str, tmp_path: Path) -> None:
    def lake(name: str) -> str:
        return str(lake_file(tmp_path / f"{name}.lake", postgres, lake_database,
                             tmp_path / "data"))

    stream = production_stream(seed=5, conversations_per_version=360)
    store_requests(Path(lake("backfill")), stream.requests)
    serving = ServeProcess(Path(lake("collector")), tmp_path, log_file=tmp_path / "serve.log")
    loader = Loader(serving.grpc, requests=30, name="live")
    try:
        loader.start()
        processed = _tracemill("process", "--db", lake("processor"), "--log-format", "text",
                               cwd=tmp_path)
        assert processed.returncode == 0, processed.stderr
        generated = _tracemill("generate", "--db", lake("generator"), "--no-progress",
                               "--json", "--agent", "offline:0.3", "--budget", "30",
                               "--seed", "3", cwd=tmp_path)
        assert generated.returncode == 0, generated.stderr
        loader.join(300)
        assert loader.error is None, loader.error
    finally:
        code, log = serving.stop()
    assert code == 0, log
    run = json.loads(generated.stdout)
    reader = open_store(lake("reader"), read_only=True)
    try:
        rollouts = reader.query("SELECT count(*), count(DISTINCT run_id) FROM rollouts")[0]
        live = {row for row in reader.query(
            "SELECT trace_id, span_id FROM spans WHERE service_name = 'live'")}
        cells = reader.query("SELECT count(*) FROM failure_map")[0][0]
    finally:
        reader.close()
    assert rollouts[0] > 0 and rollouts[1] == 1, (rollouts, run)
    assert cells > 0
    assert loader.acknowledged <= live
