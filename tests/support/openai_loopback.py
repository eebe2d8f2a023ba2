"""A real HTTP server on loopback that speaks the OpenAI Chat Completions protocol.

Tests point a real client (the ``openai`` SDK, or a framework built on it) at it instead of
a paid API. It plays a *script*: a list of planned replies, served in order, one per
request, whatever the request says::

    script = [
        ToolCallReply([ToolCall(id="call_1", name="get_weather", arguments={"city": "Oslo"})]),
        TextReply("It is 4 degrees in Oslo."),
        ErrorReply.server_error(),
    ]
    with OpenAILoopback(script=script) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-loopback", max_retries=0)
        ...
    assert srv.requests[0].body["model"] == "gpt-4o-mini"

Every request is recorded (method, path, headers, parsed JSON body, which reply it got).
Anything unplanned — a request after the script ran out, an unknown route, a body that is
not a valid request — is answered the way the real API would answer it *and* remembered;
leaving the ``with`` block then raises :class:`LoopbackError`, so a test cannot pass by
accident. (Turn that off with ``strict=False`` when a test provokes such requests on
purpose, and inspect :attr:`LoopbackServer.problems` instead.)

Layout, so that other providers can be added as siblings:

* The script types (:class:`TextReply`, :class:`ToolCallReply`, :class:`ErrorReply`,
  :class:`ToolCall`, :class:`Usage`) say *what* the model answers and are
  provider-neutral.
* :class:`LoopbackServer` owns the socket, the serving thread, the script cursor and the
  request log. It knows nothing about any provider's wire format.
* A subclass renders replies in one provider's format: it implements
  :meth:`LoopbackServer._dispatch`. :class:`OpenAILoopback` serves
  ``POST /v1/chat/completions``; an ``AnthropicLoopback`` (``POST /v1/messages``) or an
  ``OllamaLoopback`` (``POST /api/chat``) would be further subclasses playing the same
  script types.

For exercising clients' failure handling and load, two more script types are
provider-neutral and served the same way by every subclass (see
:meth:`LoopbackServer._serve_special`): :class:`HangReply` holds the request open without
answering, then hangs up (client timeouts); :class:`MalformedReply` answers with raw bytes
(bodies that break the protocol). ``default=`` answers every request after the script
with the same reply, forever (benchmarks), and :attr:`LoopbackServer.max_in_flight` tells
how many requests the server was handling at once.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self

__all__ = [
    "DROP_CONNECTION",
    "ErrorReply",
    "HangReply",
    "IncomingRequest",
    "LoopbackError",
    "LoopbackServer",
    "MalformedReply",
    "OpenAILoopback",
    "RecordedRequest",
    "RenderedResponse",
    "Reply",
    "TextReply",
    "ToolCall",
    "ToolCallReply",
    "Usage",
    "json_response",
]

_log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class Usage:
    """Token counts the server reports for one reply."""

    prompt_tokens: int
    """Tokens the request is said to have used (``usage.prompt_tokens``)."""
    completion_tokens: int
    """Tokens the reply is said to have used (``usage.completion_tokens``)."""

    @property
    def total_tokens(self) -> int:
        """Sum of prompt and completion tokens, as the API reports it."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asks the client to make."""

    id: str
    """The call id (``call_...``) that the client must echo in its ``tool`` message."""
    name: str
    """The function name, one of the tools the request declared."""
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    """The arguments: a mapping is sent as compact JSON; a string is sent verbatim, so a
    test can serve malformed JSON on purpose."""

    @property
    def arguments_json(self) -> str:
        """The arguments exactly as they go over the wire."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, separators=(",", ":"))


@dataclass(frozen=True)
class TextReply:
    """A plain assistant message."""

    content: str
    """The assistant's text."""
    model: str | None = None
    """The model the reply claims to come from; ``None`` echoes the requested model."""
    usage: Usage | None = None
    """Token counts to report; ``None`` estimates them from the text (about 4 characters
    per token)."""
    finish_reason: str = "stop"
    """Why generation stopped: ``stop``, ``length`` or ``content_filter``."""
    delay_s: float = 0.0
    """Seconds to wait before answering, to exercise client timeouts."""
    logprobs: Sequence[float] | None = None
    """Per-token log probabilities, sent as ``choices[0].logprobs.content`` (one token per
    value, the text split evenly) when the request asks for ``logprobs``."""


