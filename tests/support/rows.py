"""Read the collector's store back into the processor's row records.

``query`` is the ``query(sql, *params)`` of the ``collector_server`` fixture (or any
callable with that shape over a store). The JSON columns come back decoded, as the
processor's readers expect them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from processor.records import LogRow, SpanRow

__all__ = ["Query", "load_log_rows", "load_span_rows"]

Query = Callable[..., list[tuple[Any, ...]]]
"""``query(sql, *params) -> rows``."""

_SPANS = """
SELECT trace_id, span_id, parent_span_id, name, operation,
       start_time_unix_nano, end_time_unix_nano, status_code, status_message, error_type,
       attributes, events
FROM spans
WHERE ? IS NULL OR service_name = ?
ORDER BY start_time_unix_nano, span_id
"""

# A record without a timestamp of its own is placed when it was observed (as the log data
# model says consumers should).
_LOGS = """
SELECT trace_id, span_id,
       CASE WHEN time_unix_nano = 0 THEN observed_time_unix_nano ELSE time_unix_nano END AS t,
       event_name, body, attributes
FROM log_records
WHERE ? IS NULL OR service_name = ?
ORDER BY t, observed_time_unix_nano
"""


def load_span_rows(query: Query, *, service_name: str | None = None) -> list[SpanRow]:
    """Every stored span (of ``service_name``, when given), oldest first."""
    return [
        SpanRow(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent_span_id,
            name=name,
            operation=operation,
            start_unix_nano=start,
            end_unix_nano=end,
            status_code=status_code,
            status_message=status_message,
            error_type=error_type,
            attributes=json.loads(attributes),
            events=tuple(json.loads(events)),
        )
        for (
            trace_id,
            span_id,
            parent_span_id,
            name,
            operation,
            start,
            end,
            status_code,
            status_message,
            error_type,
            attributes,
            events,
        ) in query(_SPANS, service_name, service_name)
    ]


def load_log_rows(query: Query, *, service_name: str | None = None) -> list[LogRow]:
    """Every stored log record (of ``service_name``, when given), in time order."""
    return [
        LogRow(
            trace_id=trace_id,
            span_id=span_id,
            time_unix_nano=time_unix_nano,
            event_name=event_name,
            body=None if body is None else json.loads(body),
            attributes=json.loads(attributes),
        )
        for trace_id, span_id, time_unix_nano, event_name, body, attributes in query(
            _LOGS, service_name, service_name
        )
    ]
