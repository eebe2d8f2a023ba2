"""The Anthropic Messages API (``POST {base}/v1/messages``).

The conversation is reshaped the way the API requires: system messages become the
top-level ``system``; assistant tool calls become ``tool_use`` blocks; tool results become
``tool_result`` blocks of a ``user`` turn (results first, then any text); consecutive
turns of the same role are merged into one. The API has no JSON mode and no seed: a
``json_output`` request adds an instruction to the system prompt, and seeds are not sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from generator.backends._http import HttpBackend
from generator.backends._options import BackendOptions
from generator.backends._wire import (
    Decoded,
    Malformed,
    arguments_object,
    need_dict,
    need_list,
    need_str,
    opt_int,
    opt_str,
)
from generator.records import Message, ModelRequest, TokenUsage, ToolCall

__all__ = [
    "ANTHROPIC_VERSION",
    "AnthropicBackend",
    "decode_message",
    "encode_messages_request",
]

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header sent with every request."""

JSON_INSTRUCTION = "Reply with a single JSON object and nothing else."
"""Appended to the system prompt of a ``json_output`` request (the API has no JSON mode)."""

_STOP_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


def _is_error_result(content: str | None) -> bool:
    # A tool message carries no status, but the simulated world (like most tools) answers
    # a failure with a JSON object holding an "error" key: that is what we can tell.
    if not content or not content.lstrip().startswith("{"):
        return False
    try:
        parsed = json.loads(content)
    except ValueError:
        return False
    return isinstance(parsed, dict) and bool(parsed.get("error"))


def _text_block(text: str | None) -> list[dict[str, Any]]:
    # The API refuses empty or whitespace-only text blocks.
    return [{"type": "text", "text": text}] if text and text.strip() else []


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content or "",
        }
        if _is_error_result(message.content):
            result["is_error"] = True
        return "user", [result]
    if message.role == "assistant":
        return "assistant", _text_block(message.content) + [
            _tool_use(call) for call in message.tool_calls
        ]
    return "user", _text_block(message.content)


def _tool_use(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments_object(call)}


def _turns(messages: Sequence[Message]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            # Tool results must open the user turn that answers the tool calls.
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return turns


def encode_messages_request(model: str, request: ModelRequest) -> dict[str, Any]:
    """The JSON body of a Messages API request."""
    system = [m.content for m in request.messages if m.role == "system" and m.content]
    if request.json_output:
        system.append(JSON_INSTRUCTION)
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": _turns(request.messages),
    }
    if system:
        body["system"] = "\n\n".join(system)
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in request.tools
        ]
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def _usage(value: Any) -> TokenUsage | None:
    if value is None:
        return None
    usage = need_dict(value, "usage")
    output = opt_int(usage.get("output_tokens"), "usage.output_tokens")
    inputs = opt_int(usage.get("input_tokens"), "usage.input_tokens")
    if inputs is None or output is None:
        return None
    # Cached prompt tokens are reported apart from input_tokens; all of them were read.
    for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        inputs += opt_int(usage.get(key), f"usage.{key}") or 0
    return TokenUsage(inputs, output)


def decode_message(body: Any, model: str) -> Decoded:
    """A Messages API ``message`` object, decoded; raises :class:`Malformed`."""
    root = need_dict(body, "the body")
    if root.get("type") != "message":
        raise Malformed(f"type should be 'message', got {root.get('type')!r}")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for index, raw in enumerate(need_list(root.get("content"), "content")):
        where = f"content[{index}]"
        block = need_dict(raw, where)
        kind = need_str(block.get("type"), f"{where}.type")
        if kind == "text":
            texts.append(need_str(block.get("text"), f"{where}.text"))
        elif kind == "tool_use":
            calls.append(ToolCall(
                id=need_str(block.get("id"), f"{where}.id"),
                name=need_str(block.get("name"), f"{where}.name"),
                arguments=json.dumps(
                    need_dict(block.get("input"), f"{where}.input"),
                    ensure_ascii=False,
                    separators=(",", ":"),
                ),
            ))
        # thinking, redacted_thinking and server-tool blocks are not part of the reply text
    stop = opt_str(root.get("stop_reason"), "stop_reason") or "end_turn"
    finish = _STOP_REASONS.get(stop, stop)
    if calls and finish == "stop":
        finish = "tool_calls"
    return Decoded(
        message=Message(
            role="assistant", content="".join(texts) if texts else None, tool_calls=tuple(calls)
        ),
        finish_reason=finish,
        model=opt_str(root.get("model"), "model") or model,
        usage=_usage(root.get("usage")),
    )


class AnthropicBackend(HttpBackend):
    """A backend speaking the Anthropic Messages API."""

    provider = "anthropic"

    def __init__(
        self,
        *,
        spec: str,
        role: str,
        model: str,
        base_url: str,
        api_key: str,
        options: BackendOptions,
        key_variable: str | None = "ANTHROPIC_API_KEY",
    ) -> None:
        """Args as for :class:`~generator.backends._http.HttpBackend`; ``api_key`` is sent as
        ``x-api-key``."""
        super().__init__(
            spec=spec,
            role=role,
            model=model,
            base_url=base_url,
            path="/v1/messages",
            headers={"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION},
            options=options,
            secret=api_key,
            key_variable=key_variable,
        )

    def _encode(self, request: ModelRequest) -> dict[str, Any]:
        return encode_messages_request(self.model, request)

    def _decode(self, body: Any, request: ModelRequest) -> Decoded:
        return decode_message(body, self.model)
