"""Export responses: success, with ``partial_success`` when items were rejected."""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from collector.checks import Signal
from collector.writer import WriteResult

ExportResponse = ExportTraceServiceResponse | ExportLogsServiceResponse


def export_response(signal: Signal, result: WriteResult) -> ExportResponse:
    """The protobuf response for one committed request."""
    if signal == "traces":
        traces = ExportTraceServiceResponse()
        if result.rejected:
            traces.partial_success.rejected_spans = result.rejected
            traces.partial_success.error_message = result.message
        return traces
    logs = ExportLogsServiceResponse()
    if result.rejected:
        logs.partial_success.rejected_log_records = result.rejected
        logs.partial_success.error_message = result.message
    return logs
