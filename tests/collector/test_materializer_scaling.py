"""Storing a group costs the same per span whatever the group's size.

Commit 3b637a4 summed ``Table.nbytes`` over every waiting table each time a request's rows
arrived: quadratic in the requests of a group, ~10 s of CPU for one 20,000-span group of
64-span requests instead of ~1 s. The collector then stored so slowly that a SIGTERM drain
ran out of time and `test_sigkill_loses_nothing_acknowledged` read the spans still in the
spool as lost. This test measures the real path (spool, materializer, DuckDB) directly.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from collector.backlog import store_spooled
from collector.pipeline import spool_folder
from collector.spool import Spool, SpooledRequest
from tests.support.otlp import genai_span, trace_request
from tracemill.config import Settings
from tracemill.store import open_store

pytestmark = pytest.mark.slow

_REQUESTS = 320
_SPANS = 64


def _fill_spool(db: Path) -> None:
    spool = Spool(spool_folder(db))
    try:
        for _ in range(_REQUESTS // 32):
            spool.append([
                SpooledRequest("traces",
                               trace_request([genai_span() for _ in range(_SPANS)])
                               .SerializeToString(), _SPANS, time.time_ns())
                for _ in range(32)])
    finally:
        spool.close()


def _store_cpu_seconds(db: Path, max_commit_items: int) -> tuple[float, int]:
    """CPU seconds this process spends storing ``db``'s whole spool, and the spans stored."""
    store = open_store(db)
    try:
        started = time.process_time()
        store_spooled(store, Settings(db=db, max_commit_items=max_commit_items))
        spent = time.process_time() - started
        return spent, int(store.query("SELECT count(*) FROM otlp_spans")[0][0])
    finally:
        store.close()


def test_one_large_group_costs_no_more_per_span_than_small_groups(tmp_path: Path) -> None:
    small, large = tmp_path / "small" / "store.duckdb", tmp_path / "large" / "store.duckdb"
    small.parent.mkdir()
    large.parent.mkdir()
    _fill_spool(small)
    shutil.copytree(spool_folder(small), spool_folder(large))
    everything = _REQUESTS * _SPANS
    _store_cpu_seconds(tmp_path / "warm.duckdb", everything)  # imports, first DuckDB file
    in_eight, stored_small = _store_cpu_seconds(small, everything // 8)
    in_one, stored_large = _store_cpu_seconds(large, everything)
    assert stored_small == stored_large == everything
    # linear code: about 1x (one commit instead of eight is if anything cheaper);
    # per-request work over the whole group: 3x and more
    assert in_one < 2.0 * in_eight, (
        f"storing {everything} spans as one group took {in_one:.2f} CPU-s, as eight "
        f"groups {in_eight:.2f} CPU-s: the materializer's work per request grows with the "
        "group")
