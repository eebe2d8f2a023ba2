"""How the generator's commands go through a running ``tracemill serve``.

While the service holds the store, a command's offline handler meets
:class:`~tracemill.errors.StoreLockedError` when it opens it; :func:`through_service`
turns that into a call of the command's remote handler, which asks the service's admin
API (:func:`tracemill.collector_client.ask_api`) and prints what the offline handler
prints. The API answers records in their ``asdict`` form; :func:`dataclass_from_json`
reads them back into the dataclasses the renderers take.
"""

from __future__ import annotations

import argparse
from typing import Any

from tracemill.config import Settings
from tracemill.errors import StoreLockedError

__all__ = ["dataclass_from_json", "through_service"]


def through_service(offline: Any, remote: Any) -> Any:
    """A handler that runs ``offline`` and, when a running service holds the store,
    ``remote(args, settings, locked)`` instead."""
    def handler(args: argparse.Namespace, settings: Settings) -> int:
        try:
            code: int = offline(args, settings)
        except StoreLockedError as locked:
            code = remote(args, settings, locked)
        return code

    return handler


def dataclass_from_json(cls: Any, data: Any) -> Any:
    """A dataclass (with nested dataclasses, lists and dicts of them) from its ``asdict``
    form, as the API answers it."""
    import dataclasses
    import typing

    if dataclasses.is_dataclass(cls) and isinstance(data, dict):
        hints = typing.get_type_hints(cls)
        build: Any = cls
        return build(**{f.name: dataclass_from_json(hints[f.name], data[f.name])
                        for f in dataclasses.fields(cls) if f.name in data})
    origin, params = typing.get_origin(cls), typing.get_args(cls)
    if origin is list and isinstance(data, list):
        return [dataclass_from_json(params[0], item) for item in data]
    if origin is tuple and isinstance(data, list):
        return tuple(dataclass_from_json(params[0], item) for item in data)
    if origin is dict and isinstance(data, dict):
        return {key: dataclass_from_json(params[1], item) for key, item in data.items()}
    return data
