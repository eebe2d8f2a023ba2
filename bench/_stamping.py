"""Fresh requests from the load generator's pre-built bodies: new ids, current times.

A template body (``_spans.py``) is serialized once, cut at the first 4 bytes of every id.
:class:`Stamper` keeps one mutable copy of it and, for each request, writes the request
number into every id slot (so every span of a run is unique) and moves every span and
event time by the same amount, so that the body's latest time is the moment the request
is sent: each request carries the spans of the last minute or so, ending as it is
exported, as a batching exporter sends them, with the template's durations and gaps.
Times are ``fixed64`` fields (eight bytes at a fixed place), ids keep their length, so
both are two vectorised numpy writes (~22 KiB) into the copy, which is then copied once
into the ``bytes`` gRPC sends: the same one copy a ``bytes.join`` of the pieces made.
"""

from __future__ import annotations

import numpy as np
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

# fixed64 field keys (field number << 3 | wire type 1) of the times in a request
_SPAN_START = bytes((7 << 3 | 1,))
_SPAN_END = bytes((8 << 3 | 1,))
_EVENT_TIME = bytes((1 << 3 | 1,))
_ID_PREFIX = 4
"""Bytes of each id the request number replaces (``_spans.py`` cuts the body there)."""


class Stamper:
    """One template body and where its ids and times are."""

    def __init__(self, segments: list[bytes]) -> None:
        """``segments``: a serialized ``ExportTraceServiceRequest`` cut at the first
        ``_ID_PREFIX`` bytes of every id (``_spans.build_templates``)."""
        self._body = bytearray(bytes(_ID_PREFIX).join(segments))
        ends = np.cumsum([len(segment) + _ID_PREFIX for segment in segments[:-1]])
        self._ids = (ends[:, None] - _ID_PREFIX + np.arange(_ID_PREFIX)).astype(np.intp)
        """Byte offsets of the id prefixes, one row an id."""
        offsets, values = _time_fields(bytes(self._body))
        self._times = np.array(values, dtype=np.uint64)
        """The template's times, in the order of ``_time_bytes``."""
        self._latest = int(self._times.max()) if values else 0
        self._time_bytes = (np.array(offsets, dtype=np.intp)[:, None]
                            + np.arange(8, dtype=np.intp)).ravel()
        """Byte offsets of each time's eight bytes, time after time."""
        self._view = np.frombuffer(self._body, dtype=np.uint8)

    @property
    def ids(self) -> int:
        """Id slots in the body."""
        return len(self._ids)

    @property
    def times(self) -> int:
        """Time fields in the body."""
        return len(self._times)

    def request(self, number: int, now_unix_nano: int) -> bytes:
        """The body with ``number`` (4 bytes, big-endian) at the start of every id and its
        latest time at ``now_unix_nano``."""
        self._view[self._ids] = np.frombuffer(number.to_bytes(_ID_PREFIX, "big"), np.uint8)
        delta = now_unix_nano - self._latest  # < 0 just after building: ends ran ahead
        shifted = (self._times + np.uint64(delta) if delta >= 0
                   else self._times - np.uint64(-delta))
        self._view[self._time_bytes] = shifted.astype("<u8").view(np.uint8)
        return bytes(self._body)


def _time_fields(body: bytes) -> tuple[list[int], list[int]]:
    """(byte offsets, values) of every span start, span end and event time in ``body``."""
    wanted: dict[bytes, int] = {}  # key + value bytes -> how many fields hold it
    for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                times = [(_SPAN_START, span.start_time_unix_nano),
                         (_SPAN_END, span.end_time_unix_nano)]
                times += [(_EVENT_TIME, event.time_unix_nano) for event in span.events]
                for key, value in times:
                    field = key + value.to_bytes(8, "little")
                    wanted[field] = wanted.get(field, 0) + 1
    offsets: list[int] = []
    values: list[int] = []
    for field, count in wanted.items():
        found = 0
        position = body.find(field)
        while position != -1:
            offsets.append(position + 1)
            values.append(int.from_bytes(field[1:], "little"))
            found += 1
            position = body.find(field, position + 1)
        if found != count:
            raise RuntimeError(f"a time field occurs {found} times in the template, expected "
                               f"{count}: its bytes collide with other content")
    return offsets, values
