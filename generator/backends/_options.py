"""How every backend of a run calls its model: timeouts, retries, concurrency, prices."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from generator.prices import PriceTable
from tracemill.errors import ConfigError


@dataclass(frozen=True)
class BackendOptions:
    """Call policy shared by the backends of a run (one instance per run, built at the edge)."""

    timeout_s: float = 60
    """Seconds allowed for each phase of one attempt (connect, send, each wait for bytes)."""
    max_retries: int = 4
    """Attempts beyond the first after a 429, a 5xx, a timeout or a connection error."""
    backoff_base_s: float = 0.5
    """First retry waits about this long (with jitter), doubling on each further retry."""
    backoff_max_s: float = 20
    """No wait between attempts is longer, including a server's ``Retry-After``."""
    concurrency: int = 32
    """Most requests one backend has in flight; its connection pool has as many slots."""
    prices: PriceTable = field(default_factory=PriceTable.default)
    """Prices used for ``ModelReply.cost_usd``."""
    logprobs: bool = False
    """Ask for per-token log probabilities on every call (as if each request asked)."""
    require_prices: bool = False
    """Refuse to build a backend for a paid provider (openai, anthropic, fireworks) whose
    model has no price, so a money budget is never kept with calls counted as free."""
    proxy: str | None = None
    """HTTP(S) proxy URL for every backend's requests (None: connect directly). Proxy
    environment variables are not read here; the command line passes them in."""
    protocol_retries: int = 1
    """Extra attempts after an answer that does not follow the protocol (not JSON, fields
    missing); such answers rarely heal, so one retry at most by default. Counts towards
    ``max_retries``."""

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ConfigError(f"backend timeout_s must be > 0 seconds, got {self.timeout_s!r}")
        if self.max_retries < 0:
            raise ConfigError(f"backend max_retries must be >= 0, got {self.max_retries!r}")
        if self.protocol_retries < 0:
            raise ConfigError(
                f"backend protocol_retries must be >= 0, got {self.protocol_retries!r}"
            )
        if self.backoff_base_s < 0 or self.backoff_max_s < 0:
            raise ConfigError(
                "backend backoff_base_s and backoff_max_s must be >= 0 seconds, got "
                f"{self.backoff_base_s!r} and {self.backoff_max_s!r}"
            )
        if self.concurrency < 1:
            raise ConfigError(f"backend concurrency must be >= 1, got {self.concurrency!r}")


class ClosesOnExit:
    """Backends used as ``async with backend:`` are closed (:meth:`aclose`) on the way out."""

    async def aclose(self) -> None:
        """Release what the backend holds (nothing by default)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
