"""The OTLP/gRPC receiver: TraceService/Export and LogsService/Export.

Handlers receive raw bytes (no deserializer) and hand them to the intake; they never see
SQL. Outcomes map to OTLP status codes: success with ``partial_success`` for rejected
items, INVALID_ARGUMENT for what can never succeed, UNAVAILABLE with RetryInfo (in both
``grpc-status-details-bin`` and ``google.rpc.retryinfo-bin``, which the OpenTelemetry
exporters read) under back-pressure, UNAUTHENTICATED for a missing or wrong token.
Oversize messages are refused by gRPC itself with RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from google.protobuf.any_pb2 import Any as AnyProto
from google.protobuf.duration_pb2 import Duration
from google.rpc import code_pb2, error_details_pb2, status_pb2

from collector.checks import Signal
from collector.errors import Backpressure, InvalidRequest, WriteFailed
from collector.intake import Intake
from collector.responses import ExportResponse, export_response

log = logging.getLogger("tracemill.collector.grpc")

TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"

def _retry_metadata(message: str, seconds: int) -> tuple[tuple[str, bytes], ...]:
    retry = error_details_pb2.RetryInfo(retry_delay=Duration(seconds=seconds))
    detail = AnyProto()
    detail.Pack(retry)
    status = status_pb2.Status(code=code_pb2.UNAVAILABLE, message=message, details=[detail])
    return (
        ("grpc-status-details-bin", status.SerializeToString()),
        ("google.rpc.retryinfo-bin", retry.SerializeToString()),
    )


class OtlpGrpcReceiver:
    """Builds the gRPC handlers for both OTLP services around one intake."""

    def __init__(self, intake: Intake, auth_token: str | None) -> None:
        self._intake = intake
        self._expected_auth = f"Bearer {auth_token}".encode() if auth_token else None

    def handlers(self) -> list[grpc.GenericRpcHandler]:
        """Generic handlers for TraceService/Export and LogsService/Export."""
        def method(signal: Signal) -> grpc.RpcMethodHandler:
            return grpc.unary_unary_rpc_method_handler(
                self._handler(signal),
                request_deserializer=None,
                response_serializer=lambda message: message.SerializeToString(),
            )

        return [
            grpc.method_handlers_generic_handler(TRACE_SERVICE, {"Export": method("traces")}),
            grpc.method_handlers_generic_handler(LOGS_SERVICE, {"Export": method("logs")}),
        ]

    def _handler(
        self, signal: Signal
    ) -> Callable[[bytes, grpc.aio.ServicerContext], Awaitable[ExportResponse]]:
        async def export(request: bytes, context: grpc.aio.ServicerContext) -> ExportResponse:
            peer = context.peer() or ""
            if self._expected_auth is not None and not self._authorized(context):
                self._intake.refuse_unauthenticated(signal, "grpc", peer,
                                                    self._token_given(context))
                await context.abort(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "missing or wrong bearer token: send metadata "
                    "'authorization: Bearer <token>' (OTEL_EXPORTER_OTLP_HEADERS)",
                )
            try:
                result = await self._intake.export(signal, request, "grpc", peer=peer)
            except InvalidRequest as exc:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            except Backpressure as exc:
                await context.abort(
                    grpc.StatusCode.UNAVAILABLE,
                    str(exc),
                    trailing_metadata=_retry_metadata(str(exc), exc.retry_after),
                )
            except WriteFailed as exc:
                await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc),
                                    trailing_metadata=_retry_metadata(str(exc), exc.retry_after))
            return export_response(signal, result)

        return export

    @staticmethod
    def _token_given(context: grpc.aio.ServicerContext) -> bool:
        return any(key == "authorization" for key, _ in context.invocation_metadata() or ())

    def _authorized(self, context: grpc.aio.ServicerContext) -> bool:
        assert self._expected_auth is not None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization":
                given = value if isinstance(value, bytes) else value.encode()
                return hmac.compare_digest(given, self._expected_auth)
        return False


def server_credentials(cert: Path, key: Path) -> grpc.ServerCredentials:
    """TLS credentials from PEM files."""
    return grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
