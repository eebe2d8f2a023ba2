"""Never a silent half store: commands that read the store first store the spool's backlog.

The backlog is made the way a stopped collector leaves it: requests acknowledged (durable
in the spool) by a pipeline whose materializer never ran, as after SIGKILL or a drain that
ran out of time.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.metrics import Metrics
from collector.pipeline import Pipeline
from tests.support.otlp import genai_span, trace_request
from tests.support.pipeline import store_requests
from tracemill.cli import main
from tracemill.config import Settings
from tracemill.store import open_store

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _keep_logging() -> Iterator[None]:
    """main() points tracemill's logs at the captured stderr; put them back afterwards."""
    logger = logging.getLogger("tracemill")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved


def _leave_backlog(db: Path, requests: int, spans_each: int) -> int:
    """Acknowledge requests into the spool without storing them; returns the spans."""
    store = open_store(db)
    pipeline = Pipeline(Settings(db=db, decode_workers=0), store, Metrics())
    pipeline.writer.start()  # acknowledge, but never store: no materializer
    try:
        for _ in range(requests):
            request = trace_request([genai_span() for _ in range(spans_each)])
            pipeline.intake.export_blocking("traces", request.SerializeToString(), "test")
    finally:
        pipeline.writer.close()
        pipeline.decoders.shutdown()
        pipeline.spool.close()
        store.close()
    return requests * spans_each


def _stats(db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, int], str]:
    code = main(["stats", "--db", str(db), "--json"], environ={})
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_stats_stores_the_backlog_first_and_exactly_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "half.duckdb"
    stored = store_requests(db, [trace_request([genai_span() for _ in range(5)])
                                 .SerializeToString() for _ in range(4)]) * 5
    spooled = _leave_backlog(db, requests=30, spans_each=50)
    code, stats, err = _stats(db, capsys)
    assert code == 0, err
    assert stats["spans"] == stored + spooled
    assert "storing 30 export requests (1,500 spans" in err
    # Stored once: a second reader finds nothing left and nothing doubled.
    code, again, err = _stats(db, capsys)
    assert code == 0 and again["spans"] == stored + spooled and err == ""
    assert again["requests"] == stats["requests"] == 34


def test_a_store_held_by_another_reader_is_read_with_a_notice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "held.duckdb"
    spooled = _leave_backlog(db, requests=12, spans_each=10)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], "
         "read_only=True); print('holding', flush=True); time.sleep(120)", str(db)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        code, stats, err = _stats(db, capsys)
    finally:
        holder.kill()
        holder.communicate()
    assert code == 0, err
    assert stats["spans"] == 0
    assert "warning: 12 export requests (120 spans and log records" in err
    assert f"are not in {db} yet" in err and "run this command again" in err
    assert f"locked by process {holder.pid}" in err
    # Once nothing holds the file, the same command stores them and counts them all.
    code, stats, err = _stats(db, capsys)
    assert code == 0 and stats["spans"] == spooled, err
