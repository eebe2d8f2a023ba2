"""A conversation's ordered exchange as OpenAI chat messages (``conversations.messages``).

The assembler (:mod:`processor.assemble`) walks the model calls in time order and keeps
each message once, however often later calls resend the history; this module writes that
transcript in the form exports and ``tracemill conversations show`` use::

    {"role": "system", "content": "..."}
    {"role": "user", "content": "..."}
    {"role": "assistant", "content": null,
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "get_order", "arguments": "{\\"id\\":\\"A1\\"}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "name": "get_order", "content": "{...}"}
    {"role": "assistant", "content": "Your order ..."}

* ``arguments`` is the JSON text as the model sent it; ``content`` of a tool message is the
  result as text (JSON text when structured).
* Content that was not captured is ``null``, never an empty string standing in for it.
* System instructions recorded apart from the messages (``gen_ai.system_instructions``)
  become the leading system message when the transcript has none.
* A tool call whose result never went back to a model (the run ended, or the framework
  does not resend results) gets a tool message from the tool span that ran it, right after
  the calling assistant message and the results sent back for it.
* Tool runs that no transcript shows (content capture off on model calls) are not
  invented into the exchange: they stay in ``steps``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from processor.records import Message, SpanContent, Step

__all__ = ["chat_messages", "chat_messages_json"]


def _call(call_id: str | None, name: str, arguments: str | None) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def chat_messages(transcript: Sequence[Message], steps: Sequence[Step],
                  contents: Iterable[SpanContent] = ()) -> list[dict[str, Any]]:
    """The transcript as OpenAI chat messages, in order (see the module docstring).

    ``steps`` are the conversation's steps as :mod:`processor.assemble` made them from this
    transcript (one per tool call, in order, then tool runs no transcript showed);
    ``contents`` what each span said, for system instructions given apart.
    """
    out: list[dict[str, Any]] = []
    if not transcript or transcript[0].role != "system":
        system = next((content.system_instructions for content in contents
                       if content.kind in ("model", "agent") and content.system_instructions),
                      None)
        if system is not None:
            out.append({"role": "system", "content": system})
    names: dict[str, str] = {}
    answered = {message.tool_call_id for message in transcript
                if message.role == "tool" and message.tool_call_id is not None}
    unkeyed = sum(1 for message in transcript
                  if message.role == "tool" and message.tool_call_id is None)
    pending: list[dict[str, Any]] = []  # results of the last calls that no model was sent
    step_index = 0
    for message in transcript:
        role = message.role
        if role != "tool" and pending:
            out.extend(pending)
            pending = []
        if role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                calls = []
                for call in message.tool_calls:
                    calls.append(_call(call.call_id, call.name, call.arguments))
                    if call.call_id is not None:
                        names[call.call_id] = call.name
                    step = steps[step_index] if step_index < len(steps) else None
                    step_index += 1
                    if call.call_id is not None and call.call_id in answered:
                        continue
                    if call.call_id is None and unkeyed:
                        unkeyed -= 1
                        continue
                    if step is not None and step.span_id is not None and (
                            step.result is not None or step.status == "error"):
                        pending.append({"role": "tool", "tool_call_id": call.call_id,
                                        "name": call.name, "content": step.result})
                entry["tool_calls"] = calls
            out.append(entry)
        elif role == "tool":
            call_id = message.tool_call_id
            out.append({"role": "tool", "tool_call_id": call_id,
                        "name": names.get(call_id) if call_id is not None else None,
                        "content": message.text})
        else:
            out.append({"role": role, "content": message.text})
    out.extend(pending)
    return out


def chat_messages_json(transcript: Sequence[Message], steps: Sequence[Step],
                       contents: Iterable[SpanContent] = ()) -> str:
    """:func:`chat_messages` as JSON text (the ``conversations.messages`` column)."""
    return orjson.dumps(chat_messages(transcript, steps, contents)).decode()
