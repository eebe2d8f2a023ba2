"""The OTLP/HTTP receiver, health and metrics, as a small ASGI application.

Routes: ``POST /v1/traces`` and ``POST /v1/logs`` (``application/x-protobuf`` or
``application/json``, optionally ``Content-Encoding: gzip``), ``GET /healthz`` (the process
is up and its worker threads live; 503 naming the dead ones otherwise), ``GET /readyz``
(the spool and the store accept work; the body also counts dead-letter requests),
``GET /metrics`` (Prometheus text),
``GET /stats`` (store counts as JSON) and any other JSON documents the process adds (the
failure map at ``/map`` when it processes); all but health need the token when set.
Errors answer a ``google.rpc.Status`` in the request's encoding, as OTLP/HTTP specifies:
400 malformed, 401 token, 413 too large, 415 media type or encoding, 503 + Retry-After
under back-pressure or while the disk is full.
"""

from __future__ import annotations

import asyncio
import hmac
import zlib
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

import orjson
from google.rpc import code_pb2, status_pb2

from collector.checks import NOTHING_REFUSED, Signal
from collector.errors import Backpressure, InvalidRequest, WriteFailed
from collector.intake import Intake
from collector.metrics import Metrics
from collector.otlp_json import json_to_protobuf
from collector.responses import export_response
from collector.writer import WriteResult

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_ROUTES: dict[str, Signal] = {"/v1/traces": "traces", "/v1/logs": "logs"}


