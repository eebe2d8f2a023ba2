"""OpenAI Chat Completions (``POST {base}/chat/completions``) and the servers that speak it.

Three specs use it: ``openai:MODEL`` (api.openai.com, ``OPENAI_API_KEY``),
``vllm:MODEL@URL`` (any OpenAI-compatible server, key optional) and ``fireworks:MODEL``
(api.fireworks.ai, ``FIREWORKS_API_KEY``). The wire conversions here (messages, tools,
tool calls in OpenAI's format) are also what Ollama and Python-callable backends use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from generator.backends._http import HttpBackend
from generator.backends._options import BackendOptions
from generator.backends._wire import (
    Decoded,
    Malformed,
    arguments_text,
    first_call_number,
    need_dict,
    need_list,
    need_str,
    opt_int,
    opt_str,
)
from generator.records import Message, ModelRequest, TokenUsage, ToolCall, ToolSpec

__all__ = [
    "OpenAICompatBackend",
    "decode_chat_completion",
    "encode_chat_request",
    "normalise_finish_reason",
    "parse_openai_tool_calls",
    "to_openai_messages",
    "to_openai_tools",
]

_FINISH_REASONS: Mapping[str, str] = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "length": "length",
    "max_tokens": "length",
    "content_filter": "content_filter",
}


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as ``{"type": "function", "function": {name, description, parameters}}``."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            },
        }
        for tool in tools
    ]


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in Chat Completions format (assistant ``tool_calls``, ``tool`` replies)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append({
                "role": "tool",
                "tool_call_id": message.tool_call_id or "",
                "content": message.content or "",
            })
        elif message.role == "assistant":
            # Content may be null only beside tool calls; an empty reply is sent as "".
            content = message.content if message.content is not None or message.tool_calls \
                else ""
            item: dict[str, Any] = {"role": "assistant", "content": content}
            if message.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in message.tool_calls
                ]
            out.append(item)
        else:
            out.append({"role": message.role, "content": message.content or ""})
    return out


def encode_chat_request(
    model: str, request: ModelRequest, *, logprobs: bool = False, max_tokens_field: str
) -> dict[str, Any]:
    """The JSON body of a chat completions request.

    ``max_tokens_field`` is ``max_completion_tokens`` for api.openai.com (its reasoning
    models refuse ``max_tokens``) and ``max_tokens`` for the compatible servers.
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": to_openai_messages(request.messages),
        max_tokens_field: request.max_tokens,
    }
    if request.tools:
        body["tools"] = to_openai_tools(request.tools)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.seed is not None:
        body["seed"] = request.seed
    if logprobs or request.logprobs:
        body["logprobs"] = True
    if request.json_output:
        body["response_format"] = {"type": "json_object"}
    return body


def parse_openai_tool_calls(value: Any, where: str, first_number: int) -> tuple[ToolCall, ...]:
    """Tool calls in OpenAI format (``[{id, type, function: {name, arguments}}]``).

    A call without an id gets ``call_<n>``, counting on from ``first_number``. Arguments
    given as an object (some servers do) become JSON text.
    """
    if value is None:
        return ()
    calls = []
    for index, raw in enumerate(need_list(value, where)):
        at = f"{where}[{index}]"
        item = need_dict(raw, at)
        function = need_dict(item.get("function"), f"{at}.function")
        call_id = opt_str(item.get("id"), f"{at}.id") or f"call_{first_number + index}"
        calls.append(ToolCall(
            id=call_id,
            name=need_str(function.get("name"), f"{at}.function.name"),
            arguments=arguments_text(function.get("arguments"), f"{at}.function.arguments"),
        ))
    return tuple(calls)


def normalise_finish_reason(reason: str | None, has_tool_calls: bool) -> str:
    """stop, tool_calls, length or content_filter; an unknown word is kept as it came.

    A reply that calls tools is ``tool_calls`` even when the server says ``stop`` (vLLM and
    Ollama do).
    """
    normal = _FINISH_REASONS.get(reason or "stop", reason or "stop")
    if has_tool_calls and normal == "stop":
        return "tool_calls"
    return normal


