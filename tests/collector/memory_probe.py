"""Peak memory of storing one export request, measured in a fresh process.

``python -m tests.collector.memory_probe build SHAPE N FILE`` writes one serialized
ExportTraceServiceRequest of a worst shape; ``... measure FILE DB [DB_MEMORY_LIMIT]``
stores it through the
collector's real pipeline (intake check, spool, decode, insert) and prints JSON with the
peak RSS growth (``ru_maxrss``, the kernel's high-water mark) over the process's state
just before the request arrived. Building and measuring are separate processes so the
request's construction does not count.

Shapes: ``tiny`` (minimal spans: ids only, the most spans per byte), ``attributes`` (each
span with one 64 KiB string attribute and 200 small ones), ``nested`` (each span with one
attribute nested 17 times in a key-value list inside an array: 91 message
levels, near the protobuf parser's limit of 100).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

SHAPES = ("tiny", "attributes", "nested")


def build(shape: str, spans: int) -> bytes:
    """One request of ``spans`` spans of the given shape."""
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    big = "x" * 65536
    for index in range(spans):
        span = scope.spans.add()
        span.trace_id = os.urandom(16)
        span.span_id = os.urandom(8)
        span.start_time_unix_nano = 1_700_000_000_000_000_000 + index
        if shape == "attributes":
            span.attributes.append(KeyValue(key="big", value=AnyValue(string_value=big)))
            span.attributes.extend(KeyValue(key=f"k{k}", value=AnyValue(int_value=k))
                                   for k in range(200))
        elif shape == "nested":
            value = AnyValue(string_value="leaf")
            for depth in range(17):  # 5 message levels each: near protobuf's limit of 100
                outer = AnyValue()
                outer.kvlist_value.values.append(KeyValue(key=f"d{depth}", value=value))
                wrapper = AnyValue()
                wrapper.array_value.values.append(outer)
                value = wrapper
            span.attributes.append(KeyValue(key="deep", value=value))
        elif shape != "tiny":
            raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")
    payload: bytes = request.SerializeToString()
    return payload


def measure(payload_file: Path, db: Path, db_memory_limit: str = "512MB") -> dict[str, float]:
    """Store the request in ``payload_file`` into ``db``; peak RSS growth in bytes.

    DuckDB's buffer pool is part of the growth, up to ``db_memory_limit``.
    """
    from collector.metrics import Metrics
    from collector.pipeline import Pipeline
    from tracemill.config import Settings
    from tracemill.store import open_store

    payload = payload_file.read_bytes()
    # what `tracemill serve` runs with
    settings = Settings(db=db, decode_workers=0, db_memory_limit=db_memory_limit)
    store = open_store(db, memory_limit=settings.db_memory_limit,
                       checkpoint_threshold=settings.db_checkpoint_threshold,
                       compression=settings.db_compression)
    pipeline = Pipeline(settings, store, Metrics())
    pipeline.start()
    try:
        baseline = _peak_rss()
        started = time.perf_counter()
        result = pipeline.intake.export_blocking("traces", payload, "file")
        assert pipeline.flush(timeout=3600), "the request was not stored"
        seconds = time.perf_counter() - started
        peak = _peak_rss()
    finally:
        pipeline.close(drain_all=True)
        store.close()
    return {"spans": result.accepted, "payload_bytes": len(payload),
            "baseline_rss_bytes": baseline, "peak_rss_bytes": peak,
            "growth_bytes": max(peak - baseline, 0), "seconds": seconds,
            "stored": pipeline.metrics.items("traces", "stored")}


def _peak_rss() -> int:
    # Linux reports ru_maxrss in KiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv: list[str]) -> int:
    """Command line: ``build SHAPE N FILE`` or ``measure FILE DB [DB_MEMORY_LIMIT]``."""
    if argv[:1] == ["build"] and len(argv) == 4:
        Path(argv[3]).write_bytes(build(argv[1], int(argv[2])))
        return 0
    if argv[:1] == ["measure"] and len(argv) in (3, 4):
        print(json.dumps(measure(Path(argv[1]), Path(argv[2]), *argv[3:])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