class _HttpError(Exception):
    def __init__(self, status: int, code: int, message: str,
                 headers: tuple[tuple[bytes, bytes], ...] = (), *, logged: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.headers = headers
        self.logged = logged
        """Whether the intake already counted and logged this refusal."""


class OtlpHttpApp:
    """ASGI application serving OTLP/HTTP, health, readiness and metrics."""

    def __init__(self, intake: Intake, metrics: Metrics, *, auth_token: str | None,
                 max_message_bytes: int, ready: Callable[[], bool],
                 documents: Mapping[str, Callable[[], str]],
                 dead: Callable[[], list[str]] = list) -> None:
        self._intake = intake
        self._metrics = metrics
        self._expected_auth = f"Bearer {auth_token}".encode() if auth_token else None
        self._max = max_message_bytes
        self._ready = ready
        self._dead = dead
        self._documents = dict(documents)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        if path == "/healthz":
            dead = self._dead()
            if dead:
                await _send(send, 503, JSON, orjson.dumps(
                    {"status": "worker thread died", "dead_threads": dead}))
            else:
                await _send(send, 200, JSON, b'{"status":"ok"}')
        elif path == "/readyz":
            ok = self._ready()
            # dead letters do not make the collector unready, but whoever watches it should see them
            await _send(send, 200 if ok else 503, JSON, orjson.dumps({
                "status": "ready" if ok else "not ready",
                "dead_letter_requests": self._metrics.dead_letters()}))
        elif path == "/metrics" or path in self._documents:
            if not self._authorized(scope):
                await _send(send, 401, "text/plain", b"missing or wrong bearer token\n")
            elif path == "/metrics":
                await _send(send, 200, "text/plain; version=0.0.4",
                            self._metrics.render().encode())
            else:
                loop = asyncio.get_running_loop()
                body = await loop.run_in_executor(None, self._documents[path])
                await _send(send, 200, JSON, body.encode())
        elif path in _ROUTES:
            if method != "POST":
                await _send(send, 405, "text/plain", b"use POST\n", ((b"allow", b"POST"),))
                return
            await self._export(_ROUTES[path], scope, receive, send)
        else:
            await _send(send, 404, "text/plain",
                        b"not found: OTLP/HTTP is served at /v1/traces and /v1/logs\n")

    async def _export(self, signal: Signal, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        reply_type = JSON if content_type == JSON else PROTOBUF
        client = scope.get("client")
        peer = f"{client[0]}:{client[1]}" if client else ""
        try:
            if not self._authorized(scope):
                self._intake.refuse_unauthenticated(signal, "http", peer,
                                                    "authorization" in headers)
                raise _HttpError(401, code_pb2.UNAUTHENTICATED,
                                 "missing or wrong bearer token: send 'Authorization: "
                                 "Bearer <token>' (OTEL_EXPORTER_OTLP_HEADERS)")
            if content_type not in (PROTOBUF, JSON):
                raise _HttpError(415, code_pb2.INVALID_ARGUMENT,
                                 f"unsupported Content-Type {content_type or '(none)'!r}: "
                                 f"send {PROTOBUF} or {JSON}")
            body = await self._read_body(headers, receive)
            refused = NOTHING_REFUSED
            payload = body
            if content_type == JSON:
                # OTLP/JSON parsing is pure Python: keep it off the event loop
                loop = asyncio.get_running_loop()
                try:
                    converted = await loop.run_in_executor(None, json_to_protobuf, signal,
                                                           body)
                except InvalidRequest as exc:
                    raise _HttpError(exc.http_status, code_pb2.INVALID_ARGUMENT,
                                     str(exc)) from None
                payload, refused = converted.payload, converted.refused
            try:
                result = await self._intake.export(signal, payload, "http", peer=peer,
                                                   refused=refused)
            except InvalidRequest as exc:
                raise _HttpError(exc.http_status, code_pb2.INVALID_ARGUMENT, str(exc),
                                 logged=True) from None
            except Backpressure as exc:
                raise _HttpError(503, code_pb2.UNAVAILABLE, str(exc),
                                 ((b"retry-after", str(exc.retry_after).encode()),),
                                 logged=True) from None
            except WriteFailed as exc:
                raise _HttpError(503, code_pb2.UNAVAILABLE, str(exc),
                                 ((b"retry-after", str(exc.retry_after).encode()),),
                                 logged=True) from None
        except _HttpError as exc:
            if not exc.logged and exc.status != 401:
                # refused before the intake saw it: too large, media type, not JSON
                self._intake.refuse(signal, "http", peer, "invalid", str(exc))
            await _send(send, exc.status, reply_type,
                        _status_body(reply_type, exc.code, str(exc)), exc.headers)
            return
        await _send(send, 200, reply_type, _success_body(signal, reply_type, result))

    async def _read_body(self, headers: dict[str, str], receive: Receive) -> bytes:
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            raise _HttpError(415, code_pb2.INVALID_ARGUMENT,
                             f"unsupported Content-Encoding {encoding!r}: send gzip or none")
        declared = headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self._max:
            raise self._too_large(int(declared))
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _HttpError(400, code_pb2.CANCELLED, "the client disconnected")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max:
                raise self._too_large(size)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if encoding == "gzip":
            body = self._gunzip(body)
        return body

    def _gunzip(self, body: bytes) -> bytes:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(body, self._max + 1)
        except zlib.error as exc:
            raise _HttpError(
                400, code_pb2.INVALID_ARGUMENT,
                f"Content-Encoding is gzip but the body is not valid gzip: {exc}") from None
        if len(data) > self._max or inflater.unconsumed_tail:
            raise self._too_large(len(data))
        if not inflater.eof:
            raise _HttpError(400, code_pb2.INVALID_ARGUMENT, "the gzip body is truncated")
        return data

    def _too_large(self, size: int) -> _HttpError:
        return _HttpError(413, code_pb2.RESOURCE_EXHAUSTED,
                          f"the request has more than {self._max} bytes ({size} seen); "
                          "export in smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE) or "
                          "raise max_message_bytes")

    def _authorized(self, scope: Scope) -> bool:
        if self._expected_auth is None:
            return True
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                return hmac.compare_digest(value, self._expected_auth)
        return False


def _headers(scope: Scope) -> dict[str, str]:
    return {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}


def _status_body(content_type: str, code: int, message: str) -> bytes:
    if content_type == JSON:
        return orjson.dumps({"code": code, "message": message})
    body: bytes = status_pb2.Status(code=code, message=message).SerializeToString()
    return body


def _success_body(signal: Signal, content_type: str, result: WriteResult) -> bytes:
    if content_type == JSON:
        if not result.rejected:
            return b"{}"
        key = "rejectedSpans" if signal == "traces" else "rejectedLogRecords"
        return orjson.dumps({"partialSuccess": {key: str(result.rejected),
                                                "errorMessage": result.message}})
    body: bytes = export_response(signal, result).SerializeToString()
    return body


async def _send(send: Send, status: int, content_type: str, body: bytes,
                extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    headers = [(b"content-type", content_type.encode()),
               (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
