"""Reading a tool result the way a person would: from its span and from its body.

A result on an OK span can still say the call failed (``{"status": "not_found"}``,
``"Error: Order not found"``, ``{"code": 403}``). :func:`read_result` classifies one
result into a tool condition and, when the body says something about the record, a world
state. The processor's axes (:mod:`processor.axes`) and the generator's conduct checks
both read results through it, so "failed" means the same thing in both.

(The full table of what is read and what it maps to is documented below as it grows.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

CONDITIONS: tuple[str, ...] = (
    "success", "timeout", "permission_denied", "not_found", "malformed_result",
    "stale_result", "error", "unknown")
"""Every tool condition :func:`read_result` can give (``unknown``: no result seen)."""


@dataclass(frozen=True)
class ResultReading:
    """What one tool result says."""

    condition: str
    """One of :data:`CONDITIONS`."""
    world_state: str | None
    """What the body says about the record (``missing``, ``already_acted_on``,
    ``duplicate``, ``partially_completed``, ...), None when it says nothing of it."""
    evidence: str | None
    """Where the verdict came from (``span status``, ``body status=not_found``, ...)."""
    has_id: bool = False
    """A successful result that carries an identifier (``id`` / ``*_id`` key)."""

    @property
    def failed(self) -> bool:
        """Whether the call did not do what was asked (any condition but success/unknown)."""
        return self.condition not in ("success", "unknown")


def parse_result(result: str | None) -> tuple[Any, bool]:
    """(parsed JSON or None, malformed?) for a tool result's text."""
    if result is None:
        return None, False
    text = result.strip()
    if not text.startswith(("{", "[")):
        return None, False
    try:
        return orjson.loads(text), False
    except orjson.JSONDecodeError:
        return None, True


def fault_from_text(text: str) -> str | None:
    """The condition an error text names (timeout, permission_denied, not_found), if any."""
    lowered = text.lower().replace("_", "").replace(" ", "")
    if "timeout" in lowered or "timedout" in lowered or "deadline" in lowered:
        return "timeout"
    if "permission" in lowered or "forbidden" in lowered or "unauthorized" in lowered \
            or lowered.startswith("403"):
        return "permission_denied"
    if "notfound" in lowered or lowered.startswith("404"):
        return "not_found"
    return None


def read_result(result: str | None, *, status: str = "ok",
                error: str | None = None) -> ResultReading:
    """Classify one tool result.

    ``status`` is the step's status as the processor records it (``ok``, ``error``,
    ``missing``: no result seen); ``error`` the span's error type or message.
    """
    parsed, malformed = parse_result(result)
    world = _world_from_body(parsed)
    if status == "error":
        condition = fault_from_text(error or "") or "error"
        return ResultReading(condition, world or _world_from_condition(condition),
                             "span status")
    if malformed:
        return ResultReading("malformed_result", None, "body is not valid JSON")
    if isinstance(parsed, dict):
        body_error = parsed.get("error")
        if body_error:
            condition = fault_from_text(str(body_error)) or "error"
            return ResultReading(condition, world or _world_from_condition(condition),
                                 "body error")
        if parsed.get("stale") is True:
            return ResultReading("stale_result", world, "body stale=true")
    if status == "missing":
        return ResultReading("unknown", world, None)
    has_id = isinstance(parsed, dict) and any(
        key == "id" or key.endswith("_id") for key in parsed)
    return ResultReading("success", world, None, has_id)


def _world_from_condition(condition: str) -> str | None:
    return "missing" if condition == "not_found" else None


def _world_from_body(parsed: Any) -> str | None:
    if not isinstance(parsed, dict):
        return None
    state = str(parsed.get("status", "")).lower()
    if state.startswith(("already_", "already ")):
        return "already_acted_on"
    if parsed.get("duplicate") is True:
        return "duplicate"
    if state == "partial":
        return "partially_completed"
    return None
