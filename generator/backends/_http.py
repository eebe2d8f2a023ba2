"""The HTTP machinery every remote backend shares.

A few :class:`httpx.AsyncClient` per backend, their pools together sized to
``concurrency``, and a semaphore that keeps at most that many requests in flight. The
pool is sharded into clients of at most :data:`CONNECTIONS_PER_CLIENT` connections
because one httpx pool of 64 connections measured 14-15 ms of CPU per request against
1.8-2.0 ms for four pools of 16 (bench/generator_loopback.py, 2 cores). Each attempt that fails with
429, 408, 409, a 5xx, a timeout or a connection error is retried after an exponential
backoff with jitter, or after the server's ``Retry-After`` (capped by ``backoff_max_s``).
Other 4xx answers fail at once. An answer that does not follow the protocol (not JSON,
fields missing) is retried ``protocol_retries`` times (once by default), then raised as
:class:`~generator.errors.BackendProtocolError`.

A provider module subclasses :class:`HttpBackend` and supplies ``_encode`` (request →
JSON-able dict) and ``_decode`` (parsed JSON → :class:`~generator.backends._wire.Decoded`).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import orjson

from generator.backends._accounting import OverheadClock, estimate_usage, price_call
from generator.backends._options import BackendOptions, ClosesOnExit
from generator.backends._spec import redact_secrets
from generator.backends._wire import Decoded, Malformed
from generator.errors import BackendError, BackendProtocolError
from generator.records import ModelReply, ModelRequest

__all__ = ["HttpBackend", "backoff_delay", "retry_after_s"]

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_EXCERPT_CHARS = 300
_USER_AGENT = "tracemill-generator/0.1"
CONNECTIONS_PER_CLIENT = 16
"""Most connections in one httpx client (see the module docstring for why)."""


@dataclass(frozen=True)
class _Failure:
    """Why one attempt failed, and whether another may help."""

    detail: str
    retryable: bool
    retry_after: float | None = None
    protocol: bool = False
    hint: str = ""


class HttpBackend(ClosesOnExit, ABC):
    """A :class:`~generator.records.ChatBackend` that posts JSON to one HTTP endpoint."""

    provider: str = "http"
    """Provider name used in messages (``openai``, ``anthropic``, ...)."""

    def __init__(
        self,
        *,
        spec: str,
        role: str,
        model: str,
        base_url: str,
        path: str,
        headers: Mapping[str, str],
        options: BackendOptions,
        secret: str | None = None,
        key_variable: str | None = None,
    ) -> None:
        """Args:
            spec: the spec string that rebuilt this backend (named in every error).
            role: agent, person, writer or judge (named in errors).
            model: the model to ask for.
            base_url: the provider's base URL; ``path`` is appended to it.
            path: the endpoint path, e.g. ``/chat/completions``.
            headers: provider headers (auth included); never shown in errors.
            options: the run's call policy.
            secret: the API key, scrubbed from any error excerpt.
            key_variable: the variable the key came from, named on 401/403.
        """
        self.spec = spec
        self.role = role
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.options = options
        # the path goes before a query string the base URL may carry (?api-version=...)
        base = httpx.URL(self.base_url)
        self._url = str(base.copy_with(path=base.path.rstrip("/") + path))
        self._shown = redact_secrets(self._url)
        """The URL as errors and logs show it: no credentials."""
        self._secret = secret or None
        self._key_variable = key_variable
        self._slots = asyncio.Semaphore(options.concurrency)
        self._rng = random.Random()  # noqa: S311  # jitter only, nothing reproducible
        shards = -(-options.concurrency // CONNECTIONS_PER_CLIENT)
        per_client = -(-options.concurrency // shards)
        self._clients = [httpx.AsyncClient(
            headers={"content-type": "application/json", "user-agent": _USER_AGENT, **headers},
            timeout=httpx.Timeout(options.timeout_s),
            limits=httpx.Limits(
                max_connections=per_client,
                max_keepalive_connections=per_client,
            ),
            proxy=options.proxy,
            trust_env=False,  # no hidden environment reads: the proxy comes from options
        ) for _ in range(shards)]
        self._busy = [0] * shards

    # -- provider hooks

    @abstractmethod
    def _encode(self, request: ModelRequest) -> dict[str, Any]:
        """The provider's request body for ``request``."""

    @abstractmethod
    def _decode(self, body: Any, request: ModelRequest) -> Decoded:
        """The provider's answer, parsed from JSON; raises :class:`Malformed`."""

    # -- ChatBackend

    async def complete(self, request: ModelRequest) -> ModelReply:
        """The next assistant message; :class:`BackendError` once retries are spent."""
        started = time.perf_counter()
        clock = OverheadClock()
        with clock:
            content = orjson.dumps(self._encode(request))
        retries = protocol_failures = 0
        while True:
            outcome = await self._attempt(content, request, clock)
            if isinstance(outcome, Decoded):
                return self._reply(request, outcome, clock, started, retries)
            if outcome.protocol:
                protocol_failures += 1
            exhausted = retries >= self.options.max_retries
            if outcome.protocol and protocol_failures > self.options.protocol_retries:
                exhausted = True
            if not outcome.retryable or exhausted:
                raise self._give_up(outcome, retries + 1)
            await asyncio.sleep(backoff_delay(retries, self.options, outcome.retry_after,
                                              self._rng))
            retries += 1

    async def aclose(self) -> None:
        """Close the connection pools."""
        for client in self._clients:
            await client.aclose()

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {redact_secrets(self.spec)} role={self.role} "
                f"url={self._shown}>")

    # -- one attempt

    async def _attempt(
        self, content: bytes, request: ModelRequest, clock: OverheadClock
    ) -> Decoded | _Failure:
        async with self._slots:
            with clock:
                shard = self._busy.index(min(self._busy))
                client = self._clients[shard]
                http_request = client.build_request("POST", self._url, content=content)
            self._busy[shard] += 1
            try:
                response = await client.send(http_request)
            except httpx.TimeoutException as exc:
                return _Failure(
                    f"no answer within timeout_s={self.options.timeout_s:g}s "
                    f"({type(exc).__name__}) from {self._shown}",
                    retryable=True,
                    hint="raise timeout_s if the server is only slow",
                )
            except httpx.TransportError as exc:
                return _Failure(
                    f"cannot reach {self._shown}: {type(exc).__name__}: "
                    f"{redact_secrets(str(exc))}; "
                    "is the server running and the URL right?",
                    retryable=True,
                )
            finally:
                self._busy[shard] -= 1
        status = response.status_code
        if 200 <= status < 300:
            with clock:
                try:
                    return self._decode(orjson.loads(response.content), request)
                except orjson.JSONDecodeError as exc:
                    why = f"the body is not JSON ({exc})"
                except Malformed as exc:
                    why = str(exc)
            return _Failure(
                f"the answer from {self._shown} does not follow the {self.provider} protocol: "
                f"{why}; body: {self._excerpt(response)}",
                retryable=True,
                protocol=True,
            )
        retryable = status in _RETRYABLE_STATUS or status >= 500
        return _Failure(
            f"HTTP {status} from {self._shown}{self._status_hint(status)}: "
            f"{self._excerpt(response)}",
            retryable=retryable,
            retry_after=retry_after_s(response.headers) if retryable else None,
            hint=("rate limited: lower concurrency or raise max_retries" if status == 429
                  else "the server kept failing; raise max_retries to wait longer"
                  if retryable else ""),
        )

    def _reply(
        self,
        request: ModelRequest,
        decoded: Decoded,
        clock: OverheadClock,
        started: float,
        retries: int,
    ) -> ModelReply:
        with clock:
            usage = decoded.usage
            estimated = usage is None
            if usage is None:
                usage = estimate_usage(request.messages, request.tools, decoded.message)
            cost = price_call(self.options.prices, decoded.model, self.model, usage)
        return ModelReply(
            message=decoded.message,
            finish_reason=decoded.finish_reason,
            usage=usage,
            model=decoded.model,
            cost_usd=cost,
            latency_s=time.perf_counter() - started,
            overhead_s=clock.total,
            retries=retries,
            logprobs=decoded.logprobs,
            usage_estimated=estimated,
        )

    def _give_up(self, failure: _Failure, attempts: int) -> BackendError:
        tries = f"after {attempts} attempt{'s' if attempts > 1 else ''}"
        message = f"{redact_secrets(self.spec)} ({self.role}) failed {tries}: {failure.detail}"
        if failure.hint:
            message += f" ({failure.hint})"
        if failure.protocol:
            return BackendProtocolError(message)
        return BackendError(message)

    def _status_hint(self, status: int) -> str:
        if status in (401, 403) and self._key_variable:
            return f" (check the key in {self._key_variable})"
        if status == 404:
            return f" (check the model name {self.model!r} and the base URL)"
        return ""

    def _excerpt(self, response: httpx.Response) -> str:
        text = re.sub(r"\s+", " ", response.content[: _EXCERPT_CHARS * 4].decode(
            "utf-8", errors="replace")).strip()
        if self._secret:
            text = mask_key(text, self._secret)
        if len(text) > _EXCERPT_CHARS:
            text = text[:_EXCERPT_CHARS] + "…"
        return text or "(empty body)"


