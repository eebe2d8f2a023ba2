"""Records that carry messages: span events and log records of the GenAI conventions.

The event names (:data:`DETAILS`, :data:`CHOICE`, :data:`MESSAGE_EVENTS`) and how a span
event's or a log record's body reads as a message body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from processor._json import json_value, untag
from processor.records import Role

__all__ = [
    "CHOICE",
    "DETAILS",
    "MESSAGE_EVENTS",
    "event_attributes",
    "event_record",
    "log_payload",
]

DETAILS = "gen_ai.client.inference.operation.details"
"""The event name of a model call's (or tool's) messages as one record."""
CHOICE = "gen_ai.choice"
"""The legacy per-choice record."""
MESSAGE_EVENTS: Mapping[str, Role] = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
"""The legacy per-message records and the role each one's message has."""


def event_attributes(event: Mapping[str, object]) -> Mapping[str, object]:
    attributes = event.get("attributes")
    return untag(attributes) if isinstance(attributes, Mapping) else {}


def event_record(event: Mapping[str, object]) -> tuple[str | None, Mapping[str, Any]]:
    """A span event as (name, body): its attributes, or the JSON ``body`` /
    ``event.body`` attribute some bridges put the record's body in."""
    name = event.get("name")
    attributes = event_attributes(event)
    for key in ("body", "event.body"):
        body = json_value(attributes.get(key))
        if isinstance(body, Mapping):
            return (name if isinstance(name, str) else None), body
    return (name if isinstance(name, str) else None), attributes


def log_payload(body: object) -> Mapping[str, Any]:
    """A log record's body as a message body: an object as it is, anything else as its
    content; no body is a record whose content was not captured."""
    body = untag(body)
    if body is None:
        return {}
    if isinstance(body, Mapping):
        return body
    return {"content": body}