@dataclass(frozen=True)
class ToolCallReply:
    """An assistant message that asks for one or more tool calls."""

    calls: Sequence[ToolCall]
    """The calls, in order. Must not be empty."""
    content: str | None = None
    """Optional text alongside the calls (most models send none)."""
    model: str | None = None
    """The model the reply claims to come from; ``None`` echoes the requested model."""
    usage: Usage | None = None
    """Token counts to report; ``None`` estimates them."""
    delay_s: float = 0.0
    """Seconds to wait before answering."""

    def __post_init__(self) -> None:
        if not self.calls:
            raise ValueError("ToolCallReply needs at least one ToolCall")
        object.__setattr__(self, "calls", tuple(self.calls))


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with the provider's error body, instead of a completion."""

    status: int
    """HTTP status code, e.g. 400, 401, 429, 500, 503."""
    message: str
    """Human-readable error message (``error.message``)."""
    type: str
    """Error type (``error.type``), e.g. ``server_error``, ``invalid_request_error``."""
    code: str | None = None
    """Machine-readable code (``error.code``), e.g. ``rate_limit_exceeded``."""
    param: str | None = None
    """The request parameter at fault (``error.param``), if any."""
    retry_after_s: float | None = None
    """If set, sent as the ``retry-after`` header (seconds)."""
    delay_s: float = 0.0
    """Seconds to wait before answering."""

    @classmethod
    def rate_limited(cls, retry_after_s: float = 1.0) -> ErrorReply:
        """A 429 as OpenAI sends it when a rate limit is hit."""
        return cls(
            status=429,
            message=(
                "Rate limit reached for gpt-4o-mini in organization org-loopback on "
                "requests per min (RPM): Limit 3, Used 3, Requested 1. "
                f"Please try again in {retry_after_s:g}s."
            ),
            type="requests",
            code="rate_limit_exceeded",
            retry_after_s=retry_after_s,
        )

    @classmethod
    def server_error(cls) -> ErrorReply:
        """A 500 as OpenAI sends it when it fails internally."""
        return cls(
            status=500,
            message=("The server had an error while processing your request. Sorry about that!"),
            type="server_error",
        )


@dataclass(frozen=True)
class HangReply:
    """No answer: the request is held open, then the connection is dropped unanswered.

    It is held for ``seconds`` or until the server closes, whichever comes first, so a
    client with a shorter timeout gives up first and a test never waits the whole time.
    """

    seconds: float = 30.0
    """Most seconds to hold the request."""


@dataclass(frozen=True)
class MalformedReply:
    """Raw bytes instead of a well-formed answer (truncated JSON, HTML from a proxy, a JSON
    object missing the fields the protocol requires)."""

    body: bytes
    """The body, sent as it is."""
    status: int = 200
    """HTTP status code."""
    content_type: str = "application/json"
    """The ``content-type`` header."""


