"""The records the simulated world keeps and the answers it gives, for one rollout.

Private to :mod:`generator.world`: an :class:`Entity` is a record the world holds (mutable:
it is the world's memory), an :class:`Outcome` one answer before it becomes a
:class:`~generator.records.WorldEvent`.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class Entity:
    """A record the world holds; mutable, because it is the world's memory of a rollout."""

    id: str  # "" until first shown, for the person's entity when facts name no identifier
    key: str | None  # the field that carries the id in results (order_id), None: "id"
    status: str | None  # None: whatever the tool's exemplars say
    created_at: datetime
    updated_at: datetime
    fields: dict[str, Any] = field(default_factory=dict)  # set by create / update calls
    duplicate_of: str | None = None  # "" while the sibling is still to be made
    partial: bool = False
    deleted: bool = False
    kind: str | None = None  # what it is (order, user, line), from its id key
    shown: dict[str, Any] = field(default_factory=dict)  # values shown once, shown again
    owned: bool = True  # the person's (a search result is not)
    mutated: bool = False  # held in the rollout's mutated state


@dataclass(frozen=True)
class Outcome:
    """One answer: the event's status and body, what it did, and whether it is where the
    rollout's mutation took effect."""

    status: str
    payload: Any
    effect: str | None = None
    entity_id: str | None = None
    mutated: bool = False


def refusal(status: str, message: str, **extra: Any) -> Outcome:
    """A refusal: ``{"error": status, "message": ...}``."""
    return Outcome(status, {"error": status, "message": message, **extra})


def rng(*parts: object) -> random.Random:
    """A generator seeded by the parts: the same in every process (CRC-32 of their text and
    its length: seeding from an integer is several times cheaper than from a string)."""
    text = ":".join(map(str, parts)).encode()
    return random.Random(zlib.crc32(text) | len(text) << 32)  # noqa: S311 (simulation)


def spread(*parts: object) -> int:
    """A number from the parts, the same in every process (to draw one value cheaply)."""
    return zlib.crc32(":".join(map(str, parts)).encode())


def stamp(moment: datetime) -> str:
    """A UTC timestamp as the world writes it (``2025-03-14T09:30:00Z``)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def merge(old: Any, new: Any) -> Any:
    """``new`` written over ``old``: objects key by key, a list of objects item by item (an
    exchanged item keeps the fields the call did not name)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return {**old, **{key: merge(old.get(key), value) for key, value in new.items()}}
    if isinstance(old, list) and isinstance(new, list) and old and all(
            isinstance(item, dict) for item in (*old, *new)):
        return [merge(old[min(index, len(old) - 1)], item) for index, item in enumerate(new)]
    return new
