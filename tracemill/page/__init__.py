"""The web page of ``tracemill serve``: plain HTML, CSS and JavaScript modules, no build step.

The admin API's process serves it at ``/ui/`` (``/`` redirects there). The files hold no
data, so they are served without the admin token; everything the page shows it fetches
from the versioned JSON API (``/api/v1``), sending the token as ``Authorization: Bearer``
once the user has entered it (kept in the tab's ``sessionStorage``, never in a URL).

Conversation text is written by the people who talk to the agent, so the script builds
every value from the data as a text node, never as HTML, and a strict
Content-Security-Policy (scripts and styles from this origin only, no inline script, no
other origin to talk to) stands behind it.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

__all__ = ["MODULES", "PAGE_PATH", "mount"]

PAGE_PATH = "/ui/"
"""Where the page lives on the admin API's port."""

MODULES = ("app.js", "api.js", "page.js", "dom.js", "format.js", "transcript.js", "map.js",
           "situation.js", "compare.js", "runs.js", "reports.js")
"""The page's JavaScript: ES modules loaded by the browser (``app.js`` is the entry and
imports the rest), no bundler and no build step."""

_FILES = {
    "index.html": "text/html; charset=utf-8",
    **{name: "text/javascript; charset=utf-8" for name in MODULES},
    "style.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
"""The page's files and their media types; nothing else is served (no path from a request
ever reaches the file system)."""

_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-cache",
}


@cache
def _asset(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


def _file(request: Request) -> Response:
    name = request.path_params.get("name") or "index.html"
    if name not in _FILES:
        return Response(f"no page file {name!r}; the page is at {PAGE_PATH}\n", 404,
                        media_type="text/plain", headers=_HEADERS)
    return Response(_asset(name), media_type=_FILES[name], headers=_HEADERS)


def _to_page(_: Request) -> Response:
    return RedirectResponse(PAGE_PATH, status_code=307)


def mount(app: FastAPI) -> None:
    """Serve the page from ``app``: ``/ui/`` and its files, ``/`` and ``/ui`` redirecting.

    Plain Starlette routes, outside the OpenAPI document and outside the API's token
    dependency: the files are the same for everyone; the data behind them is not."""
    app.add_route("/", _to_page, methods=["GET"], include_in_schema=False)
    app.add_route("/ui", _to_page, methods=["GET"], include_in_schema=False)
    app.add_route(PAGE_PATH, _file, methods=["GET"], include_in_schema=False)
    app.add_route(PAGE_PATH + "{name}", _file, methods=["GET"], include_in_schema=False)
