"""An OpenAI-compatible chat-completions server that answers after a fixed delay.

The load target of ``bench/generator_loopback.py``, run as its own process so that its
CPU is not counted as tracemill's. It plays a plausible agent: when the last message is a
user message and tools are offered, it calls the first tool with the identifiers it sees in
the user's words (or asks for them); after a tool result it answers in text. Every answer
waits ``--delay`` seconds (asyncio.sleep, so thousands can wait at once).

``GET /stats`` returns ``{"requests", "in_flight", "max_in_flight"}``; ``POST /reset``
zeroes them. It prints ``PORT <n>`` on stdout once listening.

    python bench/openai_stub_server.py --delay 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_ID = re.compile(r"\b[A-Z]{1,4}-\d{3,}\b|\b\d{4,}\b")


class Stub:
    """The ASGI application."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"]
        if scope["method"] == "GET" and path == "/stats":
            await _json(send, {"requests": self.requests, "in_flight": self.in_flight,
                               "max_in_flight": self.max_in_flight})
            return
        if scope["method"] == "POST" and path == "/reset":
            self.requests = self.max_in_flight = 0
            await _json(send, {"ok": True})
            return
        if scope["method"] != "POST" or not path.endswith("/chat/completions"):
            await _json(send, {"error": {"message": f"no route {path}"}}, status=404)
            return
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            request = json.loads(body)
            await asyncio.sleep(self.delay)
            await _json(send, _completion(request, self.requests))
        finally:
            self.in_flight -= 1


def _completion(request: dict[str, Any], number: int) -> dict[str, Any]:
    messages = request.get("messages") or []
    last = messages[-1] if messages else {}
    tools = request.get("tools") or []
    message: dict[str, Any]
    if last.get("role") == "user" and tools:
        function = tools[0]["function"]
        required = function.get("parameters", {}).get("required") or []
        found = _ID.findall(str(last.get("content") or ""))
        if required and not found:
            message = {"role": "assistant",
                       "content": f"Could you give me your {required[0].replace('_', ' ')}?"}
        else:
            arguments = {name: found[0] if found else "" for name in required}
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{number}", "type": "function",
                "function": {"name": function["name"], "arguments": json.dumps(arguments)}}]}
    elif last.get("role") == "tool":
        message = {"role": "assistant",
                   "content": "I checked that for you: " + str(last.get("content"))[:120]}
    else:
        message = {"role": "assistant", "content": "Is there anything else I can help with?"}
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0,
            "model": request.get("model", "stub"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 200, "completion_tokens": 30, "total_tokens": 230}}


async def _json(send: Send, payload: object, status: int = 200) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.2, help="Seconds before each answer.")
    parser.add_argument("--port", type=int, default=0, help="Port (0: any free).")
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", args.port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(Stub(args.delay), log_level="warning", backlog=1024,
                            access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
