"""A compiled decoder built from another version of the source (an update without
`pip install -e .`) is not used: the collector decodes in Python and says why, instead of
failing on every request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_STALE = """
import sys, types
stale = types.ModuleType("collector._fastdecode")  # an old build: no INTERFACE
sys.modules["collector._fastdecode"] = stale  # before anything imports the real one
from collector import native
from collector.decode import decode_traces
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
print(native.AVAILABLE)
print(native.MISSING_HINT)
request = ExportTraceServiceRequest()
span = request.resource_spans.add().scope_spans.add().spans.add()
span.trace_id, span.span_id, span.name = b"\\x01" * 16, b"\\x02" * 8, "probe"
print(decode_traces(request.SerializeToString(), 0).rows.num_rows)
"""


def test_a_stale_build_is_left_unused_with_the_reason() -> None:
    done = subprocess.run([sys.executable, "-c", _STALE], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    available, hint, rows = done.stdout.strip().split("\n")
    assert available == "False"
    assert "built from another version of the source (interface 1, this code needs" in hint
    assert "pip install -e ." in hint
    assert rows == "1"  # decoded in Python


def test_the_built_extension_speaks_this_interface() -> None:
    from collector import native

    if native.AVAILABLE:  # built (CI builds it): the interfaces agree
        from collector import _fastdecode

        assert _fastdecode.INTERFACE == native.INTERFACE
