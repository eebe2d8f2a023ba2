"""The collector: OTLP/gRPC and OTLP/HTTP receivers that store spans and log records.

A request is checked (:mod:`collector.checks`), appended to an fsync'd spool and only then
acknowledged (:mod:`collector.writer`); the materializer (:mod:`collector.materializer`)
decodes spooled requests in worker processes and stores them as rows exactly once.
"""

from collector.backlog import settle_spool, spool_backlog, store_spooled
from collector.checks import RequestCheck, check_request
from collector.decode import DecodedBatch, decode_chunks, decode_logs, decode_traces
from collector.errors import (
    Backpressure,
    CollectorError,
    InvalidRequest,
    Unauthenticated,
    WriteFailed,
)
from collector.ingest import FileReport, ingest_file
from collector.intake import Intake
from collector.pipeline import Pipeline, spool_folder
from collector.server import BoundAddresses, Collector, CollectorThread, check_exposure, run_forever
from collector.spool import SpoolBacklog
from collector.stats import StoreStats, store_stats
from collector.values import (
    attributes_from_json,
    attributes_to_json,
    value_from_json,
    value_to_json,
)
from collector.writer import WriteResult

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
    "Pipeline",
    "RequestCheck",
    "SpoolBacklog",
    "StoreStats",
    "Unauthenticated",
    "WriteFailed",
    "WriteResult",
    "attributes_from_json",
    "attributes_to_json",
    "check_exposure",
    "check_request",
    "decode_chunks",
    "decode_logs",
    "decode_traces",
    "ingest_file",
    "run_forever",
    "settle_spool",
    "spool_backlog",
    "spool_folder",
    "store_spooled",
    "store_stats",
    "value_from_json",
    "value_to_json",
]
