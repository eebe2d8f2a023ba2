"""Flattened, indexed attributes back into nested values: OpenInference and OpenLLMetry.

Some instrumentations cannot put a list of messages into one attribute and spread it over
many keys instead, one per leaf, with list positions as path segments::

    llm.input_messages.2.message.tool_calls.0.tool_call.function.name = "get_weather"
    gen_ai.completion.0.tool_calls.0.arguments = '{"city":"Oslo"}'

The functions here rebuild the messages such keys describe as plain dictionaries in the
OpenAI Chat Completions wire shape (``role``, ``content``, ``tool_calls`` with ``id`` and
``function: {name, arguments}``, ``tool_call_id``, ``finish_reason``), which
:mod:`processor.dialects` reads like any other wire-format message. They only restore
structure: nothing is normalised here (roles, finish reasons and redaction markers are the
reader's business).

========================================  ===============================================
OpenInference (``openinference.*``)       OpenLLMetry before the GenAI JSON attributes
========================================  ===============================================
``llm.input_messages.N.message.*``        ``gen_ai.prompt.N.*``
``llm.output_messages.N.message.*``       ``gen_ai.completion.N.*``
``message.contents.K.message_content.*``  ``content`` (a JSON list of content blocks)
``message.tool_calls.K.tool_call.*``      ``tool_calls.K.{id,name,arguments}``
``llm.tools.N.tool.json_schema``          ``llm.request.functions.N.{name,description,
                                          parameters}``
========================================  ===============================================
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "nest",
    "openinference_messages",
    "openinference_tool_definitions",
    "openllmetry_messages",
    "openllmetry_tool_definitions",
]


def nest(attributes: Mapping[str, object], prefix: str) -> list[Any]:
    """The list that the keys under ``prefix`` (``prefix.N.path.to.leaf``) flatten.

    Numeric path segments become list positions (in index order, gaps closed), the others
    dictionary keys. A key that is both a leaf and the parent of other keys keeps the
    parent. Returns ``[]`` when no key starts with ``prefix.``.
    """
    start = prefix + "."
    keys = [key for key in attributes if key.startswith(start)]
    if not keys:
        return []
    tree: dict[str, Any] = {}
    for key in keys:
        value = attributes[key]
        *path, leaf = key[len(start) :].split(".")
        node = tree
        for segment in path:
            child = node.get(segment)
            if not isinstance(child, dict):
                child = node[segment] = {}
            node = child
        if not isinstance(node.get(leaf), dict):
            node[leaf] = value
    items = _listify(tree)
    return items if isinstance(items, list) else []


def _listify(node: Any) -> Any:
    """Dictionaries whose keys are all numbers become lists, recursively."""
    if not isinstance(node, dict):
        return node
    if node and all(key.isdigit() for key in node):
        return [_listify(node[key]) for key in sorted(node, key=int)]
    return {key: _listify(value) for key, value in node.items()}


# --------------------------------------------------------------------------- OpenInference


def openinference_messages(attributes: Mapping[str, object], key: str) -> list[dict[str, Any]]:
    """``llm.input_messages`` or ``llm.output_messages`` as wire-format messages."""
    messages = []
    for item in nest(attributes, key):
        message = item.get("message") if isinstance(item, dict) else None
        if isinstance(message, dict):
            messages.append(_openinference_message(message))
    return messages


def _openinference_message(message: dict[str, Any]) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.get("role")}
    if "content" in message:
        wire["content"] = message["content"]
    elif "contents" in message:
        wire["content"] = [
            _openinference_content(item.get("message_content"))
            for item in _as_list(message["contents"])
            if isinstance(item, dict)
        ]
    calls = [
        item["tool_call"]
        for item in _as_list(message.get("tool_calls"))
        if isinstance(item, dict) and isinstance(item.get("tool_call"), dict)
    ]
    if "function_call_name" in message:  # the pre-tools function calling API
        function = {"name": message["function_call_name"]}
        if "function_call_arguments_json" in message:
            function["arguments"] = message["function_call_arguments_json"]
        calls.append({"function": function})
    if calls:
        wire["tool_calls"] = calls
    if "tool_call_id" in message:
        wire["tool_call_id"] = message["tool_call_id"]
    return wire


def _openinference_content(content: Any) -> dict[str, Any]:
    """``message_content.{type,text}`` as a content block (``{"type", "text"}``)."""
    if not isinstance(content, dict):
        return {}
    block = {"type": content.get("type", "text")}
    if "text" in content:
        block["text"] = content["text"]
    return block


def openinference_tool_definitions(attributes: Mapping[str, object]) -> tuple[str, ...]:
    """``llm.tools.N.tool.json_schema``: each definition as the JSON text recorded."""
    definitions = []
    for item in nest(attributes, "llm.tools"):
        tool = item.get("tool") if isinstance(item, dict) else None
        schema = tool.get("json_schema") if isinstance(tool, dict) else None
        if isinstance(schema, str):
            definitions.append(schema)
        elif schema is not None:
            definitions.append(json.dumps(schema, separators=(",", ":"), ensure_ascii=False))
    return tuple(definitions)


# --------------------------------------------------------------------------- OpenLLMetry


def openllmetry_messages(attributes: Mapping[str, object], key: str) -> list[dict[str, Any]]:
    """``gen_ai.prompt`` or ``gen_ai.completion`` (OpenLLMetry's indexed attributes, used
    before it wrote ``gen_ai.input.messages``) as wire-format messages."""
    messages = []
    for item in nest(attributes, key):
        if not isinstance(item, dict):
            continue
        wire = {
            k: item[k] for k in ("role", "content", "tool_call_id", "finish_reason") if k in item
        }
        calls = [_openllmetry_call(call) for call in _as_list(item.get("tool_calls"))]
        function_call = item.get("function_call")
        if isinstance(function_call, dict):
            calls.append(_openllmetry_call(function_call))
        if calls:
            wire["tool_calls"] = calls
        messages.append(wire)
    return messages


def _openllmetry_call(call: Any) -> dict[str, Any]:
    if not isinstance(call, dict):
        return {}
    function = {k: call[k] for k in ("name", "arguments") if k in call}
    wire: dict[str, Any] = {"function": function}
    if "id" in call:
        wire["id"] = call["id"]
    return wire


def openllmetry_tool_definitions(attributes: Mapping[str, object]) -> tuple[str, ...]:
    """``llm.request.functions.N.{name,description,parameters}``, each as JSON text."""
    definitions = []
    for item in nest(attributes, "llm.request.functions"):
        if not isinstance(item, dict) or "name" not in item:
            continue
        definition = dict(item)
        parameters = definition.get("parameters")
        if isinstance(parameters, str):
            with contextlib.suppress(ValueError):  # else kept as the text recorded
                definition["parameters"] = json.loads(parameters)
        definitions.append(json.dumps(definition, separators=(",", ":"), ensure_ascii=False))
    return tuple(definitions)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
