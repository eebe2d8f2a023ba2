"""Model backends: a spec string in, a :class:`~generator.records.ChatBackend` out.

::

    from generator.backends import BackendOptions, build_backend

    agent = build_backend("openai:gpt-4o-mini", role="agent",
                          credentials=settings.model_keys, options=BackendOptions())
    reply = await agent.complete(request)
    await agent.aclose()

``credentials`` is a mapping of environment-style names (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``, ``OLLAMA_HOST``, ...) that the command line
builds; nothing here reads the environment. See :mod:`generator.backends._spec` for the
spec grammar.

=============  ========================================  ===================  ====================
provider       default base URL                          key (required?)      base URL override
=============  ========================================  ===================  ====================
openai         https://api.openai.com/v1                 OPENAI_API_KEY (y)   OPENAI_BASE_URL
vllm           the spec's @URL                           VLLM_API_KEY (n)     —
fireworks      https://api.fireworks.ai/inference/v1     FIREWORKS_API_KEY    FIREWORKS_BASE_URL
anthropic      https://api.anthropic.com                 ANTHROPIC_API_KEY    ANTHROPIC_BASE_URL
ollama         http://127.0.0.1:11434                    —                    OLLAMA_HOST
python         (imports pkg.module:function)             —                    —
offline        (the seeded offline agent)                —                    —
=============  ========================================  ===================  ====================

A spec's own ``@URL`` wins over the override variable.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from generator.backends._options import BackendOptions
from generator.backends._spec import KNOWN_PROVIDERS, ParsedSpec, parse_spec
from generator.backends.anthropic import AnthropicBackend
from generator.backends.ollama import DEFAULT_OLLAMA_URL, OllamaBackend, ollama_base_url
from generator.backends.openai_compat import OpenAICompatBackend
from generator.backends.python_callable import PythonCallableBackend
from generator.errors import BudgetError, MissingKeyError, SpecError
from generator.records import ChatBackend

__all__ = [
    "KNOWN_PROVIDERS",
    "AnthropicBackend",
    "BackendOptions",
    "OllamaBackend",
    "OpenAICompatBackend",
    "ParsedSpec",
    "PythonCallableBackend",
    "build_backend",
    "parse_spec",
]


@dataclass(frozen=True)
class _Endpoint:
    """Where an OpenAI-compatible provider lives and which variables configure it."""

    default_url: str | None
    key_variable: str
    key_required: bool
    url_variable: str | None


_OPENAI_COMPAT: Mapping[str, _Endpoint] = {
    "openai": _Endpoint("https://api.openai.com/v1", "OPENAI_API_KEY", True, "OPENAI_BASE_URL"),
    "vllm": _Endpoint(None, "VLLM_API_KEY", False, None),
    "fireworks": _Endpoint(
        "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY", True, "FIREWORKS_BASE_URL"
    ),
}
_PAID = frozenset({"openai", "anthropic", "fireworks"})


def build_backend(
    spec: str,
    *,
    role: str,
    credentials: Mapping[str, str],
    options: BackendOptions | None = None,
) -> ChatBackend:
    """The backend ``spec`` names, ready to call; checked before any request is made.

    Args:
        spec: ``provider:MODEL[@URL]``, ``python:pkg.module:function`` or ``offline[:RATE]``.
        role: what the backend plays (agent, person, writer, judge); named in its errors.
        credentials: API keys and base-URL overrides by variable name.
        options: call policy (defaults: :class:`BackendOptions`).

    Raises:
        SpecError: unknown provider, malformed spec or URL, a callable that cannot be
            imported.
        MissingKeyError: the provider's key variable is absent or empty.
        BudgetError: ``options.require_prices`` and the model of a paid provider has no
            price.
    """
    options = options or BackendOptions()
    parsed = parse_spec(spec)
    factory = _FACTORIES[parsed.provider]
    return factory(spec.strip(), parsed, role, credentials, options)


def _check_price(spec: str, parsed: ParsedSpec, options: BackendOptions) -> None:
    if options.require_prices and parsed.provider in _PAID and not options.prices.has(
        parsed.model
    ):
        raise BudgetError(
            f"{spec}: no price for model {parsed.model!r}, and this run must price every "
            f'call: add ["{parsed.model}"] input = ..., output = ... (USD per 1M tokens) to '
            "a prices file"
        )


def _base_url(value: str, source: str) -> str:
    url = value.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise SpecError(f"{source} {value!r} is not an http:// or https:// URL")
    return url


def _resolve_base(spec: str, parsed: ParsedSpec, credentials: Mapping[str, str],
                  variable: str | None, default: str | None,
                  from_variable: Callable[[str], str] | None = None) -> str:
    """The base URL: the spec's ``@URL``, else the environment ``variable`` (read through
    ``from_variable`` when given), else ``default``."""
    if parsed.url is not None:
        return _base_url(parsed.url, f"the URL in spec {spec!r}:")
    value = credentials.get(variable) if variable else None
    if variable and value:
        return from_variable(value) if from_variable else _base_url(value, variable)
    assert default is not None  # providers without a default (vllm) require @URL in the spec
    return default


def _key(spec: str, credentials: Mapping[str, str], variable: str, required: bool) -> str | None:
    key = (credentials.get(variable) or "").strip()
    if not key and required:
        raise MissingKeyError(spec, variable)
    return key or None


def _openai_compat(
    spec: str,
    parsed: ParsedSpec,
    role: str,
    credentials: Mapping[str, str],
    options: BackendOptions,
) -> ChatBackend:
    endpoint = _OPENAI_COMPAT[parsed.provider]
    base = _resolve_base(spec, parsed, credentials, endpoint.url_variable, endpoint.default_url)
    key = _key(spec, credentials, endpoint.key_variable, endpoint.key_required)
    _check_price(spec, parsed, options)
    return OpenAICompatBackend(
        spec=spec,
        role=role,
        provider=parsed.provider,
        model=parsed.model,
        base_url=base,
        api_key=key,
        options=options,
        key_variable=endpoint.key_variable,
    )


def _anthropic(
    spec: str,
    parsed: ParsedSpec,
    role: str,
    credentials: Mapping[str, str],
    options: BackendOptions,
) -> ChatBackend:
    base = _resolve_base(spec, parsed, credentials, "ANTHROPIC_BASE_URL",
                         "https://api.anthropic.com")
    key = _key(spec, credentials, "ANTHROPIC_API_KEY", True)
    assert key is not None
    _check_price(spec, parsed, options)
    return AnthropicBackend(
        spec=spec, role=role, model=parsed.model, base_url=base, api_key=key, options=options
    )


def _ollama(
    spec: str,
    parsed: ParsedSpec,
    role: str,
    credentials: Mapping[str, str],
    options: BackendOptions,
) -> ChatBackend:
    base = _resolve_base(spec, parsed, credentials, "OLLAMA_HOST", DEFAULT_OLLAMA_URL,
                         ollama_base_url)
    return OllamaBackend(spec=spec, role=role, model=parsed.model, base_url=base, options=options)


def _python(
    spec: str,
    parsed: ParsedSpec,
    role: str,
    credentials: Mapping[str, str],
    options: BackendOptions,
) -> ChatBackend:
    return PythonCallableBackend(spec=spec, role=role, target=parsed.model, options=options)


def _offline(
    spec: str,
    parsed: ParsedSpec,
    role: str,
    credentials: Mapping[str, str],
    options: BackendOptions,
) -> ChatBackend:
    kwargs: dict[str, Any] = {}
    if parsed.model:
        try:
            rate = float(parsed.model)
        except ValueError:
            rate = -1.0
        if not 0.0 <= rate <= 1.0:
            raise SpecError(
                f"spec {spec!r}: the offline agent's mistake rate must be a number from 0 to 1 "
                "(offline:0.3), or leave it out (offline)"
            )
        kwargs["mistake_rate"] = rate
    # Imported here: the offline agent is its own module and nothing else needs it.
    try:
        module = importlib.import_module("generator.offline_agent")
    except ModuleNotFoundError as exc:
        if exc.name != "generator.offline_agent":
            raise
        raise SpecError(f"spec {spec!r}: the offline agent is not part of this build") from exc
    agent = module.OfflineAgent(spec, **kwargs)
    return cast(ChatBackend, agent)


_Factory = Callable[[str, ParsedSpec, str, Mapping[str, str], BackendOptions], ChatBackend]

_FACTORIES: Mapping[str, _Factory] = {
    "openai": _openai_compat,
    "vllm": _openai_compat,
    "fireworks": _openai_compat,
    "anthropic": _anthropic,
    "ollama": _ollama,
    "python": _python,
    "offline": _offline,
}
