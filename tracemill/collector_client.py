"""Asking the running collector that holds the store (``tracemill serve``) over HTTP.

DuckDB lets one process write a file at a time; while ``serve`` holds it, read commands
ask the collector's HTTP endpoint instead (``/stats``, ``/map``, with the ingestion token
when one is configured) or its admin API (:func:`ask_api`: ``/api/v1/...`` at
``api_address``, with ``admin_token``), and print what it answers as they would offline.
"""

from __future__ import annotations

from typing import Any

import httpx

from tracemill.config import Settings, is_loopback, split_address
from tracemill.errors import StoreLockedError, TracemillError

__all__ = ["ask_api", "ask_collector"]


def ask_collector(settings: Settings, path: str, locked: StoreLockedError) -> dict[str, Any]:
    """A JSON document from the running collector that holds the store; raises
    ``StoreLockedError`` (naming the URL and the problem) when it does not answer."""
    scheme = "https" if settings.tls_cert else "http"
    url = f"{scheme}://{settings.http_address}{path}"
    headers = {}
    if settings.auth_token:
        headers["authorization"] = f"Bearer {settings.auth_token.get_secret_value()}"
    host, _ = split_address(settings.http_address)
    # On loopback the collector's own certificate may be self-signed; elsewhere verify it.
    verify = not is_loopback(host)
    try:
        response = httpx.get(url, headers=headers, timeout=10, verify=verify)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise StoreLockedError(
            locked.path, locked.pid, f"and {url} did not answer: {exc}") from None
    return data


def ask_api(settings: Settings, path: str, locked: StoreLockedError, *,
            params: dict[str, Any] | None = None, body: Any = None) -> Any:
    """The JSON answer of the running service's admin API at ``/api/v1{path}`` (GET, or
    POST with ``body``). A 404 raises :class:`ApiNotFound` with the API's message; no
    answer raises ``StoreLockedError`` naming the URL and the problem."""
    url = f"http://{settings.api_address}/api/v1{path}"
    headers = {}
    if settings.admin_token:
        headers["authorization"] = f"Bearer {settings.admin_token.get_secret_value()}"
    query = {k: v for k, v in (params or {}).items() if v is not None}
    try:
        if body is None:
            response = httpx.get(url, headers=headers, params=query, timeout=30)
        else:
            response = httpx.post(url, headers=headers, json=body, timeout=30)
        if response.status_code in (404, 409, 422):
            raise ApiNotFound(_api_error(response))
        if response.status_code == 401:
            raise StoreLockedError(locked.path, locked.pid, f"a running service whose admin "
                                   f"API at {url} refused the admin token: set "
                                   "TRACEMILL_ADMIN_TOKEN to the service's") from None
        response.raise_for_status()
        return response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise StoreLockedError(locked.path, locked.pid, f"and its admin API at {url} did "
                               f"not answer: {exc}; set --api-address / "
                               "TRACEMILL_API_ADDRESS to the service's") from None


class ApiNotFound(TracemillError):
    """The running service's API has no such thing (an unknown id) or refused the input."""


def _api_error(response: httpx.Response) -> str:
    try:
        detail = response.json().get("error")
    except ValueError:
        detail = None
    return str(detail or response.text)


