"""Transport-and-parse-only OTLP/gRPC trace server: the ceiling for the collector benchmark.

It does what every OTLP collector must do before any work of its own: receive an
``ExportTraceServiceRequest`` over gRPC, parse it with
``ExportTraceServiceRequest.FromString`` and answer success. Nothing is stored, so
whatever throughput it reaches on a machine is the most the real collector can reach
with the same gRPC stack and protobuf runtime.

It speaks the same command-line contract as ``python -m tracemill serve`` so that
``bench/collector_load.py`` starts, measures and stops both the same way::

    python bench/parse_only_server.py serve --db IGNORED --grpc-address 127.0.0.1:0 \\
        --http-address 127.0.0.1:0 --ready-file /tmp/ready.json

Once listening it writes ``{"pid": N, "grpc": "127.0.0.1:PORT", "http": null}``
atomically to the ready file (it serves no HTTP). SIGTERM or SIGINT stops it and it
exits 0 after printing how many requests and spans it parsed to stderr. ``--db`` is
accepted and ignored: there is no store.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_EMPTY_RESPONSE = ExportTraceServiceResponse().SerializeToString()


class _Counters:
    """What the server has parsed so far (reported on exit)."""

    def __init__(self) -> None:
        self.requests = 0
        """Export calls answered."""
        self.bytes = 0
        """Serialized request bytes parsed."""


def _handler(counters: _Counters) -> grpc.GenericRpcHandler:
    """Return a generic handler for ``TraceService/Export`` that parses and acknowledges.

    The request arrives as raw bytes (no deserializer) so that parsing happens in our
    handler, where it is counted, exactly once, with ``FromString``.
    """

    async def export(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        ExportTraceServiceRequest.FromString(request)
        counters.requests += 1
        counters.bytes += len(request)
        return _EMPTY_RESPONSE

    return grpc.method_handlers_generic_handler(
        _SERVICE, {"Export": grpc.unary_unary_rpc_method_handler(export)}
    )


def _write_ready_file(path: Path, payload: dict[str, object]) -> None:
    """Write ``payload`` as JSON to ``path`` atomically (temporary file, then rename)."""
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(payload))
    os.replace(tmp, path)


async def _serve(grpc_address: str, ready_file: Path) -> _Counters:
    """Serve until SIGTERM/SIGINT; return the counters."""
    counters = _Counters()
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
        ]
    )
    server.add_generic_rpc_handlers((_handler(counters),))
    port = server.add_insecure_port(grpc_address)
    if port == 0:
        raise SystemExit(f"parse_only_server: cannot bind gRPC address {grpc_address!r}")
    await server.start()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    host = grpc_address.rsplit(":", 1)[0]
    _write_ready_file(ready_file, {"pid": os.getpid(), "grpc": f"{host}:{port}", "http": None})
    await stop.wait()
    await server.stop(grace=5.0)
    return counters


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; mirrors ``tracemill serve``'s flags."""
    parser = argparse.ArgumentParser(
        prog="parse_only_server.py",
        description="OTLP/gRPC trace server that only parses requests and answers success.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve until SIGTERM")
    serve.add_argument("--db", help="accepted for contract compatibility; ignored (no store)")
    serve.add_argument(
        "--grpc-address", default="127.0.0.1:0", help="HOST:PORT to listen on (port 0: any)"
    )
    serve.add_argument(
        "--http-address", help="accepted for contract compatibility; no HTTP is served"
    )
    serve.add_argument(
        "--ready-file", required=True, type=Path, help="where to write the ready JSON"
    )
    args = parser.parse_args(argv)

    counters = asyncio.run(_serve(args.grpc_address, args.ready_file))
    print(
        f"parse_only_server: parsed {counters.requests} requests, {counters.bytes} bytes",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
