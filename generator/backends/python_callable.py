"""An agent written as a Python function: ``python:pkg.module:function``.

The function is called as ``function(messages, tools)`` with both in OpenAI chat format
(``[{"role": ..., "content": ...}, ...]`` and ``[{"type": "function", "function": {...}}]``)
and returns, directly or as an awaitable, either the reply text or an OpenAI-style
assistant message::

    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "refund_order",
                                  "arguments": "{\\"order_id\\": \\"A1\\"}"}}]}

Coroutine functions run on the event loop; plain functions run in a worker thread so a
slow one does not stall the other conversations. Calls cost nothing and their tokens are
estimated from the text.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import time
from collections.abc import Callable
from typing import Any, NoReturn

from generator.backends._accounting import OverheadClock, estimate_usage
from generator.backends._options import BackendOptions, ClosesOnExit
from generator.backends._wire import Malformed, first_call_number
from generator.backends.openai_compat import (
    parse_openai_tool_calls,
    to_openai_messages,
    to_openai_tools,
)
from generator.errors import BackendError, BackendProtocolError, SpecError
from generator.records import Message, ModelReply, ModelRequest

__all__ = ["PythonCallableBackend", "load_callable"]

AgentCallable = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]
"""``(messages, tools) -> str | dict | Awaitable[str | dict]``."""


def load_callable(target: str, spec: str) -> AgentCallable:
    """Import ``pkg.module:attr`` (``attr`` may be dotted); :class:`SpecError` when the
    module or attribute is missing or not callable."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name.strip() or not attr.strip():
        raise SpecError(
            f"spec {spec!r}: write python:pkg.module:function (module, a colon, the callable)"
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise SpecError(
                f"spec {spec!r}: no module named {module_name!r}; install it or add its "
                "folder to PYTHONPATH"
            ) from exc
        raise SpecError(f"spec {spec!r}: importing {module_name!r} failed: {exc}") from exc
    except Exception as exc:
        raise SpecError(
            f"spec {spec!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise SpecError(
                f"spec {spec!r}: module {module_name!r} has no attribute {attr!r}"
            ) from exc
    if not callable(obj):
        raise SpecError(
            f"spec {spec!r}: {module_name}:{attr} is a {type(obj).__name__}, not a callable"
        )
    return obj  # type: ignore[no-any-return]


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004  # an object with an async __call__
    )


class PythonCallableBackend(ClosesOnExit):
    """A :class:`~generator.records.ChatBackend` around an importable Python callable."""

    def __init__(self, *, spec: str, role: str, target: str, options: BackendOptions) -> None:
        """Args:
            spec: the spec string (``python:pkg.module:function``).
            role: agent, person, writer or judge (named in errors).
            target: ``pkg.module:function``, imported now.
            options: the run's call policy (``concurrency`` bounds calls in flight).
        """
        self.spec = spec
        self.role = role
        self.model = target
        self._fn = load_callable(target, spec)
        self._async = _is_async(self._fn)
        self._slots = asyncio.Semaphore(options.concurrency)

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Call the function; :class:`BackendError` if it raises,
        :class:`BackendProtocolError` if it returns something that is not a reply."""
        started = time.perf_counter()
        clock = OverheadClock()
        with clock:
            messages = to_openai_messages(request.messages)
            tools = to_openai_tools(request.tools)
        async with self._slots:
            try:
                if self._async:
                    result = await self._fn(messages, tools)
                else:
                    result = await asyncio.to_thread(self._fn, messages, tools)
                    if inspect.isawaitable(result):
                        result = await result
            except Exception as exc:
                raise BackendError(
                    f"{self.spec} ({self.role}) raised {type(exc).__name__}: {exc}"
                ) from exc
        with clock:
            message = self._message(result, request)
            usage = estimate_usage(request.messages, request.tools, message)
        return ModelReply(
            message=message,
            finish_reason="tool_calls" if message.tool_calls else "stop",
            usage=usage,
            model=self.model,
            cost_usd=0.0,
            latency_s=time.perf_counter() - started,
            overhead_s=clock.total,
            usage_estimated=True,
        )

    def _message(self, result: Any, request: ModelRequest) -> Message:
        if isinstance(result, str):
            return Message(role="assistant", content=result)
        if not isinstance(result, dict):
            self._bad(f"returned a {type(result).__name__}; return the reply text (str) or an "
                      'assistant message dict {"role": "assistant", "content": ...}')
        role = result.get("role", "assistant")
        if role != "assistant":
            self._bad(f"returned a message with role {role!r}; the role must be 'assistant'")
        content = result.get("content")
        if content is not None and not isinstance(content, str):
            self._bad(f"returned content of type {type(content).__name__}; use a str or None")
        try:
            calls = parse_openai_tool_calls(
                result.get("tool_calls"), "tool_calls", first_call_number(request.messages)
            )
        except Malformed as exc:
            self._bad(f"returned malformed tool_calls: {exc}; each call is "
                      '{"id": ..., "type": "function", "function": {"name": ..., '
                      '"arguments": "<JSON text>"}}')
        if content is None and not calls:
            self._bad("returned an assistant message with neither content nor tool_calls")
        return Message(role="assistant", content=content, tool_calls=calls)

    def _bad(self, why: str) -> NoReturn:
        raise BackendProtocolError(f"{self.spec} ({self.role}) {why}")


    def __repr__(self) -> str:
        return f"<PythonCallableBackend {self.spec} role={self.role}>"
