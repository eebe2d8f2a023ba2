"""Asking the running collector that holds the store (``tracemill serve``) over HTTP.

DuckDB lets one process write a file at a time; while ``serve`` holds it, read commands
ask the collector's HTTP endpoint instead (``/stats``, ``/map``), with the admin token
when one is configured.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import httpx

from tracemill.config import Settings, split_address
from tracemill.errors import StoreLockedError

__all__ = ["ask_collector"]


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
    verify = not _is_loopback(host)
    try:
        response = httpx.get(url, headers=headers, timeout=10, verify=verify)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise StoreLockedError(
            locked.path, locked.pid, f"and {url} did not answer: {exc}") from None
    return data


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
