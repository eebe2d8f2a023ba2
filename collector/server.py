"""The collector service: both receivers, the intake and the writer in one process.

:class:`Collector` runs on an asyncio loop: ``start`` binds the ports (port 0 picks free
ones) and returns the bound addresses; ``stop`` stops accepting, lets in-flight exports
finish, commits everything queued and checkpoints the store. :func:`run_forever` is what
``tracemill serve`` runs: it stops on SIGTERM or SIGINT. :class:`CollectorThread` runs a
collector on a background thread, for embedding and tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb
import grpc
import uvicorn

from collector.grpc_server import OtlpGrpcReceiver, server_credentials
from collector.http_server import OtlpHttpApp
from collector.metrics import Metrics
from collector.pipeline import Pipeline
from collector.stats import store_stats
from tracemill.config import Settings, is_loopback, split_address
from tracemill.errors import TracemillError
from tracemill.store import Store

log = logging.getLogger("tracemill.collector")


@dataclass(frozen=True)
class BoundAddresses:
    """Where the receivers listen once started."""

    grpc: str
    """host:port of OTLP/gRPC."""
    http: str
    """host:port of OTLP/HTTP, /healthz, /readyz and /metrics."""


def check_exposure(settings: Settings) -> None:
    """Refuse to listen beyond loopback with neither a token nor TLS, unless told to.

    Raises TracemillError naming the address and the three ways out.
    """
    if settings.auth_token is not None or settings.tls_cert is not None:
        return
    if settings.insecure_listen:
        return
    for address in (settings.grpc_address, settings.http_address):
        host, _ = split_address(address)
        if not is_loopback(host):
            raise TracemillError(
                f"refusing to listen on {address} without a token or TLS: anyone who "
                "reaches it could write spans; set TRACEMILL_AUTH_TOKEN, or --tls-cert and "
                "--tls-key, or pass --insecure-listen (TRACEMILL_INSECURE_LISTEN=true)")


class QuietUvicorn(uvicorn.Server):
    """uvicorn without its own signal handlers: the process that runs it owns shutdown
    (the collector's receivers and the admin API both run it so)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class Collector:
    """One collector: receivers, intake and writer over an open store."""

    def __init__(self, settings: Settings, store: Store,
                 documents: Mapping[str, Callable[[], str]] | None = None) -> None:
        check_exposure(settings)
        self.settings = settings
        self.store = store
        self.metrics = Metrics()
        self.pipeline = Pipeline(settings, store, self.metrics)
        self.intake = self.pipeline.intake
        token = settings.auth_token.get_secret_value() if settings.auth_token else None
        self._grpc_receiver = OtlpGrpcReceiver(self.intake, token)
        self._http_app = OtlpHttpApp(
            self.intake, self.metrics, auth_token=token,
            max_message_bytes=settings.max_message_bytes, ready=lambda: self.pipeline.ready,
            dead=self.pipeline.dead_threads,
            documents={"/stats": lambda: store_stats(store).model_dump_json(),
                       **(documents or {})},
        )
        self._grpc: grpc.aio.Server | None = None
        self._http: QuietUvicorn | None = None
        self._http_task: asyncio.Task[None] | None = None

    async def start(self) -> BoundAddresses:
        """Start the writer and both receivers; return where they listen."""
        await asyncio.get_running_loop().run_in_executor(None, self.pipeline.start)
        grpc_address = await self._start_grpc()
        http_address = await self._start_http()
        bound = BoundAddresses(grpc=grpc_address, http=http_address)
        log.info("collector listening", extra={"fields": {
            "grpc": bound.grpc, "http": bound.http, "db": str(self.store.path),
            "tls": self.settings.tls_cert is not None,
            "auth": self.settings.auth_token is not None}})
        return bound

    async def _start_grpc(self) -> str:
        settings = self.settings
        limit = settings.max_message_bytes
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", limit),
            # gRPC sets SO_REUSEPORT by default: a second collector on the same port would
            # bind too and silently take half of the exports into another store.
            ("grpc.so_reuseport", 0),
        ])
        server.add_generic_rpc_handlers(self._grpc_receiver.handlers())
        host, port = split_address(settings.grpc_address)
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            if settings.tls_cert and settings.tls_key:
                bound_port = server.add_secure_port(
                    target, server_credentials(settings.tls_cert, settings.tls_key))
            else:
                bound_port = server.add_insecure_port(target)
        except RuntimeError as exc:
            raise TracemillError(
                f"cannot listen for OTLP/gRPC on {settings.grpc_address} ({exc}); is another "
                "collector running? Choose another --grpc-address (port 0 picks a free one)"
            ) from None
        await server.start()
        self._grpc = server
        return f"{host}:{bound_port}"

    async def _start_http(self) -> str:
        settings = self.settings
        host, port = split_address(settings.http_address)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            sock = socket.create_server((host, port), family=family, reuse_port=False)
        except OSError as exc:
            raise TracemillError(
                f"cannot listen for OTLP/HTTP on {settings.http_address} ({exc.strerror}); "
                "choose another --http-address (port 0 picks a free one)"
            ) from None
        config = uvicorn.Config(
            self._http_app, log_level="warning", access_log=False, lifespan="off",
            ssl_certfile=str(settings.tls_cert) if settings.tls_cert else None,
            ssl_keyfile=str(settings.tls_key) if settings.tls_key else None,
            timeout_graceful_shutdown=10,
        )
        server = QuietUvicorn(config)
        self._http = server
        self._http_task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if self._http_task.done():
                self._http_task.result()
                raise TracemillError(f"the HTTP receiver on {settings.http_address} stopped")
            await asyncio.sleep(0.01)
        return f"{host}:{sock.getsockname()[1]}"

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until everything acknowledged so far is queryable; False on timeout."""
        return self.pipeline.flush(timeout)

    async def stop(self, grace: float = 10.0) -> None:
        """Stop accepting, finish in-flight exports, store the spool, checkpoint."""
        if self._http is not None and self._http_task is not None:
            self._http.should_exit = True
            await self._http_task
        if self._grpc is not None:
            await self._grpc.stop(grace)
        await asyncio.get_running_loop().run_in_executor(None, self._close_pipeline)
        log.info("collector stopped", extra={"fields": {
            "accepted_spans": self.metrics.items("traces", "accepted"),
            "stored_spans": self.metrics.items("traces", "stored"),
            "accepted_log_records": self.metrics.items("logs", "accepted"),
            "stored_log_records": self.metrics.items("logs", "stored"),
            "spool_backlog_bytes": self.pipeline.materializer.backlog()}})

    def _close_pipeline(self) -> None:
        self.pipeline.close()
        try:
            self.store.checkpoint()
        except duckdb.Error as exc:
            # A full disk: what is committed stays in the write-ahead log and what is
            # not yet stored stays in the spool; the next start folds both in.
            log.error("could not checkpoint the store on the way out; the next start "
                      "finishes it", extra={"fields": {"error": str(exc)}})


async def run_forever(collector: Collector, ready_file: Path | None = None) -> None:
    """Serve until SIGTERM or SIGINT, then stop cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    bound = await collector.start()
    if ready_file is not None:
        _write_ready_file(ready_file, bound)
    print(f"tracemill collector listening: OTLP/gRPC {bound.grpc}, OTLP/HTTP "
          f"http{'s' if collector.settings.tls_cert else ''}://{bound.http} "
          f"(store {collector.store.path})", flush=True)
    await stop.wait()
    log.info("shutting down: draining and committing")
    await collector.stop()


def _write_ready_file(path: Path, bound: BoundAddresses) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps({"pid": os.getpid(), "grpc": bound.grpc, "http": bound.http}))
    temporary.replace(path)


class CollectorThread:
    """A collector running on its own thread and event loop (for embedding and tests)."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self.collector = Collector(settings, store)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tracemill-loop",
                                        daemon=True)
        self.bound: BoundAddresses | None = None

    def start(self) -> BoundAddresses:
        """Start serving; return the bound addresses."""
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self.collector.start(), self._loop)
        self.bound = future.result(timeout=30)
        return self.bound

    def stop(self) -> None:
        """Stop serving and commit everything; the store stays open. Safe to call twice."""
        if self._loop.is_closed():
            return
        future = asyncio.run_coroutine_threadsafe(self.collector.stop(), self._loop)
        future.result(timeout=60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
