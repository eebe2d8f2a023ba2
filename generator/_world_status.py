"""Statuses in the simulated world: the production vocabulary and what actions do to it.

Private to :mod:`generator.world`. From the tools' exemplars (:class:`StatusRules`):

- the *vocabulary*: the statuses read tools show, by kind of record (``order``:
  ``pending``, ``delivered``...; ``line``: ``Active``, ``Suspended``);
- an action's *target*, the status it leaves: its own exemplar's (``exchange requested``),
  else the past tense of a verb that changes state (:data:`TRANSITIONS`: cancel →
  ``cancelled``, spelled as the vocabulary spells it), else none (an edit such as
  ``update_address`` leaves the status as it was);
- the status an action *requires*, from its name: a status of the vocabulary it names
  (``cancel_pending_order``: pending; ``exchange_delivered_order_items``: delivered), or
  the one its inverse leaves (``resume``: suspended);
- whether an action is *about* the record's own status (``suspend_line`` is,
  ``enable_roaming`` only changes a setting of the line).

The world refuses an action whose record already has its target status ("already
cancelled") or lacks its required one ("delivered, not pending").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator._world_templates import Template
from generator._world_values import is_id_like, past_tense, tool_kind, tool_verb, words
from generator.scenario import kind_of

TRANSITIONS = frozenset({
    "cancel", "refund", "close", "void", "suspend", "resume", "activate", "deactivate",
    "block", "unblock", "lock", "unlock", "approve", "reject", "confirm", "ship", "return",
    "exchange", "enable", "disable", "pause", "redeem", "reactivate", "restore"})
"""Verbs that move a record from one status to another (doing it twice is refused)."""

_NEEDS = {"resume": "suspend", "unblock": "block", "unlock": "lock", "reactivate":
          "deactivate", "restore": "suspend"}
"""Verbs that undo another: the record must be in the state the other leaves."""

_ACTION_NOUNS = frozenset({"refund", "cancellation", "return", "exchange", "request",
                           "item", "status", "detail", "info", "pending", "delivered",
                           "processed", "shipped", "all", "by", "for", "to"})
"""Words of an action's name that name no setting of the record (``issue_refund``)."""


def status_of(body: Any) -> str | None:
    """The status an exemplar shows: top level, else in the first nested record."""
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("status"), str):
        return str(body["status"])
    for value in body.values():
        if isinstance(value, dict) and isinstance(value.get("status"), str):
            return str(value["status"])
    return None


class StatusRules:
    """The status rules of one set of tools (module docstring)."""

    def __init__(self, templates: Mapping[str, Template | None]) -> None:
        self._templates = templates
        self.vocabulary: dict[str, list[str]] = {}
        """Statuses read tools show, by kind of record ("" when the record names none)."""
        for name, template in templates.items():
            if template is None or tool_kind(name) != "read":
                continue
            for shape in template.variants:
                status = status_of(shape.body)
                key = next((k for k in shape.body if is_id_like(k, None)), "") \
                    if isinstance(shape.body, dict) else ""
                if status and not status.startswith(("already", "partial")):
                    seen = self.vocabulary.setdefault(kind_of(key) or "", [])
                    if status not in seen:
                        seen.append(status)

    def spelled(self, status: str) -> str:
        """``status`` as the production vocabulary writes it (``Suspended``)."""
        return next((s for seen in self.vocabulary.values() for s in seen
                     if s.lower() == status.lower()), status)

    def target(self, tool: str) -> str | None:
        """The status the action leaves (module docstring), None when it changes none."""
        template = self._templates.get(tool)
        normal = template.kinds.get("normal") if template is not None else None
        shown = status_of(normal.body) if normal is not None else None
        if shown and not shown.startswith(("already", "partial")):
            return shown
        if tool_verb(tool) in TRANSITIONS or {"refund", "cancel"} & set(words(tool)) or (
                template is None and tool_kind(tool) == "create"):
            return self.spelled(past_tense(tool))
        return None

    def required(self, tool: str) -> str | None:
        """The status the action needs (module docstring), None when any will do."""
        vocabulary = {s.lower(): s for seen in self.vocabulary.values() for s in seen}
        named = next((vocabulary[w] for w in words(tool) if w in vocabulary), None)
        if named is not None:
            return named
        inverse = _NEEDS.get(tool_verb(tool) or "")
        return self.spelled(past_tense(inverse)) if inverse else None

    def usable(self, kind: str | None, tool: str) -> str | None:
        """A status a record of ``kind`` can have for ``tool`` to act on it: the one the
        tool requires, else the first of the vocabulary that is not its target."""
        needed = self.required(tool)
        if needed:
            return needed
        target = (self.target(tool) or "").lower()
        return next((s for s in self.vocabulary.get(kind or "", ())
                     if s.lower() != target and not s.lower().startswith("already")), None)

    @staticmethod
    def about(tool: str, kind: str | None) -> bool:
        """Whether the action changes a record's own status (module docstring)."""
        verb = tool_verb(tool)
        nouns = {w.rstrip("s") for w in words(tool) if w != verb}
        return kind is None or kind in nouns or not nouns - _ACTION_NOUNS