Reply = TextReply | ToolCallReply | ErrorReply | HangReply | MalformedReply
"""One planned answer in a loopback script."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class RecordedRequest:
    """One request the loopback received, and what it answered."""

    method: str
    """HTTP method, e.g. ``POST``."""
    path: str
    """Request path without the query string, e.g. ``/v1/chat/completions``."""
    headers: Mapping[str, str]
    """Request headers, names lower-cased."""
    body: Any
    """The request body parsed as JSON (``None`` if it was empty or not JSON)."""
    reply: Reply | None
    """The scripted reply that was served, or ``None`` if none was (unknown route, bad
    request, script exhausted)."""
    response_id: str | None
    """The ``id`` of the completion served (``chatcmpl-...``), if one was."""


class LoopbackError(AssertionError):
    """Something the test did not plan for reached the loopback server."""


@dataclass(frozen=True)
class IncomingRequest:
    """A parsed request on its way to :meth:`LoopbackServer._dispatch` (for subclasses)."""

    method: str
    """HTTP method."""
    path: str
    """Path without the query string."""
    headers: Mapping[str, str]
    """Headers, names lower-cased."""
    body: Any
    """The body parsed as JSON, or ``None``."""

    def record(self, reply: Reply | None = None, response_id: str | None = None) -> RecordedRequest:
        """The log entry for this request and what was answered."""
        return RecordedRequest(self.method, self.path, self.headers, self.body, reply, response_id)


@dataclass(frozen=True)
class RenderedResponse:
    """What :meth:`LoopbackServer._dispatch` returns (for subclasses)."""

    status: int
    """HTTP status code."""
    headers: Mapping[str, str]
    """Response headers; ``content-length`` / ``transfer-encoding`` are added."""
    body: bytes | Iterable[bytes]
    """A whole body, or chunks to stream with chunked transfer encoding as they come."""


# --------------------------------------------------------------------------- server


class LoopbackServer:
    """A scripted HTTP server on ``127.0.0.1`` and a free port, in a background thread.

    Provider-neutral: it accepts connections, parses requests, records them and hands each
    one to :meth:`_dispatch`, which a subclass implements for one provider's routes and wire
    format. Use it as a context manager; the server is listening once ``__enter__``
    returns.
    """

    def __init__(
        self, script: Iterable[Reply] = (), *, strict: bool = True, default: Reply | None = None
    ) -> None:
        """Create a server that will play ``script``, one reply per request.

        Args:
            script: planned replies, served in order.
            strict: if true, leaving the ``with`` block raises :class:`LoopbackError`
                when anything unplanned happened (see :attr:`problems`).
            default: if set, the reply to every request after the script has run out, as
                many times as asked (benchmarks); the script then never runs out.
        """
        self._script: deque[Reply] = deque(script)
        self._strict = strict
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._problems: list[str] = []
        self._served = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._default = default
        self._in_flight = 0
        self._max_in_flight = 0
        self._closing = threading.Event()

    # -- lifecycle

    def start(self) -> None:
        """Bind to a free port and start serving in a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError(f"{type(self).__name__} is already running at {self.url}")
        self._closing.clear()
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.loopback = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{type(self).__name__}:{self.port}",
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release the port. Safe to call twice."""
        self._closing.set()  # release held HangReply requests so their threads end
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
        if exc_type is None and self._strict:
            self.check()

    def check(self) -> None:
        """Raise :class:`LoopbackError` if anything unplanned reached the server."""
        problems = self.problems
        if problems:
            raise LoopbackError(
                f"{type(self).__name__} saw {len(problems)} unplanned request(s):\n  "
                + "\n  ".join(problems)
            )

    # -- what tests read

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running; use it in a with block")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The server's root URL, ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def problems(self) -> list[str]:
        """Descriptions of unplanned requests so far (a copy)."""
        with self._lock:
            return list(self._problems)

    @property
    def pending(self) -> int:
        """How many scripted replies have not been served yet."""
        with self._lock:
            return len(self._script)

    def extend(self, replies: Iterable[Reply]) -> None:
        """Append replies to the script (also while serving)."""
        with self._lock:
            self._script.extend(replies)

    # -- for subclasses

    def _dispatch(self, request: IncomingRequest) -> RenderedResponse:
        """Answer one request. Subclasses route on method and path, and use
        :meth:`_next_reply`, :meth:`_record` and :meth:`_problem`; every request must be
        recorded exactly once."""
        raise NotImplementedError

    def _next_reply(self) -> Reply | None:
        """Take the next scripted reply, else the ``default`` reply, else ``None``."""
        with self._lock:
            return self._script.popleft() if self._script else self._default

    @property
    def in_flight(self) -> int:
        """Requests being handled right now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests handled at the same time so far."""
        with self._lock:
            return self._max_in_flight

    def _begin_request(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _end_request(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _serve_special(self, request: IncomingRequest, reply: Reply) -> RenderedResponse | None:
        """Serve a provider-neutral :class:`HangReply` or :class:`MalformedReply` (recorded),
        or return ``None`` for a reply the subclass renders itself."""
        if isinstance(reply, HangReply):
            self._record(request.record(reply))
            self._closing.wait(reply.seconds)
            return DROP_CONNECTION
        if isinstance(reply, MalformedReply):
            self._record(request.record(reply))
            return RenderedResponse(
                status=reply.status,
                headers={"content-type": reply.content_type},
                body=reply.body,
            )
        return None

    def _next_sequence_number(self) -> int:
        """A counter for deterministic ids, starting at 1."""
        with self._lock:
            self._served += 1
            return self._served

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _problem(self, description: str) -> None:
        _log.warning("%s: %s", type(self).__name__, description)
        with self._lock:
            self._problems.append(description)


class _HTTPServer(ThreadingHTTPServer):
    """The stdlib threading server, pointing back at the loopback that owns it."""

    daemon_threads = True
    # The stdlib's listen backlog of 5 drops connections when many clients connect at once
    # (a benchmark's 32+ requests in flight); the kernel caps this at somaxconn anyway.
    request_queue_size = 256
    loopback: LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up is normal; anything else is a loopback bug worth failing on."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            _log.debug("client %s hung up: %r", client_address, exc)
            return
        self.loopback._problem(f"connection from {client_address} failed: {exc!r}")


class _Handler(BaseHTTPRequestHandler):
    """Parses one HTTP/1.1 request and writes what the loopback's ``_dispatch`` renders."""

    protocol_version = "HTTP/1.1"
    # Idle keep-alive connections from pooled clients end after this many seconds, so
    # handler threads do not outlive the test by much.
    timeout = 10
    server: _HTTPServer

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("%s %s", self.address_string(), format % args)

    def _handle(self) -> None:
        loopback = self.server.loopback
        length = self.headers.get("content-length")
        raw = self.rfile.read(int(length)) if length else b""
        path = self.path.split("?", 1)[0]
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        loopback._begin_request()
        try:
            response = loopback._dispatch(
                IncomingRequest(
                    self.command,
                    path,
                    {name.lower(): value for name, value in self.headers.items()},
                    body,
                )
            )
        except Exception as exc:  # a bug in the loopback must fail the test, not hang it
            _log.exception("loopback dispatch failed")
            loopback._problem(f"{self.command} {path}: loopback raised {exc!r}")
            response = json_response(500, {"error": {"message": repr(exc)}})
        finally:
            loopback._end_request()
        self._write(response)

    def _write(self, response: RenderedResponse) -> None:
        if response is DROP_CONNECTION:
            self.close_connection = True
            return
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        if isinstance(response.body, bytes):
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for chunk in response.body:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            # The client stopped reading mid-stream, as clients may.
            self.close_connection = True


