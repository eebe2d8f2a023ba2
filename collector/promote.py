"""The promoted columns: GenAI fields read out of attributes into columns of their own.

Pure functions, used by the pure-Python decoder (:mod:`collector.decode`); the compiled
decoder is given :data:`PROMOTED_SOURCES` and :func:`invocation_model` and applies the
same rules. Promoted columns (first attribute present wins; span attributes before resource ones):

=================  ===========================================================================
column             sources
=================  ===========================================================================
service_name       resource ``service.name``
service_version    resource ``service.version``
operation          ``gen_ai.operation.name``; ``openinference.span.kind`` (lower case);
                   ``traceloop.span.kind``; ``llm.request.type``
conversation_id    ``gen_ai.conversation.id``, ``session.id``, ``conversation.id``, ``thread.id``
agent_name         ``gen_ai.agent.name``, ``agent.name``, ``agent_name``
agent_version      ``gen_ai.agent.version``
request_model      ``gen_ai.request.model``, ``llm.request.model``, ``model`` inside the
                   JSON of ``llm.invocation_parameters`` (OpenInference)
response_model     ``gen_ai.response.model``, ``llm.response.model``, ``llm.model_name``
                   (OpenInference records the model the response names there)
provider           ``gen_ai.provider.name``, ``gen_ai.system``, ``llm.system``, ``llm.provider``
tool_name          ``gen_ai.tool.name``, ``tool.name``
tool_call_id       ``gen_ai.tool.call.id``, ``tool_call.id``
input_tokens       ``gen_ai.usage.input_tokens``, ``llm.token_count.prompt``,
                   ``gen_ai.usage.prompt_tokens``
output_tokens      ``gen_ai.usage.output_tokens``, ``llm.token_count.completion``,
                   ``gen_ai.usage.completion_tokens``
error_type         ``error.type``; else ``exception.type`` of the first ``exception`` event
=================  ===========================================================================
"""

from __future__ import annotations

from typing import Any

import orjson

PROMOTED_SOURCES: dict[str, tuple[str, ...]] = {
    "operation": ("gen_ai.operation.name", "openinference.span.kind", "traceloop.span.kind",
                  "llm.request.type"),
    "conversation_id": ("gen_ai.conversation.id", "session.id", "conversation.id", "thread.id"),
    "agent_name": ("gen_ai.agent.name", "agent.name", "agent_name"),
    "agent_version": ("gen_ai.agent.version",),
    "request_model": ("gen_ai.request.model", "llm.request.model"),
    "response_model": ("gen_ai.response.model", "llm.response.model", "llm.model_name"),
    "provider": ("gen_ai.provider.name", "gen_ai.system", "llm.system", "llm.provider"),
    "tool_name": ("gen_ai.tool.name", "tool.name"),
    "tool_call_id": ("gen_ai.tool.call.id", "tool_call.id"),
    "input_tokens": ("gen_ai.usage.input_tokens", "llm.token_count.prompt",
                     "gen_ai.usage.prompt_tokens"),
    "output_tokens": ("gen_ai.usage.output_tokens", "llm.token_count.completion",
                      "gen_ai.usage.completion_tokens"),
    "error_type": ("error.type",),
}
"""Each promoted column and the attributes it is read from, best first (schema order)."""
_PROMOTED_NAMES = tuple(PROMOTED_SOURCES)
_PROMOTED: dict[str, tuple[int, int]] = {
    key: (slot, rank)
    for slot, keys in enumerate(PROMOTED_SOURCES.values())
    for rank, key in enumerate(keys)
}
_PROMOTED_KEYS = frozenset(_PROMOTED)
CONVERSATION = _PROMOTED_NAMES.index("conversation_id")
"""The slot of conversation_id in :func:`promote`'s list."""
_INPUT_TOKENS = _PROMOTED_NAMES.index("input_tokens")
_OUTPUT_TOKENS = _PROMOTED_NAMES.index("output_tokens")
_ERROR_TYPE = _PROMOTED_NAMES.index("error_type")
_OPERATION = _PROMOTED_NAMES.index("operation")
_TOKEN_SLOTS = (_INPUT_TOKENS, _OUTPUT_TOKENS)
_REQUEST_MODEL = _PROMOTED_NAMES.index("request_model")


def invocation_model(parameters: Any) -> str | None:
    """The ``model`` in OpenInference's ``llm.invocation_parameters`` JSON, if any."""
    if not isinstance(parameters, str):
        return None
    try:
        decoded = orjson.loads(parameters)
    except orjson.JSONDecodeError:
        return None
    model = decoded.get("model") if isinstance(decoded, dict) else None
    return model if isinstance(model, str) else None


def text(value: Any) -> str | None:
    """An attribute value as a promoted text column (None for maps and arrays)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def integer(value: Any) -> int | None:
    """An attribute value as a promoted BIGINT column (None when it is no integer)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if value.is_integer() else None
    elif isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            return None
    # a count beyond int64 is no count (the column is BIGINT)
    return value if isinstance(value, int) and _INT64_MIN <= value <= _INT64_MAX else None


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def promote(attrs: dict[str, Any]) -> list[Any]:
    """The promoted columns' values found in one attribute map (best source wins)."""
    values: list[Any] = [None] * len(_PROMOTED_NAMES)
    ranks = [len(_PROMOTED)] * len(_PROMOTED_NAMES)
    for key in attrs.keys() & _PROMOTED_KEYS:
        value = attrs[key]
        slot, rank = _PROMOTED[key]
        if value is not None and rank < ranks[slot]:
            values[slot] = value
            ranks[slot] = rank
    return values


def promoted_row(attrs: dict[str, Any], resource: list[Any],
                 error_type: str | None) -> tuple[Any, ...]:
    """A span's promoted columns, in schema order: its attributes, else the resource's
    conversation, else ``error_type`` (the first exception event's type)."""
    values = promote(attrs)
    if values[CONVERSATION] is None:
        values[CONVERSATION] = resource[CONVERSATION]
    if values[_ERROR_TYPE] is None:
        values[_ERROR_TYPE] = error_type
    if values[_REQUEST_MODEL] is None and "llm.invocation_parameters" in attrs:
        values[_REQUEST_MODEL] = invocation_model(attrs["llm.invocation_parameters"])
    for slot, value in enumerate(values):
        if value is None:
            continue
        if slot in _TOKEN_SLOTS:
            values[slot] = integer(value)
        elif type(value) is not str:
            values[slot] = text(value)
    operation = values[_OPERATION]
    if operation is not None:
        values[_OPERATION] = operation.lower()
    return tuple(values)
