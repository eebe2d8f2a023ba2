"""What every provider's decoder shares: the decoded answer, checked field access, call ids.

Decoders read parsed JSON (``Any``) and raise :class:`Malformed` the moment the answer
stops following the provider's protocol; the caller turns that into a
:class:`~generator.errors.BackendProtocolError` that names the backend.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.records import Message, TokenUsage, ToolCall

__all__ = [
    "Decoded",
    "Malformed",
    "arguments_object",
    "arguments_text",
    "first_call_number",
    "need_dict",
    "need_list",
    "need_str",
    "opt_int",
    "opt_str",
]


class Malformed(Exception):
    """The answer does not follow the protocol; the message says where."""


@dataclass(frozen=True)
class Decoded:
    """One provider answer, decoded, before accounting."""

    message: Message
    """The assistant message."""
    finish_reason: str
    """Normalised: stop, tool_calls, length or content_filter (else the provider's word)."""
    model: str
    """The model that answered (the requested one when the provider does not say)."""
    usage: TokenUsage | None
    """Tokens as reported; None when the provider reported none."""
    logprobs: tuple[float, ...] | None = None
    """Per-token log probabilities when asked for and given."""


def need_dict(value: Any, where: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or :class:`Malformed` naming ``where``."""
    if not isinstance(value, dict):
        raise Malformed(f"{where} should be an object, got {_kind(value)}")
    return value


def need_list(value: Any, where: str) -> Sequence[Any]:
    """``value`` as a JSON array."""
    if not isinstance(value, list):
        raise Malformed(f"{where} should be an array, got {_kind(value)}")
    return value


def need_str(value: Any, where: str) -> str:
    """``value`` as a string."""
    if not isinstance(value, str):
        raise Malformed(f"{where} should be a string, got {_kind(value)}")
    return value


def opt_str(value: Any, where: str) -> str | None:
    """``value`` as a string, or None when absent or null."""
    return None if value is None else need_str(value, where)


def opt_int(value: Any, where: str) -> int | None:
    """``value`` as a non-negative integer, or None when absent or null."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Malformed(f"{where} should be a non-negative integer, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    text = json.dumps(value, default=str)
    return f"{type(value).__name__} {text[:40]}"


def first_call_number(messages: Sequence[Message]) -> int:
    """The ``n`` of the next generated ``call_<n>`` id: one past the calls so far.

    Ids generated this way are unique within a conversation and the same for a seed,
    whatever else the backend is doing concurrently.
    """
    return 1 + sum(len(m.tool_calls) for m in messages)


def arguments_text(value: Any, where: str) -> str:
    """Tool-call arguments as JSON text: kept verbatim when a string (models write malformed
    JSON, and the checks need to see it), serialised when an object."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if value is None:
        return "{}"
    raise Malformed(f"{where} should be a JSON string or object, got {_kind(value)}")


def arguments_object(call: ToolCall) -> dict[str, Any]:
    """Arguments as the object providers with structured arguments (Anthropic, Ollama) need.

    Arguments that are not a JSON object (the agent wrote malformed JSON) are wrapped as
    ``{"raw_arguments": "<text>"}`` so the conversation can still be sent and the model
    sees what it wrote.
    """
    try:
        parsed = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return {"raw_arguments": call.arguments}
