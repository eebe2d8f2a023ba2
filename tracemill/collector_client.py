"""Asking the running service that holds the store (``tracemill serve``) over HTTP.

DuckDB lets one process write a file at a time; while ``serve`` holds it, commands ask
the service instead and print what it answers as they would offline: its OTLP/HTTP
endpoint (:func:`ask_collector`: ``/stats``, with the ingestion token when one is
configured) or its admin API (:func:`ask_api`: ``/api/v1/...``, with ``admin_token``).

Where the service listens comes from the file it writes beside the store
(:mod:`tracemill.service_info`), so a service on other ports is found by its store
alone; without that file (an older service, or one that was killed) the configured
``http_address`` and ``api_address`` are used.
"""

from __future__ import annotations

from typing import Any

import httpx

from tracemill.config import Settings, is_loopback, join_address, split_address
from tracemill.errors import StoreLockedError, TracemillError
from tracemill.service_info import read_service_info

__all__ = ["ApiNotFound", "api_url", "ask_api", "ask_collector"]


class ApiNotFound(TracemillError):
    """The running service's API has no such thing (an unknown id) or refused the input."""


def ask_collector(settings: Settings, path: str, locked: StoreLockedError) -> dict[str, Any]:
    """A JSON document from the running collector that holds the store; raises
    ``StoreLockedError`` (naming the URL and the problem) when it does not answer."""
    service = read_service_info(settings.db, locked.pid)
    address = _url_address(service.http if service else settings.http_address)
    tls = service.tls if service else settings.tls_cert is not None
    url = f"{'https' if tls else 'http'}://{address}{path}"
    headers = {}
    if settings.auth_token:
        headers["authorization"] = f"Bearer {settings.auth_token.get_secret_value()}"
    host, _ = split_address(address)
    # On loopback the collector's own certificate may be self-signed; elsewhere verify it.
    verify = not is_loopback(host)
    try:
        response = httpx.get(url, headers=headers, timeout=10, verify=verify)
    except httpx.InvalidURL as exc:
        raise _bad_url(url, exc, "--http-address / TRACEMILL_HTTP_ADDRESS") from None
    except httpx.HTTPError as exc:
        raise StoreLockedError(
            locked.path, locked.pid, f"and {url} did not answer: {exc}") from None
    if response.status_code == 401:
        raise StoreLockedError(
            locked.path, locked.pid,
            f"a running collector at {url} that requires its ingestion token: set "
            "TRACEMILL_AUTH_TOKEN (or auth_token in the config file) to the service's"
            if not settings.auth_token else
            f"a running collector at {url} that refused the ingestion token: set "
            "TRACEMILL_AUTH_TOKEN to the service's") from None
    try:
        response.raise_for_status()
        data: dict[str, Any] = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise StoreLockedError(
            locked.path, locked.pid, f"and {url} did not answer: {exc}") from None
    return data


def api_url(settings: Settings, locked: StoreLockedError | None = None) -> str:
    """The base URL (``http://HOST:PORT/api/v1``) of the service holding the store."""
    service = read_service_info(settings.db, locked.pid if locked else None)
    return f"http://{_url_address(service.api if service else settings.api_address)}/api/v1"


def _url_address(address: str) -> str:
    """``host:port`` as a URL takes it: an IPv6 host in brackets, also when a service
    file of an older version wrote it without (``::1:4319``)."""
    try:
        return join_address(*split_address(address))
    except ValueError:
        return address  # httpx names what is wrong with it


def _bad_url(url: str, exc: Exception, setting: str) -> TracemillError:
    return TracemillError(f"cannot ask the running service at {url!r}: {exc}; set "
                          f"{setting} to its HOST:PORT ([::1]:4319 for IPv6)")


def ask_api(settings: Settings, path: str, locked: StoreLockedError, *,
            params: dict[str, Any] | None = None, body: Any = None,
            timeout: float = 60) -> Any:
    """The JSON answer of the running service's admin API at ``/api/v1{path}`` (GET, or
    POST with ``body``). A 404, 409 or 422 raises :class:`ApiNotFound` with the API's
    message; no answer raises ``StoreLockedError`` naming the URL and the problem."""
    url = api_url(settings, locked) + path
    headers = {}
    if settings.admin_token:
        headers["authorization"] = f"Bearer {settings.admin_token.get_secret_value()}"
    query = {k: v for k, v in (params or {}).items() if v is not None}
    try:
        if body is None:
            response = httpx.get(url, headers=headers, params=query, timeout=timeout)
        else:
            response = httpx.post(url, headers=headers, params=query, json=body,
                                  timeout=timeout)
    except httpx.InvalidURL as exc:
        raise _bad_url(url, exc, "--api-address / TRACEMILL_API_ADDRESS") from None
    except httpx.HTTPError as exc:
        raise StoreLockedError(locked.path, locked.pid, f"and its admin API at {url} did "
                               f"not answer: {exc}; set --api-address / "
                               "TRACEMILL_API_ADDRESS to the service's") from None
    if response.status_code in (400, 404, 409, 422):
        raise ApiNotFound(_api_error(response))
    if response.status_code == 401:
        raise StoreLockedError(locked.path, locked.pid, f"a running service whose admin "
                               f"API at {url} refused the admin token: set "
                               "TRACEMILL_ADMIN_TOKEN to the service's") from None
    try:
        response.raise_for_status()
        return response.json()
    except (httpx.HTTPError, ValueError):
        raise StoreLockedError(locked.path, locked.pid, f"and its admin API at {url} "
                               f"answered {response.status_code}: "
                               f"{_api_error(response)[:300]}") from None


def _api_error(response: httpx.Response) -> str:
    try:
        body = response.json()
        detail = body.get("error") or body.get("detail")
    except (ValueError, AttributeError):
        detail = None
    if isinstance(detail, list):  # a service of an older version: FastAPI's 422 body
        detail = "; ".join(f"{'.'.join(str(p) for p in d.get('loc', ()))}: {d.get('msg')}"
                           for d in detail if isinstance(d, dict))
    return str(detail or response.text)
