"""The processor's records: what a conversation is made of once read from spans and logs.

Readers of each instrumentation dialect (:mod:`processor.dialects`) produce these; the
assembler (:mod:`processor.assemble`) orders and binds them into a :class:`Conversation`.
Content an instrumentation did not capture is ``None`` (missing), never an empty string
standing in for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["system", "user", "assistant", "tool"]
Channel = Literal["semconv", "openinference", "log", "event", "tool_span", "legacy"]
Binding = Literal["call_id", "name", "order", "span", "none"]
StepStatus = Literal["ok", "error", "missing"]


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model asked for."""

    name: str
    """The tool's name."""
    call_id: str | None
    """The provider's call id, when recorded."""
    arguments: str | None
    """The arguments as JSON text (as sent), or None when not captured."""


@dataclass(frozen=True)
class Message:
    """One message of a model call's input or output."""

    role: Role
    """Who speaks: system, user, assistant, or tool (a tool result sent back)."""
    text: str | None
    """The text content; None when content capture was off or there was none."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls an assistant message asks for."""
    tool_call_id: str | None = None
    """For a tool result: the call it answers."""
    finish_reason: str | None = None
    """For an output message: stop, tool_calls, length, ... normalised to lower case."""


@dataclass(frozen=True)
class SpanContent:
    """What one span (with its events and log records) says about the conversation."""

    span_id: str
    """The span it was read from."""
    kind: Literal["model", "tool", "agent", "other"]
    """Its role: a model call, a tool execution, an agent run, or anything else."""
    channel: Channel | None
    """Where the content came from (None when the span carried no content)."""
    input_messages: tuple[Message, ...] = ()
    """The messages sent to the model (for model calls), in order."""
    output_messages: tuple[Message, ...] = ()
    """The messages the model returned."""
    system_instructions: str | None = None
    """System instructions given apart from the messages, when recorded so."""
    tool_name: str | None = None
    """For tool spans: the tool."""
    tool_call_id: str | None = None
    """For tool spans: the call id."""
    tool_arguments: str | None = None
    """For tool spans: the arguments as JSON text."""
    tool_result: str | None = None
    """For tool spans: the result as text (JSON text when structured)."""
    tool_definitions: tuple[str, ...] = ()
    """Tool definitions offered to the model, each as JSON text."""
    content_captured: bool = True
    """False when the span shows content capture was off (structure without text)."""


@dataclass(frozen=True)
class Step:
    """A tool call bound to its result."""

    tool: str
    """The tool's name."""
    call_id: str | None
    """The call id, when known."""
    arguments: str | None
    """Arguments as JSON text, None when not captured."""
    result: str | None
    """The result as text, None when not captured or never returned."""
    status: StepStatus
    """ok, error (the call failed), or missing (no result was seen)."""
    error: str | None
    """The error type or message when the call failed."""
    bound_by: Binding
    """How the result was matched to the call (``none``: neither a result nor a tool span
    was found for it)."""
    span_id: str | None
    """The tool span, when there was one."""


@dataclass(frozen=True)
class Conversation:
    """The ordered exchange with one person, assembled from one or more traces."""

    conversation_id: str
    """gen_ai.conversation.id / session.id / ..., else the trace id."""
    trace_ids: tuple[str, ...]
    """Source traces, in time order."""
    first_ask: str | None
    """The first user message (None when content was not captured)."""
    user_turns: tuple[str | None, ...]
    """Every user message after the first, in order."""
    assistant_turns: tuple[str | None, ...]
    """Every assistant text reply, in order."""
    steps: tuple[Step, ...]
    """Tool calls with their results, in order."""
    final_reply: str | None
    """The last assistant text."""
    input_tokens: int | None
    """Tokens in, counted once (model-call spans only)."""
    output_tokens: int | None
    """Tokens out, counted once."""
    agent_name: str | None
    """The agent's name, when recorded."""
    model_version: str | None
    """The model version (see processor.versions for the precedence)."""
    model_version_source: str | None
    """Which attribute the model version came from."""
    content_missing: bool = False
    """True when some content was not captured by the instrumentation."""
    errors: tuple[str, ...] = field(default=())
    """Failed model calls and failed agent runs (error types), in order."""
    start_unix_nano: int = 0
    """When it started."""
    end_unix_nano: int = 0
    """When it ended."""


@dataclass(frozen=True)
class SpanRow:
    """A stored span as the processor reads it (a row of the ``spans`` view)."""

    trace_id: str
    """32 hex characters."""
    span_id: str
    """16 hex characters."""
    parent_span_id: str | None
    """None for a root span."""
    name: str
    """The span name (never used to decide its role)."""
    operation: str | None
    """The promoted role: chat, execute_tool, invoke_agent, llm, tool, agent, ..."""
    start_unix_nano: int
    """Start time."""
    end_unix_nano: int
    """End time."""
    status_code: int
    """0 unset, 1 ok, 2 error."""
    status_message: str | None
    """The status description."""
    error_type: str | None
    """The promoted error type."""
    attributes: dict[str, object]
    """Span attributes (JSON values as stored)."""
    events: tuple[dict[str, object], ...]
    """Span events: {time_unix_nano, name, attributes, dropped_attributes_count}."""
    input_tokens: int | None = None
    """Promoted input token count."""
    output_tokens: int | None = None
    """Promoted output token count."""
    agent_name: str | None = None
    """Promoted agent name."""
    agent_version: str | None = None
    """Promoted gen_ai.agent.version."""
    service_version: str | None = None
    """The resource's service.version."""
    request_model: str | None = None
    """Promoted request model."""
    response_model: str | None = None
    """Promoted response model."""
    tool_name: str | None = None
    """Promoted tool name."""
    tool_call_id: str | None = None
    """Promoted tool call id."""


@dataclass(frozen=True)
class LogRow:
    """A stored log record tied to a span (a row of the ``log_records`` view)."""

    trace_id: str | None
    """The span's trace id."""
    span_id: str | None
    """The span it belongs to."""
    time_unix_nano: int
    """When it was emitted."""
    event_name: str | None
    """gen_ai.user.message, gen_ai.choice, gen_ai.client.inference.operation.details, ..."""
    body: object
    """The body as stored (JSON value), None when absent."""
    attributes: dict[str, object]
    """Its attributes."""
