"""The collector: OTLP/gRPC and OTLP/HTTP receivers that store spans and log records.

Requests are decoded by pure functions (:mod:`collector.decode`), admitted within a byte
budget and group-committed by one writer thread (:mod:`collector.writer`); success is
answered only after commit.
"""

from collector.decode import DecodedBatch, decode_logs, decode_traces
from collector.errors import (
    Backpressure,
    CollectorError,
    InvalidRequest,
    Unauthenticated,
    WriteFailed,
)
from collector.ingest import FileReport, ingest_file
from collector.intake import Intake
from collector.server import BoundAddresses, Collector, CollectorThread, run_forever
from collector.stats import StoreStats, store_stats
from collector.values import (
    attributes_from_json,
    attributes_to_json,
    value_from_json,
    value_to_json,
)
from collector.writer import Writer, WriteResult

__all__ = [
    "Backpressure",
    "BoundAddresses",
    "Collector",
    "CollectorError",
    "CollectorThread",
    "DecodedBatch",
    "FileReport",
    "Intake",
    "InvalidRequest",
    "StoreStats",
    "Unauthenticated",
    "WriteFailed",
    "WriteResult",
    "Writer",
    "attributes_from_json",
    "attributes_to_json",
    "decode_logs",
    "decode_traces",
    "ingest_file",
    "run_forever",
    "store_stats",
    "value_from_json",
    "value_to_json",
]
