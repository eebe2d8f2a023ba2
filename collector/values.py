"""OTLP attribute values to JSON and back, keeping every OTLP type.

Strings, int64s, booleans, arrays and key-value lists map to their natural JSON forms and
doubles are written so that they read back as doubles (``1.0``, never ``1``). What JSON
cannot hold is tagged (see ``collector/sql/migrations/001_otlp.sql``)::

    bytes                        {"bytesValue": "<base64>"}
    NaN, +inf, -inf              {"doubleValue": "NaN" | "Infinity" | "-Infinity"}
    kvlist with repeated keys,   {"kvlistValue": [[key, value], ...]}
    or one that reads as a tag
    empty AnyValue               null
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

_TAGS = frozenset({"bytesValue", "doubleValue", "kvlistValue"})
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def value_to_json(value: AnyValue) -> Any:
    """One AnyValue as a JSON-ready Python value."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        number = value.double_value
        if math.isfinite(number):
            return number
        if math.isnan(number):
            return {"doubleValue": "NaN"}
        return {"doubleValue": "Infinity" if number > 0 else "-Infinity"}
    if kind == "bool_value":
        return value.bool_value
    if kind == "array_value":
        return [value_to_json(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return _kvlist_to_json(value.kvlist_value.values)
    if kind == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode("ascii")}
    return None


def attributes_to_json(attributes: Iterable[KeyValue]) -> dict[str, Any]:
    """An attribute list as a JSON object; a repeated key keeps its last value."""
    result = {}
    for kv in attributes:
        value = kv.value
        # strings are most attributes: read them without the general dispatch
        result[kv.key] = (value.string_value if value.WhichOneof("value") == "string_value"
                          else value_to_json(value))
    return result


def _kvlist_to_json(pairs: Iterable[KeyValue]) -> Any:
    items = [(kv.key, value_to_json(kv.value)) for kv in pairs]
    keys = {key for key, _ in items}
    if len(keys) != len(items) or (len(items) == 1 and items[0][0] in _TAGS):
        return {"kvlistValue": [[key, value] for key, value in items]}
    return dict(items)


def value_from_json(data: Any) -> AnyValue:
    """The AnyValue that :func:`value_to_json` turned into ``data``."""
    value = AnyValue()
    _fill(value, data)
    return value


def attributes_from_json(data: dict[str, Any]) -> list[KeyValue]:
    """The attribute list that :func:`attributes_to_json` turned into ``data``."""
    return [KeyValue(key=key, value=value_from_json(item)) for key, item in data.items()]


def _fill(value: AnyValue, data: Any) -> None:
    if data is None:
        value.SetInParent()  # an empty value is still a value of its key-value pair
        return
    if isinstance(data, bool):
        value.bool_value = data
    elif isinstance(data, int):
        value.int_value = data
    elif isinstance(data, float):
        value.double_value = data
    elif isinstance(data, str):
        value.string_value = data
    elif isinstance(data, list):
        array = value.array_value
        array.SetInParent()
        for item in data:
            _fill(array.values.add(), item)
    elif isinstance(data, dict):
        if len(data) == 1:
            (tag, inner), = data.items()
            if tag == "bytesValue":
                value.bytes_value = base64.b64decode(inner)
                return
            if tag == "doubleValue":
                value.double_value = _NON_FINITE[inner]
                return
            if tag == "kvlistValue":
                kvlist = value.kvlist_value
                kvlist.SetInParent()
                for key, item in inner:
                    _fill(kvlist.values.add(key=key).value, item)
                return
        kvlist = value.kvlist_value
        kvlist.SetInParent()
        for key, item in data.items():
            _fill(kvlist.values.add(key=key).value, item)
    else:
        raise TypeError(f"not a JSON value: {type(data).__name__}")
