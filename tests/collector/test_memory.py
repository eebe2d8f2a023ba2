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


def _growth(tmp_path: Path, shape: str, spans: int) -> dict[str, float]:
    payload = tmp_path / f"{shape}-{spans}.pb"
    _probe("build", shape, str(spans), str(payload))
    measured: dict[str, float] = json.loads(
        _probe("measure", str(payload), str(tmp_path / f"{shape}-{spans}.duckdb"), "64MB"))
    assert measured["stored"] == spans
    return measured


def test_peak_memory_per_span_of_one_large_request_is_bounded(tmp_path: Path) -> None:
    small = _growth(tmp_path, "tiny", 40_000)
    large = _growth(tmp_path, "tiny", 200_000)
    per_span = (large["growth_bytes"] - small["growth_bytes"]) / (200_000 - 40_000)
    assert per_span < _PER_SPAN_LIMIT, (
        f"peak RSS grew {per_span:.0f} bytes per extra span ({small} vs {large})")
