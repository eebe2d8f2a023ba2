"""Reading messages out of spans and records: one import for the dialect readers.

The readers (:mod:`processor.dialects`, :mod:`processor._tool_spans`) import from here;
each job lives in its own module:

* :mod:`processor._message_reader`: message lists and messages in every wire form
  (``parts``, OpenAI, Anthropic and Bedrock blocks) to :class:`~processor.records.Message`
  records, roles and finish reasons normalised, content not captured marked missing;
* :mod:`processor._json`: JSON text decoded and written fast, OTLP key-value lists
  untagged, first-present keys;
* :mod:`processor._events`: the GenAI conventions' event and log-record names and bodies;
* :mod:`processor._constructors`: the records made without their dataclass ``__init__``.
"""

from __future__ import annotations

from processor._constructors import new_message, new_span_content, new_tool_call
from processor._events import (
    CHOICE,
    DETAILS,
    MESSAGE_EVENTS,
    event_attributes,
    event_record,
    log_payload,
)
from processor._json import (
    ABSENT,
    first_str,
    json_in_text,
    json_text,
    json_value,
    looks_like_json,
    untag,
)
from processor._message_reader import (
    REDACTED,
    Content,
    Side,
    merge,
    message_list,
    normalise_finish_reason,
    normalise_role,
    read_message,
    result_text,
    wire_list,
)

__all__ = [
    "ABSENT",
    "CHOICE",
    "DETAILS",
    "MESSAGE_EVENTS",
    "REDACTED",
    "Content",
    "Side",
    "event_attributes",
    "event_record",
    "first_str",
    "json_in_text",
    "json_text",
    "json_value",
    "log_payload",
    "looks_like_json",
    "merge",
    "message_list",
    "new_message",
    "new_span_content",
    "new_tool_call",
    "normalise_finish_reason",
    "normalise_role",
    "read_message",
    "result_text",
    "untag",
    "wire_list",
]
