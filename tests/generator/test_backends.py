"""Model backends against loopback servers that speak each provider's real protocol.

Every remote backend is built from its spec with :func:`build_backend` and talks HTTP to a
real server on port 0 (:mod:`tests.support.openai_loopback` and its siblings); what the
server received is checked as well as what the backend returned.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.backends import BackendOptions, build_backend, parse_spec
from generator.backends._http import backoff_delay, retry_after_s
from generator.backends.anthropic import encode_messages_request
from generator.backends.ollama import encode_chat_request as encode_ollama
from generator.backends.ollama import ollama_base_url
from generator.errors import (
    BackendError,
    BackendProtocolError,
    BudgetError,
    MissingKeyError,
    SpecError,
)
from generator.prices import ModelPrice, PriceTable, base_model_name
from generator.records import (
    ChatBackend,
    Message,
    ModelReply,
    ModelRequest,
    TokenUsage,
    ToolCall,
    ToolSpec,
)
from tests.support import anthropic_loopback as anth
from tests.support.anthropic_loopback import AnthropicLoopback, invalid_messages_request
from tests.support.ollama_loopback import OllamaLoopback, invalid_chat_request
from tests.support.openai_loopback import (
    ErrorReply,
    HangReply,
    MalformedReply,
    OpenAILoopback,
    Reply,
    TextReply,
    ToolCallReply,
    Usage,
)
from tests.support.openai_loopback import ToolCall as WireCall

T = TypeVar("T")
KEY = "sk-test-0123456789abcdef"
FAST = BackendOptions(timeout_s=2, max_retries=2, backoff_base_s=0.01, backoff_max_s=0.05)
ORDER_TOOL = ToolSpec(
    name="get_order",
    description="Look up an order by id.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"]},
)
HELLO = ModelRequest(
    messages=(Message("system", "You are a support agent."), Message("user", "Hi there")),
    max_tokens=50, temperature=0.2, seed=7,
)
ASK = ModelRequest(
    messages=(Message("system", "Be brief."), Message("user", "Where is order A1?")),
    tools=(ORDER_TOOL,),
)


def run(
    spec: str,
    credentials: Mapping[str, str],
    body: Callable[[ChatBackend], Awaitable[T]],
    options: BackendOptions = FAST,
) -> T:
    """Build the backend, run ``body`` with it on a fresh event loop, close it."""
    async def main() -> T:
        async with aclosing(build_backend(spec, role="agent", credentials=credentials,
                                          options=options)) as backend:
            return await body(backend)
    return asyncio.run(main())


def complete(spec: str, credentials: Mapping[str, str], request: ModelRequest,
             options: BackendOptions = FAST) -> ModelReply:
    """One call."""
    return run(spec, credentials, lambda b: b.complete(request), options)


def after_tool_call(reply: ModelReply, result: str) -> ModelRequest:
    """ASK continued with the assistant's tool call and the tool's result."""
    call = reply.message.tool_calls[0]
    return ModelRequest(
        messages=(*ASK.messages, reply.message,
                  Message("tool", result, tool_call_id=call.id, name=call.name)),
        tools=ASK.tools,
    )


def openai_env(srv: OpenAILoopback) -> dict[str, str]:
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": srv.base_url}


# --------------------------------------------------------------------------- OpenAI


def test_openai_text_reply_and_request_shape() -> None:
    with OpenAILoopback([TextReply("Hello!", usage=Usage(12, 3), delay_s=0.2)]) as srv:
        reply = complete("openai:gpt-4o-mini", openai_env(srv), HELLO)
    assert reply.message == Message("assistant", "Hello!")
    assert (reply.finish_reason, reply.model, reply.retries) == ("stop", "gpt-4o-mini", 0)
    assert reply.usage == TokenUsage(12, 3) and not reply.usage_estimated
    # The 200 ms the server took are latency, not our overhead.
    assert reply.latency_s >= 0.2
    assert 0 < reply.overhead_s < 0.05
    [seen] = srv.requests
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": "You are a support agent."},
                     {"role": "user", "content": "Hi there"}],
        "max_completion_tokens": 50, "temperature": 0.2, "seed": 7,
    }


def test_openai_tool_call_round_trip() -> None:
    script: list[Reply] = [
        ToolCallReply([WireCall("call_abc", "get_order", {"order_id": "A1"})]),
        TextReply("Order A1 ships today."),
    ]
    with OpenAILoopback(script) as srv:
        async def two_turns(backend: ChatBackend) -> tuple[ModelReply, ModelReply]:
            first = await backend.complete(ASK)
            return first, await backend.complete(after_tool_call(first, '{"status": "ok"}'))
        first, second = run("openai:gpt-4o-mini", openai_env(srv), two_turns)
    assert first.finish_reason == "tool_calls"
    assert first.message.tool_calls == (ToolCall("call_abc", "get_order", '{"order_id":"A1"}'),)
    assert first.message.content is None
    assert second.message.content == "Order A1 ships today."
    body = srv.requests[1].body
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_order", "description": "Look up an order by id.",
        "parameters": dict(ORDER_TOOL.parameters)}}]
    assert body["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_abc", "type": "function",
            "function": {"name": "get_order", "arguments": '{"order_id":"A1"}'}}]},
        {"role": "tool", "tool_call_id": "call_abc", "content": '{"status": "ok"}'},
    ]


def test_vllm_and_fireworks_use_max_tokens_and_their_keys() -> None:
    with OpenAILoopback([TextReply("a"), TextReply("b")]) as srv:
        complete(f"vllm:llama3@{srv.base_url}", {}, HELLO)
        complete("fireworks:accounts/fireworks/models/x",
                 {"FIREWORKS_API_KEY": "fw-key", "FIREWORKS_BASE_URL": srv.base_url}, HELLO)
    vllm, fireworks = srv.requests
    assert "authorization" not in vllm.headers
    assert vllm.body["max_tokens"] == 50 and "max_completion_tokens" not in vllm.body
    assert fireworks.headers["authorization"] == "Bearer fw-key"
    assert fireworks.body["model"] == "accounts/fireworks/models/x"


def test_openai_logprobs_json_mode_and_cost() -> None:
    prices = PriceTable.empty().with_prices({"gpt-4o-mini": ModelPrice(1.0, 2.0)})
    options = BackendOptions(timeout_s=2, logprobs=True, prices=prices)
    script = [TextReply('{"ok": true}', model="gpt-4o-mini-2024-07-18",
                        usage=Usage(1000, 500), logprobs=[-0.5, -0.25, 0.0])]
    request = ModelRequest(messages=(Message("user", "Answer in json"),), json_output=True)
    with OpenAILoopback(script) as srv:
        reply = complete("openai:gpt-4o-mini", openai_env(srv), request, options)
    assert reply.logprobs == (-0.5, -0.25, 0.0)
    assert reply.model == "gpt-4o-mini-2024-07-18"
    assert reply.cost_usd == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1e6)
    body = srv.requests[0].body
    assert body["logprobs"] is True and body["response_format"] == {"type": "json_object"}


def test_openai_missing_usage_is_estimated_and_flagged() -> None:
    completion = {"id": "c1", "object": "chat.completion", "model": "gpt-4o-mini",
                  "choices": [{"index": 0, "finish_reason": "length",
                               "message": {"role": "assistant", "content": "x" * 40}}]}
    with OpenAILoopback([MalformedReply(json.dumps(completion).encode())]) as srv:
        reply = complete("openai:gpt-4o-mini", openai_env(srv), HELLO)
    assert reply.usage_estimated and reply.usage.output_tokens == 10
    assert reply.usage.input_tokens > 0 and reply.finish_reason == "length"
    assert reply.logprobs is None


def test_rate_limit_then_success_honours_retry_after() -> None:
    options = BackendOptions(timeout_s=2, backoff_base_s=0.001, backoff_max_s=1)
    with OpenAILoopback([ErrorReply.rate_limited(retry_after_s=0.3), TextReply("ok")]) as srv:
        reply = complete("openai:gpt-4o-mini", openai_env(srv), HELLO, options)
    assert reply.retries == 1 and reply.message.content == "ok"
    assert reply.latency_s >= 0.3  # waited as told, not the 1 ms backoff
    assert len(srv.requests) == 2


def test_retry_after_is_capped_by_backoff_max() -> None:
    with OpenAILoopback([ErrorReply.rate_limited(retry_after_s=30), TextReply("ok")]) as srv:
        started = time.perf_counter()
        reply = complete("openai:gpt-4o-mini", openai_env(srv), HELLO)
    assert reply.retries == 1 and time.perf_counter() - started < 5


def test_server_error_then_success() -> None:
    with OpenAILoopback([ErrorReply.server_error(), TextReply("ok")]) as srv:
        reply = complete("openai:gpt-4o-mini", openai_env(srv), HELLO)
    assert reply.retries == 1 and len(srv.requests) == 2


def test_exhausted_retries_raise_backend_error_without_the_key() -> None:
    leaky = ErrorReply(500, f"upstream rejected key {KEY}", "server_error")
    with OpenAILoopback([leaky] * 3) as srv, pytest.raises(BackendError) as caught:
        complete("openai:gpt-4o-mini", openai_env(srv), HELLO)
    message = str(caught.value)
    assert type(caught.value) is BackendError
    assert "openai:gpt-4o-mini (agent)" in message and "after 3 attempts" in message
    assert "HTTP 500" in message and "upstream rejected key ***" in message
    assert KEY not in message
    assert len(srv.requests) == 3


def test_client_errors_are_not_retried_and_401_names_the_key_variable() -> None:
    bad_key = ErrorReply(401, "Incorrect API key provided.", "invalid_request_error")
    with OpenAILoopback([bad_key]) as srv, pytest.raises(BackendError, match="OPENAI_API_KEY"):
        complete("openai:gpt-4o-mini", openai_env(srv), HELLO)
    assert len(srv.requests) == 1


def test_timeout_is_retried_then_raised() -> None:
    options = BackendOptions(timeout_s=0.3, max_retries=1, backoff_base_s=0.01)
    with OpenAILoopback([HangReply(), HangReply()]) as srv:
        started = time.perf_counter()
        with pytest.raises(BackendError, match=r"after 2 attempts: no answer within timeout"):
            complete("openai:gpt-4o-mini", openai_env(srv), HELLO, options)
        assert len(srv.requests) == 2 and time.perf_counter() - started < 3


def test_unreachable_server_is_a_backend_error() -> None:
    with OpenAILoopback() as srv:
        url = srv.base_url  # the port is free again once the server has closed
    with pytest.raises(BackendError, match="cannot reach"):
        complete(f"vllm:m@{url}", {}, HELLO)


def test_malformed_body_is_retried_once_then_a_protocol_error() -> None:
    script = [MalformedReply(b"<html>502 Bad Gateway</html>", content_type="text/html"),
              MalformedReply(b'{"id": "chatcmpl-1", "object": "chat.completion"}')]
    with OpenAILoopback(script) as srv, pytest.raises(BackendProtocolError) as caught:
        complete("openai:gpt-4o-mini", openai_env(srv), HELLO)
    assert "choices should be an array" in str(caught.value)
    assert len(srv.requests) == 2
    with OpenAILoopback([MalformedReply(b'{"choices": [tru'), TextReply("ok")]) as srv:
        assert complete("openai:gpt-4o-mini", openai_env(srv), HELLO).retries == 1


def test_concurrency_limit_holds_at_the_server() -> None:
    async def many(backend: ChatBackend) -> list[ModelReply]:
        return await asyncio.gather(*(backend.complete(HELLO) for _ in range(12)))

    for limit in (3, 12):
        options = BackendOptions(timeout_s=5, concurrency=limit)
        with OpenAILoopback(default=TextReply("ok", delay_s=0.1)) as srv:
            replies = run(f"vllm:m@{srv.base_url}", {}, many, options)
        assert len(replies) == 12 and len(srv.requests) == 12
        assert srv.max_in_flight <= limit
        assert srv.max_in_flight >= min(limit, 6)  # the limit is what held them back


# --------------------------------------------------------------------------- Anthropic


def anthropic_env(srv: AnthropicLoopback) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": srv.base_url}


def test_anthropic_text_reply_and_request_shape() -> None:
    with AnthropicLoopback([TextReply("Hello!", usage=Usage(21, 4))]) as srv:
        reply = complete("anthropic:claude-sonnet-4-5", anthropic_env(srv), HELLO)
    assert reply.message == Message("assistant", "Hello!")
    assert (reply.finish_reason, reply.usage, reply.model) == (
        "stop", TokenUsage(21, 4), "claude-sonnet-4-5")
    assert reply.cost_usd == pytest.approx((21 * 3 + 4 * 15) / 1e6)  # built-in list price
    [seen] = srv.requests
    assert seen.headers["x-api-key"] == KEY and seen.headers["anthropic-version"] == "2023-06-01"
    assert seen.body == {
        "model": "claude-sonnet-4-5", "max_tokens": 50, "temperature": 0.2,
        "system": "You are a support agent.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi there"}]}],
    }


def test_anthropic_tool_call_round_trip_merges_turns() -> None:
    script: list[Reply] = [
        ToolCallReply([WireCall("toolu_01A", "get_order", {"order_id": "A1"})],
                      content="Let me check."),
        TextReply("It was not found.", finish_reason="length"),
    ]
    with AnthropicLoopback(script) as srv:
        async def two_turns(backend: ChatBackend) -> tuple[ModelReply, ModelReply]:
            first = await backend.complete(ASK)
            follow = after_tool_call(first, '{"error": "not_found"}')
            follow = ModelRequest(messages=(*follow.messages, Message("user", "Any news?"),
                                            Message("user", "Please hurry.")), tools=ASK.tools)
            return first, await backend.complete(follow)
        first, second = run("anthropic:claude-haiku-4-5", anthropic_env(srv), two_turns)
    assert first.finish_reason == "tool_calls" and first.message.content == "Let me check."
    assert first.message.tool_calls == (ToolCall("toolu_01A", "get_order", '{"order_id":"A1"}'),)
    assert second.finish_reason == "length"
    body = srv.requests[1].body
    assert body["tools"] == [{"name": "get_order", "description": "Look up an order by id.",
                              "input_schema": dict(ORDER_TOOL.parameters)}]
    assert body["system"] == "Be brief."
    assert body["messages"][1:] == [
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_order",
             "input": {"order_id": "A1"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A",
             "content": '{"error": "not_found"}', "is_error": True},
            {"type": "text", "text": "Any news?"},
            {"type": "text", "text": "Please hurry."}]},
    ]


def test_anthropic_retries_429_529_and_500() -> None:
    script: list[Reply] = [
        anth.rate_limited(0.05), anth.overloaded(), anth.api_error(), TextReply("ok")]
    with AnthropicLoopback(script) as srv:
        reply = complete("anthropic:claude-haiku-4-5", anthropic_env(srv),
                         HELLO, BackendOptions(timeout_s=2, backoff_base_s=0.01))
    assert reply.retries == 3 and reply.message.content == "ok"


def test_anthropic_exhausted_and_malformed() -> None:
    with AnthropicLoopback([anth.overloaded()] * 3) as srv, \
            pytest.raises(BackendError, match=r"HTTP 529 .*overloaded_error"):
        complete("anthropic:claude-haiku-4-5", anthropic_env(srv), HELLO)
    with AnthropicLoopback([MalformedReply(b'{"type": "message", "content": "hi"}')] * 2) as srv, \
            pytest.raises(BackendProtocolError, match="content should be an array"):
        complete("anthropic:claude-haiku-4-5", anthropic_env(srv), HELLO)


# --------------------------------------------------------------------------- Ollama


def test_ollama_text_reply_and_request_shape() -> None:
    request = ModelRequest(messages=HELLO.messages, max_tokens=64, temperature=0.0, seed=3,
                           json_output=True)
    with OllamaLoopback([TextReply("{}", usage=Usage(30, 2))]) as srv:
        host = srv.base_url.removeprefix("http://")  # OLLAMA_HOST is often host:port
        reply = complete("ollama:llama3.1:8b", {"OLLAMA_HOST": host}, request)
    assert (reply.message.content, reply.usage, reply.model) == (
        "{}", TokenUsage(30, 2), "llama3.1:8b")
    assert reply.cost_usd == 0.0 and not reply.usage_estimated
    body = srv.requests[0].body
    assert body["stream"] is False and body["format"] == "json"
    assert body["options"] == {"num_predict": 64, "temperature": 0.0, "seed": 3}


def test_ollama_tool_call_round_trip_generates_call_ids() -> None:
    script = [ToolCallReply([WireCall("ignored", "get_order", {"order_id": "A1"})]),
              ToolCallReply([WireCall("ignored", "get_order", {"order_id": "B2"}),
                             WireCall("ignored", "get_order", {"order_id": "C3"})])]
    with OllamaLoopback(script) as srv:
        async def two_turns(backend: ChatBackend) -> tuple[ModelReply, ModelReply]:
            first = await backend.complete(ASK)
            return first, await backend.complete(after_tool_call(first, '{"status":"ok"}'))
        first, second = run(f"ollama:qwen3@{srv.base_url}", {}, two_turns)
    assert first.message.tool_calls == (ToolCall("call_1", "get_order", '{"order_id":"A1"}'),)
    assert [c.id for c in second.message.tool_calls] == ["call_2", "call_3"]
    assert first.finish_reason == "tool_calls"
    body = srv.requests[1].body
    assert body["tools"][0]["function"]["name"] == "get_order"
    assert body["messages"][2:] == [
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_order", "arguments": {"order_id": "A1"}}}]},
        {"role": "tool", "content": '{"status":"ok"}', "tool_name": "get_order"},
    ]


def test_ollama_errors_retry_then_raise() -> None:
    not_found = ErrorReply(404, 'model "nope" not found, try pulling it first', "x")
    with OllamaLoopback([ErrorReply(503, "busy", "x"), TextReply("ok"), not_found]) as srv:
        assert complete(f"ollama:m@{srv.base_url}", {}, HELLO).retries == 1
        with pytest.raises(BackendError, match=r"HTTP 404 .*check the model name.*pulling"):
            complete(f"ollama:nope@{srv.base_url}", {}, HELLO)


# --------------------------------------------------------------------------- Python callable


def echo_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """A sync agent: echoes the last message and the tool names."""
    return f"{messages[-1]['content']} | {','.join(t['function']['name'] for t in tools)}"


async def tool_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """An async agent that calls the first tool (without an id)."""
    await asyncio.sleep(0)
    return {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": tools[0]["function"]["name"],
                                          "arguments": {"order_id": "A1"}}}]}


def bad_shape_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """Returns whatever the last user message names."""
    return {"int": 42, "user": {"role": "user", "content": "hi"},
            "calls": {"tool_calls": [{"function": {"arguments": "{}"}}]},
            "empty": {"role": "assistant"}}[messages[-1]["content"]]


def failing_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """Always raises."""
    raise RuntimeError("model crashed")


NOT_CALLABLE = 3
HERE = "tests.generator.test_backends"


def test_python_callable_sync_and_async() -> None:
    reply = complete(f"python:{HERE}:echo_agent", {}, ASK)
    assert reply.message.content == "Where is order A1? | get_order"
    assert reply.usage_estimated and reply.cost_usd == 0 and reply.finish_reason == "stop"
    reply = complete(f"python:{HERE}:tool_agent", {}, ASK)
    assert reply.message.tool_calls == (ToolCall("call_1", "get_order", '{"order_id":"A1"}'),)
    assert reply.finish_reason == "tool_calls" and reply.model == f"{HERE}:tool_agent"


@pytest.mark.parametrize(("ask", "match"), [
    ("int", "returned a int"), ("user", "role 'user'"),
    ("calls", r"tool_calls\[0\]\.function\.name"), ("empty", "neither content nor tool_calls"),
])
def test_python_callable_bad_return_shape(ask: str, match: str) -> None:
    request = ModelRequest(messages=(Message("user", ask),))
    with pytest.raises(BackendProtocolError, match=match):
        complete(f"python:{HERE}:bad_shape_agent", {}, request)


def test_python_callable_errors() -> None:
    with pytest.raises(BackendError, match="RuntimeError: model crashed"):
        complete(f"python:{HERE}:failing_agent", {}, HELLO)
    for target, match in [("no_such_pkg.mod:f", "no module named 'no_such_pkg.mod'"),
                          (f"{HERE}:missing", "has no attribute 'missing'"),
                          (f"{HERE}:NOT_CALLABLE", "is a int, not a callable"),
                          (HERE, "write python:pkg.module:function")]:
        with pytest.raises(SpecError, match=match):
            build_backend(f"python:{target}", role="agent", credentials={})


# --------------------------------------------------------------------------- specs and keys


def test_parse_spec() -> None:
    assert parse_spec("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini", None)
    assert parse_spec("vllm:llama3@http://127.0.0.1:8000/v1") == (
        "vllm", "llama3", "http://127.0.0.1:8000/v1")
    assert parse_spec("ollama:llama3.1:8b") == ("ollama", "llama3.1:8b", None)
    assert parse_spec("python:pkg.mod:fn") == ("python", "pkg.mod:fn", None)
    assert parse_spec("offline") == ("offline", "", None)
    assert parse_spec("offline:0.3") == ("offline", "0.3", None)
    for bad, match in [("gemini:pro", "known providers: openai, vllm, fireworks, anthropic"),
                       ("vllm:llama3", "needs the server's URL"), ("openai:", "names no model"),
                       ("openai:m@ftp://x", "use http:// or https://"),
                       ("python:a:b@http://x", "takes no @URL")]:
        with pytest.raises(SpecError, match=match):
            parse_spec(bad)


@given(st.sampled_from(["openai", "vllm", "anthropic", "ollama", "fireworks"]),
       st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,30}", fullmatch=True),
       st.sampled_from(["http://127.0.0.1:8000/v1", "https://gw.example/x@y"]))
def test_parse_spec_round_trips(provider: str, model: str, url: str) -> None:
    assert parse_spec(f"{provider}:{model}@{url}") == (provider, model, url)


@pytest.mark.parametrize(("spec", "variable"), [
    ("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY"),
    ("fireworks:accounts/fireworks/models/x", "FIREWORKS_API_KEY"),
])
def test_missing_key_names_the_variable(spec: str, variable: str) -> None:
    with pytest.raises(MissingKeyError, match=variable) as caught:
        build_backend(spec, role="agent", credentials={variable: "  "})
    assert caught.value.variable == variable


def test_require_prices_and_bad_base_urls() -> None:
    options = BackendOptions(require_prices=True)
    creds = {"OPENAI_API_KEY": KEY}
    with pytest.raises(BudgetError, match="no price for model 'my-finetune'"):
        build_backend("openai:my-finetune", role="agent", credentials=creds, options=options)
    backend = build_backend("openai:gpt-4o-2024-08-06", role="agent", credentials=creds,
                            options=options)
    asyncio.run(backend.aclose())
    with pytest.raises(SpecError, match="OPENAI_BASE_URL 'localhost:1' is not an http"):
        build_backend("openai:x", role="agent", credentials={**creds,
                                                             "OPENAI_BASE_URL": "localhost:1"})
    assert ollama_base_url("0.0.0.0") == "http://0.0.0.0:11434"
    assert ollama_base_url("https://ollama.example") == "https://ollama.example:443"


def test_offline_spec_routing() -> None:
    with pytest.raises(SpecError, match="mistake rate must be a number from 0 to 1"):
        build_backend("offline:1.5", role="agent", credentials={})
    pytest.importorskip("generator.offline_agent")
    agent = build_backend("offline:0.3", role="agent", credentials={})
    assert agent.spec == "offline:0.3" and isinstance(agent, ChatBackend)


# --------------------------------------------------------------------------- retry policy


def test_retry_after_headers() -> None:
    assert retry_after_s(httpx.Headers({"retry-after": "2"})) == 2.0
    assert retry_after_s(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after_s(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0
    assert retry_after_s(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_s(httpx.Headers()) is None


@given(st.integers(0, 40), st.floats(0, 5), st.floats(0, 30), st.none() | st.floats(0, 100),
       st.randoms(use_true_random=False))
def test_backoff_stays_within_bounds(
    retry: int, base: float, cap: float, after: float | None, rng: Any
) -> None:
    options = BackendOptions(backoff_base_s=base, backoff_max_s=cap)
    delay = backoff_delay(retry, options, after, rng)
    assert 0 <= delay <= cap
    if after is not None:
        assert delay == min(after, cap)
    else:
        assert delay >= min(cap, base * 2.0**retry) / 2


# --------------------------------------------------------------------------- encoders


def _conversations() -> st.SearchStrategy[tuple[Message, ...]]:
    text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
    args = st.one_of(st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=2)
                     .map(json.dumps), st.just("{not json"), st.just(""))

    @st.composite
    def turn(draw: st.DrawFn, n: int) -> list[Message]:
        kind = draw(st.sampled_from(["user", "text", "tools"]))
        if kind == "user":
            return [Message("user", draw(text))]
        if kind == "text":
            return [Message("assistant", draw(text))]
        count = draw(st.integers(1, 3))
        calls = tuple(ToolCall(f"call_{n}_{i}", "get_order", draw(args)) for i in range(count))
        results = [Message("tool", draw(text), tool_call_id=c.id, name=c.name) for c in calls]
        return [Message("assistant", draw(st.none() | text), tool_calls=calls), *results]

    @st.composite
    def conversation(draw: st.DrawFn) -> tuple[Message, ...]:
        messages = [Message("system", draw(text)), Message("user", "hello")]
        for n in range(draw(st.integers(0, 6))):
            messages += draw(turn(n))
        return tuple(messages)

    return conversation()


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(_conversations())
def test_encoded_conversations_are_what_the_apis_accept(messages: Sequence[Message]) -> None:
    request = ModelRequest(messages=tuple(messages), tools=(ORDER_TOOL,))
    body = encode_messages_request("claude-haiku-4-5", request)
    assert invalid_messages_request(body) is None
    sent = [b.get("text") or b.get("content") for m in body["messages"] for b in m["content"]
            if b["type"] in ("text", "tool_result")]
    kept = [m.content for m in messages[1:] if m.role == "tool" or (m.content or "").strip()]
    assert sorted(map(str, sent)) == sorted(map(str, kept))
    assert invalid_chat_request(encode_ollama("llama3", request)) is None


# --------------------------------------------------------------------------- prices


def test_price_table_lookup_and_load(tmp_path: Path) -> None:
    table = PriceTable.default()
    assert table.has("gpt-4o-mini-2024-07-18") and table.has("claude-3-5-haiku-20241022")
    assert not table.has("my-model")
    assert base_model_name("gpt-4o-mini-2024-07-18") == "gpt-4o-mini"
    usage = TokenUsage(2_000_000, 1_000_000)
    assert table.cost("gpt-4o-mini", usage) == pytest.approx(2 * 0.15 + 0.60)
    with pytest.raises(BudgetError, match="no price for model 'my-model'"):
        table.cost("my-model", usage)
    toml = tmp_path / "prices.toml"
    toml.write_text('["my-model"]\ninput = 1\noutput = 3.5\n["gpt-4o-mini-2024-07-18"]\n'
                    "input = 0\noutput = 0\n")
    loaded = PriceTable.load(toml)
    assert loaded.cost("my-model", usage) == pytest.approx(2 + 3.5)
    assert loaded.cost("gpt-4o-mini-2024-07-18", usage) == 0  # exact entry beats the base
    assert loaded.cost("gpt-4o-mini", usage) > 0  # defaults kept
    json_file = tmp_path / "prices.json"
    json_file.write_text(json.dumps({"m": {"input": 2, "output": 2}}))
    assert PriceTable.load(json_file, base=PriceTable.empty()).prices == {"m": ModelPrice(2, 2)}


@pytest.mark.parametrize(("name", "content", "match"), [
    ("p.json", '{"m": {"input": 1}}', r"p\.json, model 'm': missing 'output'"),
    ("p.json", '{"m": {"input": -1, "output": 1}}', r"model 'm', key 'input': .*>= 0"),
    ("p.json", '{"m": {"input": "1", "output": 1}}', r"key 'input': expected a number"),
    ("p.json", '{"m": {"input": 1, "output": 1, "cached": 0.1}}', r"unknown key\(s\) 'cached'"),
    ("p.json", '{"m": 3}', r"model 'm': expected \{input = X, output = Y\}"),
    ("p.json", "[1, 2]", r"expected a table of models"),
    ("p.toml", "[m\ninput = 1", r"p\.toml is not valid TOML"),
    ("p.yaml", "m: {}", r"unknown format '\.yaml'"),
    ("missing.json", None, r"cannot read prices file .*missing\.json"),
])
def test_bad_price_files_name_the_file_and_key(
    tmp_path: Path, name: str, content: str | None, match: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(BudgetError, match=match):
        PriceTable.load(path)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9./-]{0,20}", fullmatch=True),
                       st.tuples(st.floats(0, 1000), st.floats(0, 1000)), max_size=5),
       st.integers(0, 10**7), st.integers(0, 10**7))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_price_files_round_trip(
    tmp_path: Path, prices: dict[str, tuple[float, float]], inputs: int, outputs: int
) -> None:
    path = tmp_path / "round.json"
    path.write_text(json.dumps({m: {"input": i, "output": o} for m, (i, o) in prices.items()}))
    table = PriceTable.load(path, base=PriceTable.empty())
    for model, (i, o) in prices.items():
        assert table.cost(model, TokenUsage(inputs, outputs)) == pytest.approx(
            (inputs * i + outputs * o) / 1e6)
