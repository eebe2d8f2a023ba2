"""A real HTTP server on loopback that speaks the Anthropic Messages API.

It plays the same provider-neutral script as :mod:`tests.support.openai_loopback`
(:class:`TextReply`, :class:`ToolCallReply`, :class:`ErrorReply`, :class:`HangReply`,
:class:`MalformedReply`), rendered as Anthropic renders it::

    with AnthropicLoopback(script=[rate_limited(0.05), TextReply("Hi")]) as srv:
        ...  # POST {srv.url}/v1/messages with x-api-key and anthropic-version headers
    assert srv.requests[1].body["messages"][0]["role"] == "user"

Requests are checked as the API checks them (headers, ``max_tokens``, roles, content
blocks, every ``tool_use`` answered by a ``tool_result`` at the start of the next user
turn) and refused with the API's 400 error body; a refused request is a problem that fails
the test on leaving the ``with`` block. One check is stricter than today's API: it refuses
two turns of the same role in a row (the API used to; it now merges them), so a client's
own merging is tested.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
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

__all__ = [
    "AnthropicLoopback",
    "api_error",
    "invalid_messages_request",
    "overloaded",
    "rate_limited",
]

_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


def rate_limited(retry_after_s: float = 1.0) -> ErrorReply:
    """A 429 as Anthropic sends it, with ``retry-after``."""
    return ErrorReply(
        status=429,
        message=(
            "This request would exceed the rate limit for your organization "
            "(org-loopback) of 50 requests per minute. For details, refer to: "
            "https://docs.claude.com/en/api/rate-limits."
        ),
        type="rate_limit_error",
        retry_after_s=retry_after_s,
    )


def overloaded() -> ErrorReply:
    """A 529 as Anthropic sends it when its API is overloaded."""
    return ErrorReply(status=529, message="Overloaded", type="overloaded_error")


def api_error() -> ErrorReply:
    """A 500 as Anthropic sends it when it fails internally."""
    return ErrorReply(status=500, message="Internal server error", type="api_error")


def _check_blocks(index: int, role: str, content: Any, previous: Any) -> str | None:
    where = f"messages.{index}.content"
    if isinstance(content, str):
        return None if content.strip() else f"{where}: text content blocks must be non-empty"
    if not isinstance(content, list) or not content:
        return f"{where}: Input should be a valid list or string"
    seen_other = False
    results: list[str] = []
    for b, block in enumerate(content):
        at = f"{where}.{b}"
        if not isinstance(block, dict):
            return f"{at}: Input should be a valid dictionary"
        kind = block.get("type")
        if kind == "text":
            if not isinstance(block.get("text"), str) or not block["text"].strip():
                return f"{at}: text content blocks must contain non-whitespace text"
            seen_other = True
        elif kind == "tool_use":
            if role != "assistant":
                return f"{at}: tool_use blocks are only allowed in assistant messages"
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                return f"{at}: tool_use needs string id and name"
            if not isinstance(block.get("input"), dict):
                return f"{at}.input: Input should be a valid dictionary"
            seen_other = True
        elif kind == "tool_result":
            if role != "user":
                return f"{at}: tool_result blocks are only allowed in user messages"
            if not isinstance(block.get("tool_use_id"), str):
                return f"{at}.tool_use_id: Field required"
            if seen_other:
                return f"{where}: tool_result blocks must come before any other content"
            if "is_error" in block and not isinstance(block["is_error"], bool):
                return f"{at}.is_error: Input should be a valid boolean"
            results.append(block["tool_use_id"])
        else:
            return f"{at}.type: Input tag {kind!r} found using 'type' does not match"
    asked = _tool_use_ids(previous)
    unexpected = [r for r in results if r not in asked]
    if unexpected:
        return (f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {unexpected[0]}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message.")
    return None


def _tool_use_ids(message: Any) -> list[str]:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return []
    return [
        b["id"] for b in message["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _result_ids(message: Any) -> list[str]:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return []
    return [
        b["tool_use_id"] for b in message["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def invalid_messages_request(body: Any) -> str | None:
    """Why ``body`` is not a Messages request the API would accept, if it is not."""
    if not isinstance(body, dict):
        return "There was an issue with your request body: it is not a JSON object"
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: Field required (an integer >= 1)"
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        return "system: Input should be a valid string or list of text blocks"
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return "tools: Input should be a valid list"
        for t, tool in enumerate(tools):
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                return f"tools.{t}.name: Field required"
            if not isinstance(tool.get("input_schema"), dict):
                return f"tools.{t}.input_schema: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    previous: Any = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages.{index}: Input should be a valid dictionary"
        role = message.get("role")
        if role not in ("user", "assistant"):
            return (f"messages.{index}.role: Input should be 'user' or 'assistant'"
                    + (" (use the top-level system parameter)" if role == "system" else ""))
        if isinstance(previous, dict) and previous.get("role") == role:
            return (f"messages: roles must alternate between \"user\" and \"assistant\", "
                    f"but found multiple \"{role}\" roles in a row")
        problem = _check_blocks(index, role, message.get("content"), previous)
        if problem:
            return problem
        missing = [i for i in _tool_use_ids(previous) if i not in _result_ids(message)]
        if missing:
            return (f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {missing[0]}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message.")
        previous = message
    return None


class AnthropicLoopback(LoopbackServer):
    """Serves ``POST /v1/messages`` as the Anthropic API does (no streaming)."""

    @property
    def base_url(self) -> str:
        """What to pass as the Anthropic base URL: ``http://127.0.0.1:PORT``."""
        return self.url

    def _dispatch(self, request: IncomingRequest) -> RenderedResponse:
        if (request.method, request.path) != ("POST", "/v1/messages"):
            self._problem(f"{request.method} {request.path}: no such route on AnthropicLoopback")
            self._record(request.record())
            return _error(404, "not_found_error", "Not found")
        if not request.headers.get("x-api-key"):
            self._problem("POST /v1/messages without x-api-key")
            self._record(request.record())
            return _error(401, "authentication_error", "x-api-key header is required")
        if not request.headers.get("anthropic-version"):
            self._problem("POST /v1/messages without anthropic-version")
            self._record(request.record())
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        invalid = invalid_messages_request(request.body)
        if invalid is not None:
            self._problem(f"POST /v1/messages: {invalid}")
            self._record(request.record())
            return _error(400, "invalid_request_error", invalid)
        reply = self._next_reply()
        if reply is None:
            self._problem(
                f"POST /v1/messages: request #{len(self.requests) + 1} arrived after the "
                "script ran out"
            )
            self._record(request.record())
            return _error(500, "api_error", "loopback script exhausted")
        special = self._serve_special(request, reply)
        if special is not None:
            return special
        assert isinstance(reply, TextReply | ToolCallReply | ErrorReply)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        seq = self._next_sequence_number()
        request_id = f"req_01loopback{seq:012d}"
        if isinstance(reply, ErrorReply):
            self._record(request.record(reply))
            headers = {"request-id": request_id}
            if reply.retry_after_s is not None:
                headers["retry-after"] = f"{reply.retry_after_s:g}"
            return _error(reply.status, reply.type, reply.message, headers, request_id)
        message_id = f"msg_01loopback{seq:012d}"
        self._record(request.record(reply, message_id))
        return json_response(
            200, _message(message_id, request.body, reply), {"request-id": request_id}
        )


