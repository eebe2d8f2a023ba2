"""A real HTTP server on loopback that speaks Ollama's native chat API (``POST /api/chat``).

It plays the provider-neutral script of :mod:`tests.support.openai_loopback`, rendered as
Ollama renders it: one JSON object for ``"stream": false``, otherwise (Ollama's default)
newline-delimited JSON chunks ending with a ``"done": true`` object that carries the
counts. Tool calls go out without ids and with arguments as JSON objects, as Ollama sends
them; errors are ``{"error": "..."}`` with an HTTP status. Requests Ollama would refuse
(tool-call arguments given as a string, unknown roles) get its 400 and count as problems.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from tests.support.openai_loopback import (
    ErrorReply,
    IncomingRequest,
    LoopbackServer,
    RenderedResponse,
    TextReply,
    ToolCallReply,
    Usage,
    json_response,
)

__all__ = ["OllamaLoopback", "invalid_chat_request"]

_ROLES = ("system", "user", "assistant", "tool")
_CREATED_AT = "2026-01-15T09:30:00.000000Z"


def invalid_chat_request(body: Any) -> str | None:
    """Why ``body`` is not an ``/api/chat`` request Ollama would accept, if it is not."""
    if not isinstance(body, dict):
        return "invalid character: the body is not a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages are required"
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            return f"messages[{index}]: invalid role"
        if not isinstance(message.get("content", ""), str):
            return (f"json: cannot unmarshal {type(message['content']).__name__} into Go "
                    "struct field Message.messages.content of type string")
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                return f"messages[{index}].tool_calls: a call needs function.name"
            if not isinstance(function.get("arguments"), dict):
                return ("json: cannot unmarshal string into Go struct field "
                        "ToolCallFunction.messages.tool_calls.function.arguments of type "
                        "api.ToolCallFunctionArguments")
    options = body.get("options")
    if options is not None and not isinstance(options, dict):
        return "options: must be an object"
    return None


class OllamaLoopback(LoopbackServer):
    """Serves ``POST /api/chat`` as Ollama does."""

    @property
    def base_url(self) -> str:
        """What to use as ``OLLAMA_HOST``: ``http://127.0.0.1:PORT``."""
        return self.url

    def _dispatch(self, request: IncomingRequest) -> RenderedResponse:
        if (request.method, request.path) != ("POST", "/api/chat"):
            self._problem(f"{request.method} {request.path}: no such route on OllamaLoopback")
            self._record(request.record())
            return _error(404, "404 page not found")
        invalid = invalid_chat_request(request.body)
        if invalid is not None:
            self._problem(f"POST /api/chat: {invalid}")
            self._record(request.record())
            return _error(400, invalid)
        reply = self._next_reply()
        if reply is None:
            self._problem(
                f"POST /api/chat: request #{len(self.requests) + 1} arrived after the script "
                "ran out"
            )
            self._record(request.record())
            return _error(500, "loopback script exhausted")
        special = self._serve_special(request, reply)
        if special is not None:
            return special
        assert isinstance(reply, TextReply | ToolCallReply | ErrorReply)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        seq = self._next_sequence_number()
        if isinstance(reply, ErrorReply):
            self._record(request.record(reply))
            headers = {"retry-after": f"{reply.retry_after_s:g}"} if reply.retry_after_s else {}
            return _error(reply.status, reply.message, headers)
        self._record(request.record(reply, f"ollama-{seq}"))
        body: Mapping[str, Any] = request.body
        if body.get("stream", True) is False:
            return json_response(200, _final(body, reply, content_in_final=True))
        return RenderedResponse(
            status=200,
            headers={"content-type": "application/x-ndjson"},
            body=_ndjson(_chunks(body, reply)),
        )


def _message(reply: TextReply | ToolCallReply, content: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if isinstance(reply, ToolCallReply):
        message["tool_calls"] = [
            {
                "function": {
                    "index": index,
                    "name": call.name,
                    "arguments": (json.loads(call.arguments) if isinstance(call.arguments, str)
                                  else dict(call.arguments)),
                }
            }
            for index, call in enumerate(reply.calls)
        ]
    return message


def _final(
    body: Mapping[str, Any], reply: TextReply | ToolCallReply, *, content_in_final: bool
) -> dict[str, Any]:
    usage = reply.usage or _estimate(body, reply)
    done_reason = "length" if isinstance(reply, TextReply) and reply.finish_reason == "length" \
        else "stop"
    message = _message(reply, (reply.content or "") if content_in_final else "")
    if not content_in_final and isinstance(reply, ToolCallReply):
        del message["tool_calls"]  # streamed in their own chunk before this one
    return {
        "model": reply.model or body["model"],
        "created_at": _CREATED_AT,
        "message": message,
        "done_reason": done_reason,
        "done": True,
        "total_duration": 123_456_789,
        "load_duration": 1_234_567,
        "prompt_eval_count": usage.prompt_tokens,
        "prompt_eval_duration": 12_345_678,
        "eval_count": usage.completion_tokens,
        "eval_duration": 98_765_432,
    }


def _chunks(body: Mapping[str, Any], reply: TextReply | ToolCallReply) -> Iterator[dict[str, Any]]:
    model = reply.model or body["model"]
    text = reply.content or ""
    for start in range(0, len(text), 8):
        yield {"model": model, "created_at": _CREATED_AT,
               "message": {"role": "assistant", "content": text[start : start + 8]},
               "done": False}
    if isinstance(reply, ToolCallReply):
        yield {"model": model, "created_at": _CREATED_AT, "message": _message(reply, ""),
               "done": False}
    yield _final(body, reply, content_in_final=False)


def _ndjson(objects: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    for obj in objects:
        yield json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _estimate(body: Mapping[str, Any], reply: TextReply | ToolCallReply) -> Usage:
    prompt = json.dumps(body.get("messages"), separators=(",", ":"))
    completion = reply.content or ""
    if isinstance(reply, ToolCallReply):
        completion += "".join(c.name + c.arguments_json for c in reply.calls)
    return Usage(max(1, len(prompt) // 4), max(1, len(completion) // 4))


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> RenderedResponse:
    return json_response(status, {"error": message}, headers)
