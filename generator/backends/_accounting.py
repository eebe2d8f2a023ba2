"""Per-call accounting: our own CPU time, estimated tokens, and the price of a call."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from types import TracebackType

from generator.prices import PriceTable
from generator.records import Message, TokenUsage, ToolSpec

__all__ = ["OverheadClock", "estimate_usage", "price_call"]


class OverheadClock:
    """Sums the time tracemill itself spends on one call, block by block.

    Each ``with clock:`` block wraps synchronous work of ours (encoding, building the
    request, decoding, accounting) and never an ``await``. It reads the calling thread's
    CPU clock, so neither network waits nor other threads holding the GIL (a loopback
    server in the same process, say) count as our overhead.
    """

    __slots__ = ("_start", "total")

    def __init__(self) -> None:
        self.total = 0.0
        """Seconds summed so far."""
        self._start = 0.0

    def __enter__(self) -> OverheadClock:
        self._start = time.thread_time()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.total += time.thread_time() - self._start


def _tokens(chars: int) -> int:
    # The usual rule of thumb: about four characters per token.
    return max(1, math.ceil(chars / 4))


def _message_chars(message: Message) -> int:
    chars = len(message.content or "")
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments)
    return chars


def estimate_usage(
    messages: Sequence[Message], tools: Sequence[ToolSpec], reply: Message
) -> TokenUsage:
    """Tokens of a call estimated from its text (used when a provider reports none)."""
    prompt = sum(_message_chars(m) for m in messages)
    prompt += sum(len(t.name) + len(t.description) + len(str(t.parameters)) for t in tools)
    return TokenUsage(input_tokens=_tokens(prompt), output_tokens=_tokens(_message_chars(reply)))


def price_call(prices: PriceTable, answered: str, requested: str, usage: TokenUsage) -> float:
    """USD for a call: priced by the model that answered, else by the one asked for, else 0.

    An unpriced model costs 0 here; ``BackendOptions.require_prices`` refuses such
    backends up front for runs that must not count paid calls as free.
    """
    for model in (answered, requested):
        if prices.has(model):
            return prices.cost(model, usage)
    return 0.0
