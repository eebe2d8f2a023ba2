"""Bounded memory: one legal request of many minimal spans must not take the machine.

Before, rows cost ~13 KB a span while a request was decoded (each orjson bytes object
kept a 4 KiB buffer, and the whole request became rows at once): 1.6M spans in 62 MB
peaked at 21 GB. Now a large request is decoded and inserted in chunks. Peak RSS is
measured in fresh processes (``tests/collector/memory_probe.py``) at two sizes; the
growth per additional span must stay far below the old cost.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

_PER_SPAN_LIMIT = 1536
"""Bytes of peak RSS per additional minimal span (~700 measured; 13,000+ before)."""


def _probe(*args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "tests.collector.memory_probe", *args],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _growth(tmp_path: Path, shape: str, spans: int, db_memory_limit: str = "64MB"
            ) -> dict[str, float]:
    payload = tmp_path / f"{shape}-{spans}.pb"
    _probe("build", shape, str(spans), str(payload))
    measured: dict[str, float] = json.loads(
        _probe("measure", str(payload), str(tmp_path / f"{shape}-{spans}.duckdb"),
               db_memory_limit))
    assert measured["stored"] == spans
    return measured


def test_peak_memory_per_span_of_one_large_request_is_bounded(tmp_path: Path) -> None:
    small = _growth(tmp_path, "tiny", 40_000)
    large = _growth(tmp_path, "tiny", 200_000)
    per_span = (large["growth_bytes"] - small["growth_bytes"]) / (200_000 - 40_000)
    assert per_span < _PER_SPAN_LIMIT, (
        f"peak RSS grew {per_span:.0f} bytes per extra span ({small} vs {large})")


_SPANS_IN_16_MB = {"tiny": 409_000, "attributes": 235, "nested": 46_000}
"""Spans of each worst shape in about 16 MB on the wire (bench/collector_memory.py)."""


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(_SPANS_IN_16_MB))
def test_worst_request_shapes_stay_within_a_small_multiple_of_their_size(
        tmp_path: Path, shape: str) -> None:
    """Tiny spans, huge attributes, deep nesting: growth is a fixed part (DuckDB's 64 MB
    buffers, its transaction and one chunk of rows: 120-190 MiB measured at 16 and 62 MB of
    tiny spans) plus a few copies of the request, never a cost per span or attribute."""
    measured = _growth(tmp_path, shape, _SPANS_IN_16_MB[shape])
    wire = measured["payload_bytes"]
    assert measured["growth_bytes"] < 224 * 2**20 + 4 * wire, (
        f"{shape}: peak RSS grew {measured['growth_bytes'] / 2**20:.0f} MiB for a "
        f"{wire / 2**20:.0f} MiB request")
    assert measured["peak_rss_bytes"] < 2**30