def _content_text(value: Any, where: str) -> str | None:
    # Chat Completions sends a string; a few compatible servers send text parts.
    if isinstance(value, list):
        parts = [need_str(need_dict(p, where).get("text"), f"{where}[].text") for p in value]
        return "".join(parts)
    return opt_str(value, where)


def _usage(value: Any) -> TokenUsage | None:
    if value is None:
        return None
    usage = need_dict(value, "usage")
    prompt = opt_int(usage.get("prompt_tokens"), "usage.prompt_tokens")
    completion = opt_int(usage.get("completion_tokens"), "usage.completion_tokens")
    if prompt is None or completion is None:
        return None
    return TokenUsage(prompt, completion)


def _logprobs(value: Any) -> tuple[float, ...] | None:
    if value is None:
        return None
    content = need_dict(value, "choices[0].logprobs").get("content")
    if content is None:
        return None
    out = []
    for index, token in enumerate(need_list(content, "choices[0].logprobs.content")):
        logprob = need_dict(token, f"choices[0].logprobs.content[{index}]").get("logprob")
        if isinstance(logprob, bool) or not isinstance(logprob, int | float):
            raise Malformed(f"choices[0].logprobs.content[{index}].logprob should be a number")
        out.append(float(logprob))
    return tuple(out)


def decode_chat_completion(body: Any, model: str, request: ModelRequest) -> Decoded:
    """A ``chat.completion`` object, decoded; raises :class:`Malformed`."""
    root = need_dict(body, "the body")
    choices = need_list(root.get("choices"), "choices")
    if not choices:
        raise Malformed("choices is empty")
    choice = need_dict(choices[0], "choices[0]")
    message = need_dict(choice.get("message"), "choices[0].message")
    calls = parse_openai_tool_calls(
        message.get("tool_calls"),
        "choices[0].message.tool_calls",
        first_call_number(request.messages),
    )
    content = _content_text(message.get("content"), "choices[0].message.content")
    finish = opt_str(choice.get("finish_reason"), "choices[0].finish_reason")
    return Decoded(
        message=Message(role="assistant", content=content, tool_calls=calls),
        finish_reason=normalise_finish_reason(finish, bool(calls)),
        model=opt_str(root.get("model"), "model") or model,
        usage=_usage(root.get("usage")),
        logprobs=_logprobs(choice.get("logprobs")),
    )


class OpenAICompatBackend(HttpBackend):
    """A backend speaking Chat Completions to OpenAI, vLLM, Fireworks or any compatible
    server."""

    def __init__(
        self,
        *,
        spec: str,
        role: str,
        provider: str,
        model: str,
        base_url: str,
        api_key: str | None,
        options: BackendOptions,
        key_variable: str | None = None,
    ) -> None:
        """Args:
            provider: ``openai``, ``vllm`` or ``fireworks`` (the request's token-limit
                field differs, see :func:`encode_chat_request`).
            api_key: sent as ``Authorization: Bearer``; None sends no auth header.
            The rest as for :class:`~generator.backends._http.HttpBackend`.
        """
        self.provider = provider
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        super().__init__(
            spec=spec,
            role=role,
            model=model,
            base_url=base_url,
            path="/chat/completions",
            headers=headers,
            options=options,
            secret=api_key,
            key_variable=key_variable,
        )
        self._max_tokens_field = "max_completion_tokens" if provider == "openai" else "max_tokens"

    def _encode(self, request: ModelRequest) -> dict[str, Any]:
        return encode_chat_request(
            self.model,
            request,
            logprobs=self.options.logprobs,
            max_tokens_field=self._max_tokens_field,
        )

    def _decode(self, body: Any, request: ModelRequest) -> Decoded:
        return decode_chat_completion(body, self.model, request)
