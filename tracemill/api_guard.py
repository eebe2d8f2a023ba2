"""Which requests the admin API answers: checks of the Host and Origin headers.

With the defaults the API listens on loopback without a token, so whatever can make this
machine send it a request can use it. A web browser is the one such thing that a remote
page steers, and two checks shut it out:

- DNS rebinding: a page on ``attacker.example`` points its own name at 127.0.0.1, and the
  browser then treats the API as the page's own origin. Its requests still name
  ``attacker.example`` in ``Host``: only loopback names, ``api_address``'s host and
  ``api_hosts`` are answered (400 otherwise).
- Cross-site requests: a page on any origin may send a POST without a body to 127.0.0.1
  with no CORS permission (it cannot read the answer, but the POST is done). The browser
  names the page's origin in ``Origin``: a request that may change something (any method
  but GET, HEAD and OPTIONS) whose ``Origin`` is neither the API's own (the host it was
  asked under) nor one of ``cors_origins`` is refused (403). Requests without ``Origin``
  (the command line, scripts, curl) are not browsers' and pass.

The answers are the API's ``{"error": ...}`` bodies, naming the setting that admits more.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tracemill.config import Settings, split_address

__all__ = ["LOOPBACK_HOSTS", "RequestGuard", "answered_hosts"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""Names of this machine the API always answers to."""
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def answered_hosts(settings: Settings) -> tuple[str, ...] | None:
    """The host names (as ``Host`` gives them: lower case, IPv6 in brackets; ``*.x``
    patterns) the API answers to; None: any."""
    host, _ = split_address(settings.api_address)
    if "*" in settings.api_hosts:
        return None
    try:
        wildcard = ipaddress.ip_address(host).is_unspecified
    except ValueError:
        wildcard = False
    if wildcard and not settings.api_hosts:
        return None  # beyond loopback the admin token is required and guards it
    own = (f"[{host}]" if ":" in host else host).lower()
    return tuple(dict.fromkeys((*LOOPBACK_HOSTS, own, *settings.api_hosts)))


def _host_name(header: str) -> str:
    """The host of a ``Host`` header without its port (IPv6 kept in brackets)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[:header.find("]") + 1] if "]" in header else header
    return header.rpartition(":")[0] if ":" in header else header


def _matches(name: str, patterns: Collection[str]) -> bool:
    return any(name == p or (p.startswith("*.") and name.endswith(p[1:])) for p in patterns)


class RequestGuard:
    """ASGI middleware refusing other hosts (400) and cross-site changes (403)."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...] | None,
                 origins: Collection[str]) -> None:
        self.app = app
        self.hosts = hosts
        """What :func:`answered_hosts` gave; None: any."""
        self.origins = frozenset(o.rstrip("/").lower() for o in origins)
        """``cors_origins``: other origins whose pages may change things."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope["method"], headers.get("host", ""),
                                headers.get("origin"))
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message = refusal
        await JSONResponse({"error": message}, status_code=status)(scope, receive, send)

    def _refusal(self, method: str, host: str, origin: str | None) -> tuple[int, str] | None:
        name = _host_name(host)
        if self.hosts is not None and not _matches(name, self.hosts):
            return 400, (
                f"this admin API does not answer to the host {name[:80]!r}, so that a web "
                "page cannot reach it by pointing its own name at this machine; ask it as "
                f"{', '.join(h for h in self.hosts if '*' not in h)}, or add the name to "
                "api_hosts (TRACEMILL_API_HOSTS)")
        if origin is None or method.upper() in _SAFE_METHODS:
            return None
        origin = origin.strip().rstrip("/").lower()
        scheme, _, rest = origin.partition("://")
        if origin in self.origins or (scheme in ("http", "https") and rest == host.lower()):
            return None
        return 403, (
            f"a page on {origin[:80]!r} may not change anything here: only this API's own "
            "page and the origins in cors_origins (TRACEMILL_CORS_ORIGINS) may send it "
            f"{method.upper()} requests")
