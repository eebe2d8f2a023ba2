"""Ollama's native chat API (``POST {base}/api/chat``, ``stream: false``).

Tools go in OpenAI's function format; tool-call arguments travel as JSON objects both
ways, and calls come back without ids, so ``call_<n>`` ids are generated (numbered on from
the calls already in the conversation, hence the same for a seed). Sampling settings go in
``options`` (``temperature``, ``seed``, ``num_predict``); ``format: "json"`` asks for JSON.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from generator.backends._http import HttpBackend
from generator.backends._options import BackendOptions
from generator.backends._wire import (
    Decoded,
    Malformed,
    arguments_object,
    first_call_number,
    need_dict,
    opt_int,
    opt_str,
)
from generator.backends.openai_compat import (
    normalise_finish_reason,
    parse_openai_tool_calls,
    to_openai_tools,
)
from generator.errors import SpecError
from generator.records import Message, ModelRequest, TokenUsage

__all__ = [
    "DEFAULT_OLLAMA_URL",
    "OllamaBackend",
    "decode_chat_response",
    "encode_chat_request",
    "ollama_base_url",
]

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
"""Where Ollama listens unless ``OLLAMA_HOST`` or the spec's ``@URL`` says otherwise."""


def ollama_base_url(host: str) -> str:
    """A base URL from an ``OLLAMA_HOST`` value (``host``, ``host:port`` or a full URL),
    completed the way Ollama's own clients do: ``http://`` and port 11434 by default."""
    text = host.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SpecError(f"OLLAMA_HOST {host!r} is not a host or URL; e.g. 127.0.0.1:11434")
    try:
        port = parts.port
    except ValueError as exc:
        raise SpecError(f"OLLAMA_HOST {host!r} has a bad port: {exc}") from exc
    if port is None:
        port = 443 if parts.scheme == "https" else 11434
    hostname = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{hostname}:{port}{parts.path.rstrip('/')}"


def _messages(request: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in request.messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content or ""}
        if message.role == "tool" and message.name:
            item["tool_name"] = message.name
        if message.tool_calls:
            item["tool_calls"] = [
                {"function": {"name": call.name, "arguments": arguments_object(call)}}
                for call in message.tool_calls
            ]
        out.append(item)
    return out


def encode_chat_request(model: str, request: ModelRequest) -> dict[str, Any]:
    """The JSON body of an ``/api/chat`` request."""
    options: dict[str, Any] = {"num_predict": request.max_tokens}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.seed is not None:
        options["seed"] = request.seed
    body: dict[str, Any] = {
        "model": model,
        "messages": _messages(request),
        "stream": False,
        "options": options,
    }
    if request.tools:
        body["tools"] = to_openai_tools(request.tools)
    if request.json_output:
        body["format"] = "json"
    return body


def decode_chat_response(body: Any, model: str, request: ModelRequest) -> Decoded:
    """An ``/api/chat`` answer, decoded; raises :class:`Malformed`."""
    root = need_dict(body, "the body")
    if root.get("done") is False:
        raise Malformed("done is false: a partial answer to a request with stream false")
    message = need_dict(root.get("message"), "message")
    calls = parse_openai_tool_calls(
        message.get("tool_calls"), "message.tool_calls", first_call_number(request.messages)
    )
    content = opt_str(message.get("content"), "message.content")
    if calls and not content:
        content = None
    prompt = opt_int(root.get("prompt_eval_count"), "prompt_eval_count")
    output = opt_int(root.get("eval_count"), "eval_count")
    usage = TokenUsage(prompt, output) if prompt is not None and output is not None else None
    return Decoded(
        message=Message(role="assistant", content=content, tool_calls=calls),
        finish_reason=normalise_finish_reason(
            opt_str(root.get("done_reason"), "done_reason"), bool(calls)
        ),
        model=opt_str(root.get("model"), "model") or model,
        usage=usage,
    )


class OllamaBackend(HttpBackend):
    """A backend speaking Ollama's ``/api/chat``; no key."""

    provider = "ollama"

    def __init__(
        self, *, spec: str, role: str, model: str, base_url: str, options: BackendOptions
    ) -> None:
        """Args as for :class:`~generator.backends._http.HttpBackend`."""
        super().__init__(
            spec=spec,
            role=role,
            model=model,
            base_url=base_url,
            path="/api/chat",
            headers={},
            options=options,
        )

    def _encode(self, request: ModelRequest) -> dict[str, Any]:
        return encode_chat_request(self.model, request)

    def _decode(self, body: Any, request: ModelRequest) -> Decoded:
        return decode_chat_response(body, self.model, request)
