"""Backend spec strings: ``provider:MODEL[@URL]``.

::

    openai:gpt-4o-mini
    openai:gpt-4o-mini@https://gateway.example/v1      (a base URL in the spec wins)
    vllm:llama3@http://127.0.0.1:8000/v1               (the URL is required)
    fireworks:accounts/fireworks/models/llama-v3p1-8b-instruct
    anthropic:claude-sonnet-4-5
    ollama:llama3.1:8b                                 (model names may contain ':')
    python:my_pkg.agents:answer                        (an importable callable)
    offline  |  offline:0.3                            (seeded agent, optional mistake rate)
"""

from __future__ import annotations

import re
from typing import NamedTuple

from generator.errors import SpecError

__all__ = ["KNOWN_PROVIDERS", "ParsedSpec", "parse_spec", "redact_secrets"]

_USERINFO = re.compile(r"(https?://)[^/@\s]*@")
_QUERY = re.compile(r"(https?://[^\s?#]*)\?[^\s#]*")


def redact_secrets(text: str) -> str:
    """``text`` with the credentials a URL may carry masked: ``user:password@`` and the
    query string (``?api_key=...``). Used on every spec and URL that is stored, printed or
    logged."""
    return _QUERY.sub(r"\1?***", _USERINFO.sub(r"\1***@", text))

KNOWN_PROVIDERS: tuple[str, ...] = (
    "openai", "vllm", "fireworks", "anthropic", "ollama", "python", "offline",
)
"""Providers a spec may name, in the order error messages list them."""

_URL_PROVIDERS = frozenset({"openai", "vllm", "fireworks", "anthropic", "ollama"})


class ParsedSpec(NamedTuple):
    """A spec split into its parts."""

    provider: str
    """One of :data:`KNOWN_PROVIDERS`."""
    model: str
    """The model name (``pkg.mod:fn`` for python, the mistake rate or ``""`` for offline)."""
    url: str | None
    """A base URL given after ``@``, or None."""


def parse_spec(spec: str) -> ParsedSpec:
    """Split ``spec`` into provider, model and URL; :class:`SpecError` when it cannot be used.

    The URL part starts at the last ``@`` that is followed by ``http://`` or ``https://``, so
    model names may themselves contain ``@`` and ``:``.
    """
    text = spec.strip()
    provider, sep, rest = text.partition(":")
    provider = provider.lower()
    if provider not in KNOWN_PROVIDERS:
        raise SpecError(
            f"unknown backend provider {provider!r} in spec {spec!r}; known providers: "
            + ", ".join(KNOWN_PROVIDERS)
            + " (for example openai:gpt-4o-mini, vllm:MODEL@http://host:8000/v1, offline)"
        )
    if provider == "offline":
        return ParsedSpec(provider, rest.strip(), None)
    model, url = _split_url(rest)
    if not sep or not model:
        raise SpecError(f"spec {spec!r} names no model: write {provider}:MODEL")
    if url is not None and provider not in _URL_PROVIDERS:
        raise SpecError(f"spec {spec!r}: a {provider} backend takes no @URL")
    if provider == "vllm" and url is None:
        raise SpecError(
            f"spec {spec!r} needs the server's URL: write vllm:{model}@http://HOST:PORT/v1"
        )
    return ParsedSpec(provider, model, url)


def _split_url(rest: str) -> tuple[str, str | None]:
    for marker in ("@https://", "@http://"):
        at = rest.rfind(marker)
        if at >= 0:
            return rest[:at].strip(), rest[at + 1 :].strip()
    if "@" in rest and "://" in rest.rpartition("@")[2]:
        scheme = rest.rpartition("@")[2].partition("://")[0]
        raise SpecError(f"backend URL scheme {scheme!r} in {rest!r}: use http:// or https://")
    return rest.strip(), None