DROP_CONNECTION = RenderedResponse(status=0, headers={}, body=b"")
"""What :meth:`LoopbackServer._dispatch` returns to hang up without answering."""


def json_response(
    status: int, payload: Any, headers: Mapping[str, str] | None = None
) -> RenderedResponse:
    """A JSON response (for subclasses)."""
    return RenderedResponse(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        body=json.dumps(payload).encode(),
    )


# --------------------------------------------------------------------------- OpenAI


class OpenAILoopback(LoopbackServer):
    """Serves ``POST /v1/chat/completions`` as the OpenAI API does.

    Non-streaming requests get a ``chat.completion`` object. Requests with
    ``"stream": true`` get ``chat.completion.chunk`` server-sent events ending in
    ``data: [DONE]``; with ``stream_options.include_usage`` a final chunk carries the usage
    and empty ``choices``, and every earlier chunk has ``"usage": null``, as the API does.
    :class:`ErrorReply` becomes an HTTP error with an OpenAI error body, before any stream
    starts.
    """

    SYSTEM_FINGERPRINT: ClassVar[str] = "fp_loopback"
    """The ``system_fingerprint`` every completion carries."""

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` to an OpenAI client: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    def _dispatch(self, request: IncomingRequest) -> RenderedResponse:
        if (request.method, request.path) != ("POST", "/v1/chat/completions"):
            where = f"{request.method} {request.path}"
            self._problem(f"{where}: no such route on {type(self).__name__}")
            self._record(request.record())
            return _openai_error(404, f"Invalid URL ({where})", "invalid_request_error")
        return self._chat_completions(request)

    def _chat_completions(self, request: IncomingRequest) -> RenderedResponse:
        body = request.body
        invalid = _invalid_chat_request(body)
        if invalid is not None:
            self._problem(f"POST /v1/chat/completions: {invalid}")
            self._record(request.record())
            return _openai_error(400, invalid, "invalid_request_error")

        reply = self._next_reply()
        if reply is None:
            n = len(self.requests) + 1
            self._problem(
                f"POST /v1/chat/completions: request #{n} arrived after the script ran out"
            )
            self._record(request.record())
            return _openai_error(
                500,
                "loopback script exhausted: no reply planned for this request",
                "server_error",
            )

        special = self._serve_special(request, reply)
        if special is not None:
            return special
        assert not isinstance(reply, HangReply | MalformedReply)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        seq = self._next_sequence_number()
        request_id = f"req_loopback{seq:020d}"
        if isinstance(reply, ErrorReply):
            self._record(request.record(reply))
            extra = {"x-request-id": request_id}
            if reply.retry_after_s is not None:
                extra["retry-after"] = f"{reply.retry_after_s:g}"
            return _openai_error(
                reply.status, reply.message, reply.type, reply.code, reply.param, extra
            )

        completion_id = f"chatcmpl-loopback{seq:012d}"
        self._record(request.record(reply, completion_id))
        plan = _Completion(
            id=completion_id,
            created=int(time.time()),
            model=reply.model or str(body["model"]),
            system_fingerprint=self.SYSTEM_FINGERPRINT,
            reply=reply,
            usage=reply.usage or _estimate_usage(body, reply),
            want_logprobs=bool(body.get("logprobs")),
        )
        response_headers = {"x-request-id": request_id, "openai-processing-ms": "1"}
        if body.get("stream"):
            stream_options = body.get("stream_options") or {}
            include_usage = bool(stream_options.get("include_usage"))
            return RenderedResponse(
                status=200,
                headers={
                    "content-type": "text/event-stream; charset=utf-8",
                    "cache-control": "no-cache",
                    **response_headers,
                },
                body=_sse(plan.chunks(include_usage=include_usage)),
            )
        return json_response(200, plan.completion(), response_headers)


@dataclass(frozen=True)
class _Completion:
    """Everything needed to render one reply as a completion or as chunks."""

    id: str
    created: int
    model: str
    system_fingerprint: str
    reply: TextReply | ToolCallReply
    usage: Usage
    want_logprobs: bool = False

    def _envelope(self, obj: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": obj,
            "created": self.created,
            "model": self.model,
            "service_tier": "default",
            "system_fingerprint": self.system_fingerprint,
        }

    @property
    def _finish_reason(self) -> str:
        if isinstance(self.reply, ToolCallReply):
            return "tool_calls"
        return self.reply.finish_reason

    def _usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "total_tokens": self.usage.total_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def completion(self) -> dict[str, Any]:
        """The ``chat.completion`` object for a non-streaming request."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self.reply.content,
            "refusal": None,
            "annotations": [],
        }
        if isinstance(self.reply, ToolCallReply):
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json},
                }
                for call in self.reply.calls
            ]
        return {
            **self._envelope("chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": self._logprobs(),
                    "finish_reason": self._finish_reason,
                }
            ],
            "usage": self._usage(),
        }

    def _logprobs(self) -> dict[str, Any] | None:
        if not (self.want_logprobs and isinstance(self.reply, TextReply)):
            return None
        values = self.reply.logprobs
        if values is None:
            return None
        text = self.reply.content
        n = len(values)
        cuts = [len(text) * i // n for i in range(n + 1)] if n else [0]
        tokens = [text[cuts[i] : cuts[i + 1]] for i in range(n)]
        return {
            "content": [
                {
                    "token": token,
                    "logprob": value,
                    "bytes": list(token.encode()),
                    "top_logprobs": [],
                }
                for token, value in zip(tokens, values, strict=True)
            ],
            "refusal": None,
        }

    def chunks(self, *, include_usage: bool) -> Iterator[dict[str, Any]]:
        """The ``chat.completion.chunk`` objects for a streaming request, in order."""

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            out = {
                **self._envelope("chat.completion.chunk"),
                "choices": [
                    {
                        "index": 0,
                        "delta": delta,
                        "logprobs": None,
                        "finish_reason": finish_reason,
                    }
                ],
            }
            if include_usage:
                out["usage"] = None
            return out

        content = self.reply.content
        # The first delta carries the role. A tool-call reply without text opens, as the
        # API does, with the role and the first call's header in one chunk.
        opening: dict[str, Any] = {"role": "assistant", "content": "", "refusal": None}
        if content:
            yield chunk(opening)
            opening = {}
            for piece in _pieces(content):
                yield chunk({"content": piece})
        elif isinstance(self.reply, ToolCallReply):
            opening["content"] = None
        else:
            yield chunk(opening)
        if isinstance(self.reply, ToolCallReply):
            for index, call in enumerate(self.reply.calls):
                header = {
                    "index": index,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }
                yield chunk({**opening, "tool_calls": [header]})
                opening = {}
                for piece in _pieces(call.arguments_json):
                    yield chunk(
                        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                    )
        yield chunk({}, self._finish_reason)
        if include_usage:
            yield {**self._envelope("chat.completion.chunk"), "choices": [], "usage": self._usage()}


def _sse(events: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """Server-sent events as OpenAI frames them, ending with ``data: [DONE]``."""
    for event in events:
        yield b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


def _pieces(text: str, size: int = 8) -> Iterator[str]:
    """Split text into the small deltas a streaming model sends."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _estimate_usage(body: Mapping[str, Any], reply: TextReply | ToolCallReply) -> Usage:
    """About four characters per token, like the rule of thumb; deterministic."""
    prompt = json.dumps(body.get("messages"), separators=(",", ":"))
    completion = reply.content or ""
    if isinstance(reply, ToolCallReply):
        completion += "".join(c.name + c.arguments_json for c in reply.calls)
    return Usage(
        prompt_tokens=max(1, math.ceil(len(prompt) / 4)),
        completion_tokens=max(1, math.ceil(len(completion) / 4)),
    )


def _invalid_chat_request(body: Any) -> str | None:
    """Why ``body`` is not a chat completions request the API would accept, if it is not."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    if not isinstance(body.get("model"), str):
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            return f"Invalid value for 'messages[{index}]': each message needs a 'role'"
    return None


def _openai_error(
    status: int,
    message: str,
    type: str,
    code: str | None = None,
    param: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> RenderedResponse:
    """An error response with OpenAI's ``{"error": {...}}`` body."""
    payload = {"error": {"message": message, "type": type, "param": param, "code": code}}
    return json_response(status, payload, headers)
