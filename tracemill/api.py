"""The admin HTTP API of ``tracemill serve``: ``/api/v1/...`` on its own port.

It answers in the same records the command line prints with ``--json`` (map situations,
conversations, runs, rollouts), so that the CLI can ask it while the service holds the
store and print the same output. The OpenAPI document is ``/api/v1/openapi.json``.

It listens on ``api_address`` (default 127.0.0.1:4319), apart from the ingestion ports:
agents reach OTLP across the cluster while administration stays on loopback, the admin
token (``admin_token``) is separate from the ingestion token, and a token is required to
listen beyond loopback. No CORS headers are sent unless ``cors_origins`` names origins, so
browsers on other origins cannot read it, and :mod:`tracemill.api_guard` refuses other
host names (DNS rebinding) and changes sent from other origins' pages. Invalid input is
answered 422 with the problems (:func:`validation_message`), never the input itself.
Every JSON answer passes through the ``redact`` setting's
:class:`~tracemill.redact.Redactor`, so the page that reads the API shows no redacted
value either.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import socket
import threading
from typing import Annotated, Any

import uvicorn
from fastapi import Depends, FastAPI, HTTPException
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from collector.server import QuietUvicorn
from generator.schedule import ServiceJobs
from tracemill.api_context import PREFIX, ApiContext, error_responses
from tracemill.api_guard import RequestGuard, answered_hosts
from tracemill.api_map import map_routes
from tracemill.api_runs import export_folder, run_routes
from tracemill.config import Settings, is_loopback, join_address, split_address
from tracemill.errors import TracemillError
from tracemill.redact import Redactor, redactor
from tracemill.store import Store

__all__ = ["ApiServer", "build_app", "check_api_exposure", "export_folder",
           "validation_message"]

_BEARER = HTTPBearer(auto_error=False, description="TRACEMILL_ADMIN_TOKEN, when it is set.")
_log = logging.getLogger("tracemill.api")


def check_api_exposure(settings: Settings) -> None:
    """Refuse an admin API beyond loopback without ``admin_token``."""
    host, _ = split_address(settings.api_address)
    if settings.admin_token is None and not is_loopback(host):
        raise TracemillError(
            f"refusing to serve the admin API on {settings.api_address} without a token: "
            "anyone who reaches it could read conversations and start runs; set "
            "TRACEMILL_ADMIN_TOKEN (separate from TRACEMILL_AUTH_TOKEN) or bind it to "
            "loopback with --api-address 127.0.0.1:4319")


def _redacting_response(redact: Redactor) -> type[JSONResponse]:
    class RedactingJSONResponse(JSONResponse):
        """A JSON answer with the ``redact`` keys' values masked."""

        def render(self, content: Any) -> bytes:
            return super().render(redact.apply(content))

    return RedactingJSONResponse


def build_app(settings: Settings, store: Store, jobs: ServiceJobs) -> FastAPI:
    """The API over an open store and the service's jobs (routes in
    :mod:`tracemill.api_map` and :mod:`tracemill.api_runs`)."""
    token = settings.admin_token.get_secret_value() if settings.admin_token else None
    redact = redactor(settings.redact)

    def authorized(credentials: Annotated[HTTPAuthorizationCredentials | None,
                                          Depends(_BEARER)] = None) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "missing or wrong admin token: send "
                                     "'Authorization: Bearer <TRACEMILL_ADMIN_TOKEN>'",
                                headers={"WWW-Authenticate": "Bearer"})

    answer = _redacting_response(redact)
    app = _AdminApp(title="tracemill", version="1", openapi_url=f"{PREFIX}/openapi.json",
                    docs_url=None, redoc_url=None, dependencies=[Depends(authorized)],
                    responses=error_responses(400, 401, 405), default_response_class=answer)
    if settings.cors_origins:  # closed unless origins are named
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST"],
                           allow_headers=["authorization", "content-type"])
    # outermost: other hosts and cross-site changes are refused before anything runs
    app.add_middleware(RequestGuard, hosts=answered_hosts(settings),
                       origins=settings.cors_origins)
    context = ApiContext(settings, store, jobs, redact)
    app.include_router(map_routes(context))
    app.include_router(run_routes(context))

    @app.exception_handler(StarletteHTTPException)
    async def _error(_: Any, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code,
                            headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Any, exc: RequestValidationError) -> JSONResponse:
        # the problems without the input FastAPI would echo: it may hold what the
        # redact setting hides, and the answer keeps the API's one error shape
        return answer({"error": validation_message(exc)}, status_code=422)

    @app.exception_handler(Exception)
    async def _crash(_: Any, exc: Exception) -> JSONResponse:
        _log.error("API request failed", extra={"fields": {"error": repr(exc)}})
        return JSONResponse({"error": f"internal error: {type(exc).__name__}"},
                            status_code=500)

    from tracemill.page import mount as mount_page

    mount_page(app)  # the web page at /ui/ (tracemill/page), outside the token dependency
    return app


def validation_message(exc: RequestValidationError) -> str:
    """``loc: msg; ...`` for each problem of a request (``body.budget: Input should be a
    valid string``), without the input."""
    problems = [f"{'.'.join(str(part) for part in error.get('loc', ()))}: "
                f"{error.get('msg', 'invalid')}" for error in exc.errors()]
    return "; ".join(problems) or "the request does not match the API's schema"


class _AdminApp(FastAPI):
    """FastAPI whose OpenAPI document declares the API's own 422 answer (:class:`ErrorBody`,
    from :func:`validation_message`) instead of FastAPI's default one."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is not None:
            return self.openapi_schema
        document = super().openapi()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                invalid = operation.get("responses", {}).get("422")
                if invalid is not None:
                    operation["responses"]["422"] = {
                        "description": "The request does not match the schema: each field "
                                       "and its problem",
                        "content": {"application/json": {
                            "schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
        schemas = document.get("components", {}).get("schemas", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        return document


class ApiServer:
    """The API on its own thread and event loop, on a socket bound at construction."""

    def __init__(self, settings: Settings, app: FastAPI) -> None:
        host, port = split_address(settings.api_address)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.create_server((host, port), family=family, reuse_port=False)
        self.address = join_address(host, self._socket.getsockname()[1])
        """Where it listens (host:port; ``[::1]:port`` for IPv6, as a URL needs it)."""
        self._server = QuietUvicorn(uvicorn.Config(app, log_level="warning", access_log=False,
                                               lifespan="off"))
        self._thread = threading.Thread(target=self._run, name="tracemill-api", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._socket]))

    def start(self) -> None:
        """Start serving."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving (requests under way finish)."""
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self._socket.close()
