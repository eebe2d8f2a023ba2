"""The simulated world: answers the agent's tool calls from the tools' own schemas.

A world that never says no teaches an agent that never expects it. So the world checks
every call the way a careful production service would and answers with JSON the agent can
read: ``unknown_tool`` (with the list of tools), ``rejected`` (arguments not JSON, a
missing required argument, a wrong type, a value outside the enum or the format; a
lookup or action with none of its tool's identifier-like arguments and nothing else to
find the record by, such as ``check_inventory({})`` or a search by an enum alone, is
rejected as missing one, never answered with an invented record), ``refused`` (a
placeholder or an echo of the schema, with a hint saying what a real value looks like),
``not_found`` (an identifier, under whatever identifier-like name the tool gives it,
``order_id``, ``booking_ref``, ``pnr``, ``sku``..., that the world does not hold, or holds
as another kind of record: a flight's id is no booking reference) and the scheduled
faults (``timeout``, ``error``, ``malformed_result``, ``stale_result``,
``permission_denied``, ``not_found``; each fires once, on its call number of its tool,
before the arguments are read; ``malformed_result`` and ``stale_result`` spoil the body
of a call that was otherwise processed, so its effect stands).

**The person's entity.** ``facts`` are what the simulated person knows. The first
identifier among them (a key named like an id, see :func:`is_id_like`) names the entity
the rollout is about, and ``world_state`` decides how the world holds it: ``entity_exists``
and ``unknown`` (a normal record), ``missing`` (not held: not found), ``already_acted_on``
(status ``already_<done>``; acting again answers so), ``duplicate`` (two records match:
results carry ``"duplicate": true``), ``partially_completed`` (status ``partial``, 2 of
3 items done; the first action leaves it partial, a second one completes it). Other
identifiers in ``facts`` are normal records. Without any identifier in ``facts`` the state
applies to calls that carry no identifier. ``stale=True`` makes every read carry
``"stale": true`` and an old ``updated_at``.

**Memory** follows :func:`tool_kind`, the first known verb among the words of the tool's
name (``get_/lookup_/find_/search_/list_/check_`` read; ``create_/add_/book_/open_/place_``
create a record with a new id that later calls find, named under the key the exemplars
use or else the identifier argument the other tools take for it (``create_booking``
answers ``booking_ref`` when ``get_booking`` takes one); ``update_/change_/cancel_/refund_/
set_/issue_/apply_/reset_`` update its status, and the same call with the same arguments a
second time answers ``already_<done>``; ``delete_/remove_`` delete it, after which it is
not found). A name with no known verb counts as a read, the harmless guess; such a tool
with no parameters and no exemplars (``ping``) answers ``{"status": "ok"}``, no record.

**Results** take the shape of the tool's production exemplars, one exemplar per kind of
answer (normal, already done, partial; see :mod:`generator._world_templates`), with new
values; free text in them names the record itself and its own dates.

Everything random comes from :class:`random.Random` seeded by the world's seed plus the
tool name plus the call count or the entity id, so the same seed and the same calls give
the same answers. Values, identifiers and placeholders live in :mod:`generator._world_values`;
result templates in :mod:`generator._world_templates`; schema files, observed structures,
argument checks and facts in :mod:`generator._tool_schemas`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from generator._tool_schemas import (
    canonical_arguments,
    check_value,
    load_tool_file,
    parse_arguments,
    sample_facts,
    tool_from_structure,
)
from generator._world_templates import Template, parse_template, render_template, settle_text
from generator._world_values import (
    collect_ids,
    find_placeholder,
    id_names,
    id_parameters,
    is_id_like,
    looks_like_placeholder,
    new_identifier,
    past_tense,
    same_noun,
    schema_at,
    search_criteria,
    shape_hint,
    subject_noun,
    tool_kind,
    tool_verb,
    words,
)
from generator.records import Fault, ToolCall, ToolSpec, WorldEvent

WORLD_STATES = ("entity_exists", "missing", "already_acted_on", "duplicate",
                "partially_completed", "unknown")
"""The world-state axis values a world can be built to show."""

FAULT_CONDITIONS = ("timeout", "error", "malformed_result", "stale_result",
                    "permission_denied", "not_found")
"""Tool conditions a :class:`~generator.records.Fault` may schedule."""

_NO_FAULT = frozenset({"success", "none", "unknown"})  # tool-condition values that are no fault
_SPOILERS = frozenset({"malformed_result", "stale_result"})  # faults that spoil a processed call
_INTERNALS = ("tracemill", "world_state", "entity_exists", "already_acted_on",
              "partially_completed", "malformed_result", "stale_result", "simulated world")
_STALE_DAYS = 97


@dataclass
class _Entity:
    """A record the world holds; mutable, because it is the world's memory of a rollout."""

    id: str  # "" until first shown, for the person's entity when facts name no identifier
    key: str | None  # the field that carries the id in results (order_id), None: "id"
    status: str | None  # None: whatever the tool's exemplars say, else "active"
    created_at: datetime
    updated_at: datetime
    fields: dict[str, Any] = field(default_factory=dict)  # set by create / update calls
    duplicate_of: str | None = None  # "" while the sibling is still to be made
    partial: bool = False
    deleted: bool = False