def _message(message_id: str, body: Mapping[str, Any], reply: TextReply | ToolCallReply) -> Any:
    content: list[dict[str, Any]] = []
    if reply.content:
        content.append({"type": "text", "text": reply.content})
    if isinstance(reply, ToolCallReply):
        for call in reply.calls:
            arguments = (json.loads(call.arguments) if isinstance(call.arguments, str)
                         else dict(call.arguments))
            content.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}
            )
        stop_reason = "tool_use"
    else:
        stop_reason = _STOP_REASONS.get(reply.finish_reason, reply.finish_reason)
    usage = reply.usage or _estimate(body, content)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model or body["model"],
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.prompt_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": usage.completion_tokens,
            "service_tier": "standard",
        },
    }


def _estimate(body: Mapping[str, Any], content: list[dict[str, Any]]) -> Usage:
    prompt = json.dumps([body.get("system"), body.get("messages")], separators=(",", ":"))
    completion = json.dumps(content, separators=(",", ":"))
    return Usage(max(1, len(prompt) // 4), max(1, len(completion) // 4))


def _error(
    status: int,
    type: str,
    message: str,
    headers: Mapping[str, str] | None = None,
    request_id: str | None = None,
) -> RenderedResponse:
    payload: dict[str, Any] = {"type": "error", "error": {"type": type, "message": message}}
    if request_id is not None:
        payload["request_id"] = request_id
    return json_response(status, payload, headers)