_KEY_WINDOW = 8


def mask_key(text: str, key: str) -> str:
    """``text`` with ``key`` masked: whole, and any run of :data:`_KEY_WINDOW` or more of
    its characters (a server echoing part of a key). A key shorter than that (a test
    key) is masked only as a whole token, so it does not mangle every word."""
    if len(key) < _KEY_WINDOW:
        return re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", "***", text)
    text = text.replace(key, "***")
    for start in range(len(key) - _KEY_WINDOW + 1):
        piece = key[start:start + _KEY_WINDOW]
        if piece in text:
            text = text.replace(piece, "***")
    return text


def retry_after_s(headers: httpx.Headers) -> float | None:
    """Seconds a server asks us to wait: ``retry-after-ms``, ``retry-after`` as seconds or as
    an HTTP date; None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(
    retry: int, options: BackendOptions, retry_after: float | None, rng: random.Random
) -> float:
    """Seconds to wait before retry number ``retry + 1``.

    The server's ``Retry-After`` when it gave one, else ``backoff_base_s * 2**retry`` with
    jitter (between half and all of it, so clients that failed together spread out);
    never more than ``backoff_max_s``.
    """
    if retry_after is not None:
        return min(retry_after, options.backoff_max_s)
    delay = min(options.backoff_max_s, options.backoff_base_s * 2.0**retry)
    return delay * rng.uniform(0.5, 1.0)