@dataclass(frozen=True)
class _Outcome:
    status: str
    payload: Any
    effect: str | None = None
    entity_id: str | None = None


def _refusal(status: str, message: str, **extra: Any) -> _Outcome:
    return _Outcome(status, {"error": status, "message": message, **extra})


def _rng(*parts: object) -> random.Random:
    """A generator seeded by the parts (string seeds hash the same in every process)."""
    return random.Random(":".join(map(str, parts)))  # noqa: S311 (simulation, not security)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class World:
    """A deterministic simulated service behind a set of tools, for one rollout."""

    def __init__(self, tools: Sequence[ToolSpec], *, seed: int, world_state: str,
                 facts: Mapping[str, str], faults: Sequence[Fault] = (),
                 stale: bool = False) -> None:
        """Build the world of one rollout (ValueError for an unknown fault condition)."""
        for fault in faults:
            if fault.condition not in FAULT_CONDITIONS and fault.condition not in _NO_FAULT:
                raise ValueError(f"unknown fault condition {fault.condition!r}; use one of "
                                 f"{', '.join(FAULT_CONDITIONS)}")
        self._tools = {tool.name: tool for tool in tools}
        self._templates: dict[str, Template | None] = {
            tool.name: parse_template(tool.exemplars) for tool in tools}
        self._seed = seed
        self._state = world_state
        self._stale = stale
        self._faults = [fault for fault in faults if fault.condition in FAULT_CONDITIONS]
        self._fired: set[int] = set()
        self._counts: dict[str, int] = {}
        self._calls = 0
        self._first_tool: str | None = None
        self._entities: dict[str, _Entity] = {}
        self._known: set[str] = set()
        self._done: set[tuple[str, bytes]] = set()
        self._created: dict[tuple[str, bytes], str] = {}
        self._bodies: dict[tuple[str, str, str], Any] = {}
        self._id_keys: dict[str, str | None] = {}
        self._facts = dict(facts)
        clock = _rng(seed, "clock")
        self._now = (datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
                     + timedelta(days=clock.randrange(300), minutes=clock.randrange(480)))
        updates = [name for name in self._tools if tool_kind(name) == "update"]
        self._already = f"already_{past_tense(updates[0])}" if updates else "already_processed"
        id_facts = [(key, value.strip()) for key, value in facts.items()
                    if value.strip() and is_id_like(key, self._schema_of(key), value.strip())]
        self._primary: _Entity | None = None
        self._idless = not id_facts
        for index, (key, value) in enumerate(id_facts):
            if index == 0 and world_state == "missing":
                continue
            entity = self._hold(self._fresh(value, key, past=True))
            if index == 0:
                self._primary = self._apply_state(entity)
        if not id_facts and world_state != "missing":
            self._primary = self._apply_state(self._fresh("", None, past=True))

    # ------------------------------------------------------------------ public surface

    @property
    def known_ids(self) -> frozenset[str]:
        """Every identifier the world has shown in a result or holds (deleted ones too)."""
        return frozenset(self._known)

    @property
    def mutation_fired(self) -> bool | None:
        """Whether the planned mutation took effect (None: nothing planned to take effect).

        Not measured yet: the world rewrite (issue 9) sets it from the events it marks
        ``mutated``."""
        return None

    def internals(self) -> tuple[str, ...]:
        """Harness words no result contains: an agent that writes one had them leaked."""
        return _INTERNALS

    def call(self, call: ToolCall) -> WorldEvent:
        """Answer one tool call (deterministic for the seed and the calls before it)."""
        self._calls += 1
        tool = self._tools.get(call.name)
        if tool is None:
            outcome = _refusal("unknown_tool", f"There is no tool named {call.name!r}; "
                               "use one of available_tools.",
                               available_tools=sorted(self._tools))
            return self._event(call, outcome, None)
        count = self._counts[call.name] = self._counts.get(call.name, 0) + 1
        if self._first_tool is None:
            self._first_tool = call.name
        fault = self._due(call.name, count)
        if fault is not None and fault.condition not in _SPOILERS:
            return self._event(call, self._fault(tool, fault.condition), None)
        outcome = self._answer(tool, call, count)
        return self._event(call, outcome, fault.condition if fault else None)

    # ------------------------------------------------------------------ answering

    def _answer(self, tool: ToolSpec, call: ToolCall, count: int) -> _Outcome:
        arguments, problem = parse_arguments(call.arguments)
        if arguments is None:
            return _refusal("rejected", f"The arguments are not a JSON object: {problem}. "
                            "Send the arguments as one JSON object.")
        rejected = check_value(arguments, tool.parameters, "")
        if rejected is not None:
            return _refusal("rejected", rejected.message, **rejected.extra)
        placeholder = find_placeholder(arguments, tool.parameters)
        if placeholder is not None:
            name, value = placeholder
            hint = shape_hint(name, tool.parameters, self._facts)
            return _refusal("refused", f"{value!r} is not a real value for {name!r}: it looks "
                            f"like a placeholder or the schema's own words. {hint}",
                            argument=name)
        ids = id_parameters(tool.parameters, arguments)
        for name, value in ids:
            if not self._holds(value, name):
                noun = subject_noun(tool.name, name)
                noun = "record" if noun == " ".join(words(name)) else noun  # not "sku with sku"
                return _refusal("not_found", f"No {noun} with {name} {value!r} was found. "
                                "Check it with the person: identifiers must match exactly.")
        kind = tool_kind(tool.name)
        if not ids and kind != "create":
            wanted = id_names(tool)
            if wanted and not search_criteria(tool, arguments):  # nothing to find it by
                noun = subject_noun(tool.name, wanted[0])
                return _refusal("rejected", f"Say which {noun} this is about: give "
                                f"{' or '.join(wanted)}.", missing=wanted)
        subject = self._subject(tool.name, ids, kind)
        if not ids and kind != "create" and (
                (subject is None and self._state == "missing") or (subject and subject.deleted)):
            return _refusal("not_found", f"Nothing matches these details in {tool.name}.")
        if kind == "create":
            return self._create(tool, arguments, subject, count)
        if kind == "update":
            return self._update(tool, arguments, subject, count)
        if kind == "delete":
            return self._delete(tool, arguments, subject, count)
        return self._read(tool, arguments, subject, bool(ids), count)

    def _read(self, tool: ToolSpec, arguments: dict[str, Any], subject: _Entity | None,
              by_id: bool, count: int) -> _Outcome:
        template = self._templates[tool.name]
        if template is None and not schema_at(tool.parameters, "properties") \
                and tool_verb(tool.name) is None:  # ping, health: no record to show
            return _Outcome("ok", {"status": "ok", "checked_at": _stamp(self._moment())})
        entity = subject or self._hold(self._fresh(self._new_id(tool, count), None))
        record = self._record(tool, arguments, entity, entity.status)
        if by_id or template is not None:
            payload: Any = [record] if template is not None and template.listed else record
            return _Outcome("ok", payload, None, entity.id)
        items = [record]
        if entity.duplicate_of:
            sibling = self._entities[entity.duplicate_of]
            items.append(self._record(tool, arguments, sibling, sibling.status))
        listing: dict[str, Any] = {"results": items, "count": len(items)}
        for flag in ("status", "duplicate", "completed_items", "total_items", "stale"):
            if flag in record and (flag != "status" or entity.partial
                                   or str(record[flag]).startswith("already_")):
                listing[flag] = record[flag]
        return _Outcome("ok", listing, None, entity.id)

    def _create(self, tool: ToolSpec, arguments: dict[str, Any], subject: _Entity | None,
                count: int) -> _Outcome:
        if subject is not None and (subject.status or "").startswith("already_"):
            return self._already_done(tool, arguments, subject)
        key = (tool.name, canonical_arguments(arguments))
        entity = self._hold(self._fresh(self._new_id(tool, count), self._id_key(tool)))
        entity.status, entity.fields = past_tense(tool.name), dict(arguments)
        record = self._record(tool, arguments, entity, entity.status)
        if key in self._created:  # the same create twice: a second record, flagged
            record.update(duplicate=True, duplicate_of=self._created[key])
        elif subject is not None and subject.duplicate_of:
            record.update(duplicate=True)
        self._created.setdefault(key, entity.id)
        return _Outcome("ok", record, "created", entity.id)

    def _update(self, tool: ToolSpec, arguments: dict[str, Any], subject: _Entity | None,
                count: int) -> _Outcome:
        key = (tool.name, canonical_arguments(arguments))
        entity = subject or self._loose(tool, count)
        if (entity.status or "").startswith("already_") \
                or (key in self._done and not entity.partial):
            return self._already_done(tool, arguments, entity)
        entity.updated_at = self._moment()
        entity.fields.update(arguments)
        if entity.partial and key not in self._done:  # the first try leaves it partial
            self._done.add(key)
            record = self._record(tool, arguments, entity, "partial")
            record.setdefault("message", f"2 of 3 items {past_tense(tool.name)}; 1 item is "
                              "still pending.")
            return _Outcome("ok", record, "updated", entity.id)
        self._done.add(key)
        entity.partial = False
        entity.status = past_tense(tool.name)
        return _Outcome("ok", self._record(tool, arguments, entity, entity.status), "updated",
                        entity.id)

    def _delete(self, tool: ToolSpec, arguments: dict[str, Any], subject: _Entity | None,
                count: int) -> _Outcome:
        entity = subject or self._loose(tool, count)
        self._ensure_id(tool, entity)
        entity.deleted, entity.updated_at = True, self._moment()
        entity.status = past_tense(tool.name)
        payload = {entity.key or "id": entity.id, "status": entity.status, "deleted": True,
                   "updated_at": _stamp(entity.updated_at)}
        return _Outcome("ok", payload, "deleted", entity.id)

    def _already_done(self, tool: ToolSpec, arguments: dict[str, Any],
                      entity: _Entity) -> _Outcome:
        done = past_tense(tool.name)
        record = self._record(tool, arguments, entity, f"already_{done}")
        record.setdefault("message", f"Nothing changed: this was already {done} on "
                          f"{entity.updated_at:%Y-%m-%d}.")
        return _Outcome("ok", record, None, entity.id)

    # ------------------------------------------------------------------ records

    def _record(self, tool: ToolSpec, arguments: dict[str, Any], entity: _Entity,
                status: str | None) -> dict[str, Any]:
        """The entity as this tool shows it: the exemplars' shape, the world's state."""
        self._ensure_id(tool, entity)
        template = self._templates[tool.name]
        echo = dict(arguments) if tool_kind(tool.name) in ("create", "update") else {
            name: arguments[name] for name, _ in id_parameters(tool.parameters, arguments)}
        record: dict[str, Any] = {}
        kind = "already" if (status or "").startswith("already_") else \
            "partial" if status == "partial" else "normal"
        shape = None
        if template is not None:
            kind = kind if kind in template.kinds else "normal"
            shape = template.kinds.get(kind)
        if template is not None and shape is not None:
            body = self._bodies.get((tool.name, entity.id, kind))
            if body is None:  # drawn once per tool and record: a second read shows the same
                body = self._bodies[tool.name, entity.id, kind] = render_template(
                    template, kind, _rng(self._seed, tool.name, entity.id,
                                         *(() if kind == "normal" else (kind,))), self._now)
            record = dict(body) if isinstance(body, dict) else {"result": body}
        if entity.key in record or (entity.key is None and "id" in record) \
                or entity.id not in map(str, echo.values()):
            record[entity.key or "id"] = entity.id
        record.update(entity.fields)
        record.update(echo)
        if status is not None or "status" not in record:
            record["status"] = status or "active"
        if template is None or "created_at" in record:
            record["created_at"] = _stamp(entity.created_at)
        record["updated_at"] = _stamp(entity.updated_at)
        if entity.duplicate_of:
            record.update(duplicate=True, matching_records=[entity.id, entity.duplicate_of])
        if entity.partial and status in (None, "partial"):
            record.update(status="partial", completed_items=2, total_items=3)
        if shape is not None and shape.texts:
            settle_text(record, shape, entity.id, entity.updated_at)
        if self._stale and tool_kind(tool.name) == "read":
            record = self._staled(record)
        return record

    def _staled(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record as an out-of-date cache would show it."""
        old = self._now - timedelta(days=_STALE_DAYS)
        record = {**record, "stale": True, "updated_at": _stamp(old)}
        if "created_at" in record:
            record["created_at"] = min(str(record["created_at"]), _stamp(old))
        return record

    # ------------------------------------------------------------------ state helpers

    def _fresh(self, entity_id: str, key: str | None, *, past: bool = False) -> _Entity:
        rng = _rng(self._seed, "entity", entity_id)
        if not past:
            return _Entity(entity_id, key, None, self._moment(), self._moment())
        created = self._now - timedelta(days=rng.randrange(3, 40), minutes=rng.randrange(600))
        return _Entity(entity_id, key, None, created,
                       created + timedelta(hours=rng.randrange(1, 48)))

    def _hold(self, entity: _Entity) -> _Entity:
        if entity.id:
            self._entities[entity.id] = entity
            self._known.add(entity.id)
        return entity

    def _apply_state(self, entity: _Entity) -> _Entity:
        """Make the person's entity show the world state the rollout is built for."""
        if self._state == "already_acted_on":
            entity.status = self._already
        elif self._state == "partially_completed":
            entity.partial = True
        elif self._state == "duplicate":
            entity.duplicate_of = ""
            if entity.id:
                self._make_sibling(entity)
        return entity

    def _make_sibling(self, entity: _Entity) -> None:
        rng = _rng(self._seed, "sibling", entity.id)
        sibling = new_identifier("", rng, self._known, like=entity.id)
        entity.duplicate_of = sibling
        self._hold(_Entity(sibling, entity.key, None, entity.created_at, entity.updated_at))

    def _ensure_id(self, tool: ToolSpec, entity: _Entity) -> None:
        """Name the person's entity the first time a tool shows it (facts named none)."""
        if entity.id:
            return
        entity.key = self._id_key(tool)
        entity.id = self._new_id(tool, "subject")
        self._hold(entity)
        if entity.duplicate_of == "":
            self._make_sibling(entity)

    def _new_id(self, tool: ToolSpec, draw: int | str) -> str:
        """A fresh id for a record this tool shows (``draw``: the call count, or a name),
        shaped like the exemplars' id, else like the person's id of the same key."""
        template = self._templates[tool.name]
        like = template.id_value if template is not None else None
        if like is None:
            key = self._id_key(tool)
            like = self._facts.get(key) if key else None
        return new_identifier(tool.name, _rng(self._seed, tool.name, "id", draw), self._known,
                              like=like)

    def _id_key(self, tool: ToolSpec) -> str | None:
        """The key a tool's records carry their id under: the exemplars' (``order_id``),
        else the identifier argument the tools take for this tool's noun (``booking_ref``
        for ``create_booking`` when ``get_booking`` takes it), else None (``id``)."""
        if tool.name in self._id_keys:
            return self._id_keys[tool.name]
        template = self._templates[tool.name]
        key = template.id_key if template is not None else None
        nouns = {word.rstrip("s") for word in words(tool.name)}
        for other in self._tools.values() if key is None else ():
            key = next((name for name in id_names(other)
                        if subject_noun("", name).rstrip("s") in nouns), None)
            if key is not None:
                break
        self._id_keys[tool.name] = key
        return key

    def _loose(self, tool: ToolSpec, count: int) -> _Entity:
        """The record an identifier-less action acts on when it is not the person's entity."""
        return self._hold(self._fresh(self._new_id(tool, count), self._id_key(tool),
                                      past=True))

    def _subject(self, tool: str, ids: Sequence[tuple[str, str]], kind: str) -> _Entity | None:
        """The entity a call is about: the identifier naming the tool's noun, else the
        first; without identifiers, the person's entity (a create only when facts name no
        identifier: creating a ticket is not about the order)."""
        if not ids:
            return self._primary if kind != "create" or self._idless else None
        nouns = set(words(tool)[1:])
        _, value = next(((n, v) for n, v in ids if set(words(n)) & nouns), ids[0])
        entity = self._entities.get(value)
        if entity is None:  # an identifier the world showed in a result, held from now on
            entity = self._hold(self._fresh(value, None, past=True))
        return entity

    def _holds(self, value: str, name: str) -> bool:
        """Whether ``value`` names a record the world holds, of the kind ``name`` asks for
        (a flight's id is no booking reference; a generic ``id`` matches any record)."""
        entity = self._entities.get(value)
        if entity is None:
            return value in self._known
        return not entity.deleted and (entity.key is None or same_noun(entity.key, name))

    def _schema_of(self, key: str) -> Mapping[str, Any] | None:
        for tool in self._tools.values():
            props = tool.parameters.get("properties")
            schema = props.get(key) if isinstance(props, Mapping) else None
            if isinstance(schema, Mapping):
                return schema
        return None

    def _moment(self) -> datetime:
        return self._now + timedelta(minutes=self._calls)

    def _due(self, tool: str, count: int) -> Fault | None:
        for index, fault in enumerate(self._faults):
            target = self._first_tool if fault.tool == "*" else fault.tool
            if index not in self._fired and target == tool and fault.on_call == count:
                self._fired.add(index)
                return fault
        return None

    def _fault(self, tool: ToolSpec, condition: str) -> _Outcome:
        if condition == "timeout":
            return _refusal("timeout", f"The {tool.name} service did not answer within 30 "
                            "seconds.", retryable=True)
        if condition == "permission_denied":
            return _refusal("permission_denied",
                            f"This account is not allowed to use {tool.name}.")
        if condition == "not_found":
            return _refusal("not_found", f"No {subject_noun(tool.name, None)} matches this "
                            "request.")
        return _Outcome("error", {"error": "internal_error", "code": 500,
                                  "message": f"The {tool.name} service failed unexpectedly."})

    def _event(self, call: ToolCall, outcome: _Outcome, spoil: str | None) -> WorldEvent:
        status, payload = outcome.status, outcome.payload
        if status == "ok" and spoil == "stale_result" and isinstance(payload, dict):
            payload, status = self._staled(payload), "stale_result"
        if status == "ok":
            collect_ids(payload, self._known)
        text = orjson.dumps(payload).decode()
        if spoil == "malformed_result":  # cut before the closing brace: never valid JSON
            text, status = text[: max(1, len(text) * 3 // 5)], "malformed_result"
        return WorldEvent(call_id=call.id, tool=call.name, arguments=call.arguments,
                          status=status, result=text, effect=outcome.effect,
                          entity_id=outcome.entity_id or None)


__all__ = ["FAULT_CONDITIONS", "WORLD_STATES", "World", "is_id_like", "load_tool_file",
           "looks_like_placeholder", "sample_facts", "tool_from_structure", "tool_kind"]
