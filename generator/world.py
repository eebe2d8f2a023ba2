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

**The scenario** (:mod:`generator.scenario`). ``facts`` are what the simulated person
knows. Their identifiers and attributes seed the person and the records they hold: the
owner (``user_id``, ``customer_id``; made on first use otherwise, named after the person
when production's handles are names), and their orders, reservations, lines, payment
methods. Every identifier in an answer is linked to them in the exact format production
writes (``#W8178512``, ``8JX2WO``, ``credit_card_7815826``): a user lookup lists the
person's orders, an order names its user and is paid with one of the user's methods, a
lookup by email, phone or name finds the person only with the person's own values. Only
exact identifiers are found. A search by other criteria (flights, products) answers new
records that are nobody's; an action about no record (``transfer_to_human_agents``)
answers as its exemplars do.

**The situation's record.** The *focal* fact (the ``focus`` tool's identifier for its own
noun, else one of its identifiers that is not the person's own, else the first
identifier fact) names the record the rollout is about, and ``world_state`` decides how
the world holds it: ``entity_exists`` and ``unknown`` (a record the focal action can act
on: the status its name requires, ``pending`` for ``cancel_pending_order``),
``missing`` (not held: not found, and not listed among the person's records),
``already_acted_on`` (reads show the status the focal action leaves, in production's
word, ``cancelled``; doing it again is refused as ``already_cancelled``), ``duplicate``
(two records match: results carry ``"duplicate": true``), ``partially_completed``
(status ``partial``, 2 of 3 items done; the first action leaves it partial, a second
completes it). Without any identifier in ``facts`` the state applies to the record the
person's id-less calls find. ``stale=True`` makes every read carry ``"stale": true`` and
an old ``updated_at``. An answer where the mutation shows (the record in its mutated state
read or acted on, the missing record looked for, a scheduled fault fired; a ``*`` fault
fires on the focal tool when there is one) carries ``WorldEvent.mutated``, and
:attr:`World.mutation_fired` says whether one did.

**Memory** follows :func:`tool_kind`, the first known verb among the words of the tool's
name (``get_/lookup_/find_/search_/list_/check_`` read; ``create_/add_/book_/open_/place_``
create a record with a new id that later calls find, named under the key the exemplars
use or else the identifier argument the other tools take for it (``create_booking``
answers ``booking_ref`` when ``get_booking`` takes one); ``update_/change_/cancel_/refund_/
suspend_/...`` write the call's arguments into the record (an exchanged item keeps what
the call did not name) and move its status (:mod:`generator._world_status`): an action
whose record already has the status it leaves, or lacks the one its name requires, or the
same call a second time, is ``refused`` with the reason (``already_cancelled``; "is
delivered, not pending"); ``delete_/remove_`` delete it, after which it is not found).
Later reads show what was written and what earlier answers showed. A name with no known
verb counts as a read, the harmless guess; such a tool with no parameters and no
exemplars (``ping``) answers ``{"status": "ok"}``, no record.

**Results** take the shape of the tool's production exemplars, one exemplar per kind of
answer (normal, already done, partial; see :mod:`generator._world_templates`), and for a
tool that reads several kinds of record the exemplar of the kind asked for (a bill's for
``B1002``); with new values: dates moved together to the world's clock, people's names
drawn anew, free text naming the record itself and its own dates. A tool whose exemplars
are plain text answers in text (:mod:`generator._world_text`).

Everything random comes from :class:`random.Random` seeded by the world's seed plus the
tool name plus the call count or the entity id, so the same seed and the same calls give
the same answers. Values, identifiers and placeholders live in :mod:`generator._world_values`;
result templates in :mod:`generator._world_templates`; schema files, observed structures,
argument checks and facts in :mod:`generator._tool_schemas`; the records the world keeps in
:mod:`generator._world_records`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
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
from generator._world_records import Entity, Outcome, merge, refusal, spread, stamp
from generator._world_records import rng as seeded
from generator._world_status import StatusRules
from generator._world_templates import (
    Shape,
    Template,
    latest_date,
    parse_template,
    render_template,
    settle_text,
)
from generator._world_text import text_answer
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
    tool_nouns,
    tool_verb,
    words,
)
from generator.records import Fault, PlannedRollout, ToolCall, ToolSpec, WorldEvent
from generator.scenario import OWNER_KINDS, Scenario, Subject, attribute_of, kind_of

WORLD_STATES = ("entity_exists", "missing", "already_acted_on", "duplicate",
                "partially_completed", "unknown")
"""The world-state axis values a world can be built to show."""

FAULT_CONDITIONS = ("timeout", "error", "malformed_result", "stale_result",
                    "permission_denied", "not_found")
"""Tool conditions a :class:`~generator.records.Fault` may schedule."""

_NO_FAULT = frozenset({"success", "none", "unknown"})  # tool-condition values that are no fault
_NO_EFFECT = frozenset({"reperson", "paraphrase"})  # mutations that change no record
_SPOILERS = frozenset({"malformed_result", "stale_result"})  # faults that spoil a processed call
_INTERNALS = ("tracemill", "world_state", "entity_exists", "already_acted_on",
              "partially_completed", "malformed_result", "stale_result", "simulated world")
_STALE_DAYS = 97
_UNSHARED = frozenset({"status", "message", "updated_at", "created_at", "result"})


class World:
    """A deterministic simulated service behind a set of tools, for one rollout."""

    def __init__(self, tools: Sequence[ToolSpec], *, seed: int, world_state: str,
                 facts: Mapping[str, str], faults: Sequence[Fault] = (),
                 stale: bool = False, focus: str | None = None,
                 mutation: str | None = None) -> None:
        """Build the world of one rollout (ValueError for an unknown fault condition);
        ``focus`` is the tool the situation is about (the plan's ``goal.tool``),
        ``mutation`` the plan's mutation kind (``reperson`` and ``paraphrase`` need no
        effect in the world: :attr:`mutation_fired` is None for them)."""
        for fault in faults:
            if fault.condition not in FAULT_CONDITIONS and fault.condition not in _NO_FAULT:
                raise ValueError(f"unknown fault condition {fault.condition!r}; use one of "
                                 f"{', '.join(FAULT_CONDITIONS)}")
        self._tools = {tool.name: tool for tool in tools}
        toolset = _toolset(tuple((tool.name, tool.exemplars) for tool in tools))
        self._templates: Mapping[str, Template | None] = toolset.templates
        self._seed = seed
        self._state = world_state
        self._stale = stale
        self._faults = [fault for fault in faults if fault.condition in FAULT_CONDITIONS]
        self._fired: set[int] = set()
        self._counts: dict[str, int] = {}
        self._calls = 0
        self._first_tool: str | None = None
        self._entities: dict[str, Entity] = {}
        self._known: set[str] = set()
        self._done: set[tuple[str, bytes]] = set()
        self._created: dict[tuple[str, bytes], str] = {}
        self._bodies: dict[tuple[str, str, str], Any] = {}
        self._id_keys: dict[str, str | None] = {}
        self._facts = dict(facts)
        self._fact_values = {value.strip() for value in facts.values()}
        self._focus = focus if focus in self._tools else None
        self._needs_effect = mutation not in _NO_EFFECT and (
            bool(self._faults) or world_state not in ("entity_exists", "unknown"))
        self._fired_mutation = False
        clock = seeded(seed, "clock")
        self._now = (datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
                     + timedelta(days=clock.randrange(300), minutes=clock.randrange(480)))
        updates = [name for name in self._tools if tool_kind(name) == "update"]
        acting = self._focus if self._focus and tool_kind(self._focus) == "update" else \
            updates[0] if updates else None
        self._acting = acting
        self._already = f"already_{past_tense(acting)}" if acting else "already_processed"
        self._rules = toolset.rules
        self._shift = self._now.date() - toolset.latest if toolset.latest else None
        self._scenario = Scenario(seed, self._register)
        stripped = [(_fact_key(key), value.strip()) for key, value in facts.items()]
        id_facts = [(key, value) for key, value in stripped
                    if value and is_id_like(key, self._schema_of(key), value)]
        focal = self._focal(id_facts)
        for key, value in facts.items():
            if value.strip() and ((_fact_key(key), value.strip()) != focal
                                  or world_state != "missing"):
                self._scenario.add_fact(_fact_key(key), value.strip())
        self._primary: Entity | None = None
        self._missing_id = focal[1] if focal and world_state == "missing" else None
        self._idless = not id_facts
        for key, value in id_facts:
            if (key, value) == focal and world_state == "missing":
                continue
            kind = kind_of(key)
            owner = self._scenario.owner_id == value
            entity = self._hold(self._fresh(value, key, past=True))
            entity.kind = kind
            if (key, value) == focal:
                self._primary = self._apply_state(entity)
            elif owner:
                entity.kind = self._scenario.owner_kind
        if not id_facts and world_state != "missing":
            self._primary = self._apply_state(self._fresh("", None, past=True))

    @classmethod
    def for_plan(cls, plan: PlannedRollout, tools: Sequence[ToolSpec]) -> World:
        """The world of one planned rollout: its seed, the person's facts, the world state
        and faults of its mutation, aimed at its goal's tool."""
        return cls(tools, seed=plan.seed, world_state=plan.mutation.world_state,
                   facts=plan.goal.facts, faults=plan.mutation.faults, focus=plan.goal.tool,
                   mutation=plan.mutation.kind)

    # ------------------------------------------------------------------ public surface

    @property
    def known_ids(self) -> frozenset[str]:
        """Every identifier the world has shown in a result or holds (deleted ones too)."""
        return frozenset(self._known)

    @property
    def mutation_fired(self) -> bool | None:
        """Whether the planned mutation took effect: True once an answer showed it (a
        record held in its mutated state was read or acted on, a missing one was looked
        for, a scheduled fault fired), False while it has not, None when the rollout
        plans no effect in the world (no faults, world state ``entity_exists`` or
        ``unknown``: reperson, paraphrase, plain exploration)."""
        if not self._needs_effect:
            return None
        return self._fired_mutation

    def internals(self) -> tuple[str, ...]:
        """Harness words no result contains: an agent that writes one had them leaked."""
        return _INTERNALS

    def call(self, call: ToolCall) -> WorldEvent:
        """Answer one tool call (deterministic for the seed and the calls before it)."""
        self._calls += 1
        tool = self._tools.get(call.name)
        if tool is None:
            outcome = refusal("unknown_tool", f"There is no tool named {call.name!r}; "
                               "use one of available_tools.",
                               available_tools=sorted(self._tools))
            return self._event(call, outcome, None)
        count = self._counts[call.name] = self._counts.get(call.name, 0) + 1
        if self._first_tool is None:
            self._first_tool = call.name
        fault = self._due(call.name, count)
        if fault is not None and fault.condition not in _SPOILERS:
            outcome = self._fault(tool, fault.condition)
            return self._event(call, replace(outcome, mutated=True), None)
        outcome = self._answer(tool, call, count)
        if fault is not None:
            outcome = replace(outcome, mutated=True)
        return self._event(call, outcome, fault.condition if fault else None)

    # ------------------------------------------------------------------ answering

    def _answer(self, tool: ToolSpec, call: ToolCall, count: int) -> Outcome:
        arguments, problem = parse_arguments(call.arguments)
        if arguments is None:
            return refusal("rejected", f"The arguments are not a JSON object: {problem}. "
                            "Send the arguments as one JSON object.")
        rejected = check_value(arguments, tool.parameters, "")
        if rejected is not None:
            return refusal("rejected", rejected.message, **rejected.extra)
        placeholder = find_placeholder(arguments, tool.parameters)
        if placeholder is not None and placeholder[1] not in self._fact_values:
            # (a person really named John Smith says so: what they said is no placeholder)
            name, value = placeholder
            hint = shape_hint(name, tool.parameters, self._facts)
            return refusal("refused", f"{value!r} is not a real value for {name!r}: it looks "
                            f"like a placeholder or the schema's own words. {hint}",
                            argument=name)
        ids = id_parameters(tool.parameters, arguments)
        for name, value in ids:
            if not self._holds(value, name):
                noun = subject_noun(tool.name, name)
                noun = "record" if noun == " ".join(words(name)) else noun  # not "sku with sku"
                outcome = refusal("not_found", f"No {noun} with {name} {value!r} was found. "
                                   "Check it with the person: identifiers must match exactly.")
                return replace(outcome, mutated=value == self._missing_id)
        kind = tool_kind(tool.name)
        person = self._scenario.matches(arguments, tool.name) \
            if not ids and kind != "create" else None
        if person is False:
            given = next(key for key in arguments if attribute_of(key) is not None)
            return refusal("not_found", f"No {subject_noun(tool.name, None)} matches "
                            f"{given} {arguments[given]!r}.")
        if not ids and kind != "create" and person is None:
            wanted = id_names(tool) or [  # an observed find_user_id_by_email({}) too
                name for name in schema_at(tool.parameters, "properties")
                if attribute_of(name) is not None and arguments.get(name) in (None, "")]
            if wanted and not search_criteria(tool, arguments):  # nothing to find it by
                noun = subject_noun(tool.name, wanted[0])
                return refusal("rejected", f"Say which {noun} this is about: give "
                                f"{' or '.join(wanted)}.", missing=wanted)
        subject = self._subject(tool.name, ids, kind, person)
        if not ids and kind != "create" and (
                (subject is None and self._state == "missing" and (person or self._idless))
                or (subject and subject.deleted)):
            return replace(refusal("not_found", f"Nothing matches these details in "
                                    f"{tool.name}."), mutated=self._state == "missing")
        if kind == "create":
            return self._create(tool, arguments, subject, count)
        if subject is None:  # a search or an action about nothing the person holds
            return self._unowned(tool, arguments, count)
        if kind == "update":
            return self._update(tool, arguments, subject, count)
        if kind == "delete":
            return self._delete(tool, arguments, subject, count)
        return self._read(tool, arguments, subject, bool(ids), count)

    def _read(self, tool: ToolSpec, arguments: dict[str, Any], subject: Entity,
              by_id: bool, count: int) -> Outcome:
        template = self._templates[tool.name]
        pinged = self._ping(tool, template)
        if pinged is not None:
            return pinged
        shows = kind_of(template.id_key or "") if template is not None else None
        if template is not None and template.listed and shows is not None \
                and subject.kind is not None and shows != subject.kind:
            return self._owned_listing(tool, arguments, subject, shows)
        record = self._record(tool, arguments, subject, subject.status)
        mutated = subject.mutated
        if by_id or template is not None:
            payload: Any = [record] if template is not None and template.listed else record
            return Outcome("ok", self._face(tool, payload, subject, arguments), None,
                            subject.id, mutated)
        if not isinstance(record, dict):
            return Outcome("ok", record, None, subject.id, mutated)
        items = [record]
        if subject.duplicate_of:
            sibling = self._entities[subject.duplicate_of]
            items.append(self._record(tool, arguments, sibling, sibling.status))
        listing: dict[str, Any] = {"results": items, "count": len(items)}
        for flag in ("status", "duplicate", "completed_items", "total_items", "stale"):
            if flag in record and (flag != "status" or subject.partial
                                   or str(record[flag]).startswith("already_")):
                listing[flag] = record[flag]
        return Outcome("ok", listing, None, subject.id, mutated)

    def _owned_listing(self, tool: ToolSpec, arguments: dict[str, Any], owner: Entity,
                       kind: str) -> Outcome:
        """A list of the owner's records of another kind (a customer's bills): each record
        the world holds for the owner, in its own shape, linked back to the owner."""
        template = self._templates[tool.name]
        assert template is not None
        held = list(self._scenario.held.get(kind, ()))
        if not held:
            like = template.id_value or f"{kind[:1].upper()}1001"
            self._scenario.resolve(kind, like, owned=True, listing=True)
            held = list(self._scenario.held.get(kind, ()))
        limit = next((value for key, value in arguments.items() if isinstance(value, int)
                      and not isinstance(value, bool) and key in ("limit", "max", "count",
                                                                   "page_size", "top")), 3)
        items = []
        for record_id in reversed(held[-max(1, limit):]):  # the newest first
            entity = self._entities.get(record_id)
            if entity is not None and not entity.deleted:
                items.append(self._record(tool, arguments, entity, entity.status))
        return Outcome("ok", items, None, owner.id, owner.mutated)

    def _ping(self, tool: ToolSpec, template: Template | None) -> Outcome | None:
        """A tool with no parameters, no exemplars and no known verb (ping, health): no
        record to show, only that the service is up."""
        if template is None and not schema_at(tool.parameters, "properties") \
                and tool_verb(tool.name) is None:
            return Outcome("ok", {"status": "ok", "checked_at": stamp(self._moment())})
        return None

    def _unowned(self, tool: ToolSpec, arguments: dict[str, Any], count: int) -> Outcome:
        """A search (flights, products) or a stateless action (a transfer to a human): new
        records that are nobody's, matching the criteria the call gave."""
        template = self._templates[tool.name]
        if template is not None and not template.kinds and template.text is not None:
            return Outcome("ok", self._text(tool, template.text, None, arguments))
        pinged = self._ping(tool, template)
        if pinged is not None:
            return pinged
        if template is None:
            entity = self._hold(self._fresh(self._new_id(tool, count), None))
            entity.owned = False
            return Outcome("ok", self._record(tool, arguments, entity, entity.status), None,
                            entity.id)
        shapes = list(template.variants[:3]) if template.listed and template.variants else \
            [template.kinds.get("normal") or next(iter(template.kinds.values()))]
        items = []
        for index, shape in enumerate(shapes):  # each its own exemplar: its own ids
            rng = seeded(self._seed, tool.name, "search", count, index)
            body = render_template(template, "normal", rng, self._now, shape, self._shift)
            body = self._scenario.link(body, shape.body, "", Subject("", None, owned=False))
            if isinstance(body, dict):
                body.update({key: value for key, value in arguments.items()
                             if key in body and isinstance(value, str | int | float)
                             and not isinstance(value, bool)
                             and type(value) is type(shape.body.get(key))})
            items.append(body)
        return Outcome("ok", items if template.listed else items[0])

    def _create(self, tool: ToolSpec, arguments: dict[str, Any], subject: Entity | None,
                count: int) -> Outcome:
        if subject is not None and subject.mutated and self._state == "already_acted_on" \
                and tool.name == self._acting:
            return self._already_done(tool, arguments, subject)
        key = (tool.name, canonical_arguments(arguments))
        entity = self._hold(self._fresh(self._new_id(tool, count), self._id_key(tool)))
        entity.kind = kind_of(entity.key or "") or subject_noun(tool.name, None)
        entity.fields = dict(arguments)
        entity.status = self._rules.target(tool.name)
        record = self._record(tool, arguments, entity, entity.status)
        if isinstance(record, dict) and key in self._created:  # the same create twice: a
            record.update(duplicate=True, duplicate_of=self._created[key])  # second record
        elif isinstance(record, dict) and subject is not None and subject.duplicate_of:
            record.update(duplicate=True)
        self._created.setdefault(key, entity.id)
        if entity.owned and entity.kind and entity.kind != self._scenario.owner_kind:
            self._scenario.hold(entity.kind, entity.id)
        mutated = subject is not None and subject.mutated
        return Outcome("ok", self._face(tool, record, entity, arguments), "created",
                        entity.id, mutated)

    def _update(self, tool: ToolSpec, arguments: dict[str, Any], entity: Entity,
                count: int) -> Outcome:
        key = (tool.name, canonical_arguments(arguments))
        target = self._rules.target(tool.name)
        current = (entity.status or "").lower()
        about = self._rules.about(tool.name, entity.kind)
        if current.startswith("already_") or (
                about and target is not None and current == target.lower()
                and not entity.partial) \
                or (key in self._done and not entity.partial):
            return self._already_done(tool, arguments, entity)
        needed = self._rules.required(tool.name) if about else None
        if needed and current and current != needed.lower():
            noun = subject_noun(tool.name, entity.key)
            return Outcome("refused", {
                "error": "not_allowed", "status": entity.status,
                "message": f"The {noun} {entity.id} is {entity.status}, not {needed}: it "
                           f"cannot be {past_tense(tool.name)}."}, None, entity.id,
                entity.mutated)
        entity.updated_at = self._moment()
        entity.fields = merge(entity.fields, arguments)
        if entity.partial and key not in self._done:  # the first try leaves it partial
            self._done.add(key)
            record = self._record(tool, arguments, entity, "partial")
            if isinstance(record, dict):
                record.setdefault("message", f"2 of 3 items {past_tense(tool.name)}; 1 item "
                                  "is still pending.")
            return Outcome("ok", record, "updated", entity.id, True)
        self._done.add(key)
        mutated = entity.mutated
        entity.partial = False
        if about:  # enable_roaming leaves the line's status be
            entity.status = target or entity.status
        record = self._record(tool, arguments, entity, entity.status)
        return Outcome("ok", self._face(tool, record, entity, arguments), "updated",
                        entity.id, mutated)

    def _delete(self, tool: ToolSpec, arguments: dict[str, Any], entity: Entity,
                count: int) -> Outcome:
        self._ensure_id(tool, entity)
        entity.deleted, entity.updated_at = True, self._moment()
        entity.status = past_tense(tool.name)
        payload = {entity.key or "id": entity.id, "status": entity.status, "deleted": True,
                   "updated_at": stamp(entity.updated_at)}
        return Outcome("ok", payload, "deleted", entity.id, entity.mutated)

    def _already_done(self, tool: ToolSpec, arguments: dict[str, Any],
                      entity: Entity) -> Outcome:
        """A repeated action refused, naming why: production's own "already" answer when
        its exemplars show one, else an error naming the record, its status and date."""
        done = past_tense(tool.name)
        template = self._templates[tool.name]
        self._ensure_id(tool, entity)
        record: Any
        if template is not None and "already" in template.kinds:
            record = self._record(tool, arguments, entity, f"already_{done}")
        else:
            noun = subject_noun(tool.name, entity.key).capitalize()
            shown = f"{noun} {entity.id}" if entity.id else noun
            record = {"error": f"already_{done}", "status": f"already_{done}",
                      entity.key or "id": entity.id,
                      "message": f"{shown} was already {done} on "
                                 f"{entity.updated_at:%Y-%m-%d}; nothing changed."}
        if isinstance(record, dict):
            record.setdefault("message", f"Nothing changed: this was already {done} on "
                              f"{entity.updated_at:%Y-%m-%d}.")
        return Outcome("refused", record, None, entity.id, entity.mutated)

    # ------------------------------------------------------------------ records

    def _record(self, tool: ToolSpec, arguments: dict[str, Any], entity: Entity,
                status: str | None) -> Any:
        """The entity as this tool shows it: the exemplars' shape, the world's state, its
        links to the person's other records, and what earlier answers showed of it."""
        self._ensure_id(tool, entity)
        template = self._templates[tool.name]
        echo = dict(arguments) if tool_kind(tool.name) in ("create", "update") else {
            name: arguments[name] for name, _ in id_parameters(tool.parameters, arguments)}
        record: dict[str, Any] = {}
        kind = "already" if (status or "").startswith("already_") else \
            "partial" if status == "partial" else "normal"
        shape = None
        if template is None and entity.id and not entity.shown and entity.kind:
            template, shape = self._borrowed(entity)  # no exemplar: another tool's record
            kind = "normal"
        elif template is not None:
            kind = kind if kind in template.kinds else "normal"
            shape = template.kinds.get(kind)
            if kind == "normal" and entity.id:
                shape = template.variant_for(entity.id) or self._variant_elsewhere(
                    tool, entity.id) or shape
        if template is not None and shape is not None:
            body = self._bodies.get((tool.name, entity.id, kind))
            if body is None:  # drawn once per tool and record: a second read shows the same
                drawn = render_template(template, kind, seeded(
                    self._seed, tool.name, entity.id,
                    *(() if kind == "normal" else (kind,))), self._now, shape, self._shift)
                body = self._bodies[tool.name, entity.id, kind] = self._scenario.link(
                    drawn, shape.body, "", Subject(entity.id, entity.kind, entity.owned,
                                                   entity is self._primary))
            if not isinstance(body, dict):  # a list of lists, a bare value: as it is
                return body
            record = dict(body)
        elif entity.shown:  # no exemplar: the record as earlier answers showed it
            record = {key: value for key, value in entity.shown.items() if key != "id"}
        if entity.key in record or (entity.key is None and "id" in record) \
                or entity.id not in map(str, echo.values()):
            record[entity.key or "id"] = entity.id
        texts = shape.texts if shape is not None else ()
        for name, value in record.items():  # one record, the same values in every answer
            if name not in _UNSHARED and name not in echo and name not in texts:
                shown = entity.shown.setdefault(name, value)
                if type(shown) is type(value):  # "8.7" in one answer, 8.7 in another
                    record[name] = shown
        record = merge(merge(record, entity.fields), echo)
        if status is None and isinstance(record.get("status"), str) and kind == "normal" \
                and not entity.partial:
            entity.status = record["status"]  # drawn once: later answers show the same
        if status is not None or "status" not in record:
            record["status"] = status or "active"
        if template is None or "created_at" in record:
            record["created_at"] = stamp(entity.created_at)
        record["updated_at"] = stamp(entity.updated_at)
        if entity.duplicate_of:
            record.update(duplicate=True, matching_records=[entity.id, entity.duplicate_of])
        if entity.partial and status in (None, "partial"):
            record.update(status="partial", completed_items=2, total_items=3)
        if shape is not None and shape.texts:
            settle_text(record, shape, entity.id, entity.updated_at)
        if self._stale and tool_kind(tool.name) == "read":
            record = self._staled(record)
        return record

    def _borrowed(self, entity: Entity) -> tuple[Template | None, Shape | None]:
        """For a tool without exemplars: the exemplar another tool (a read first) shows a
        record of this kind in (an order, for a ``get_order_details`` seen in no trace)."""
        names = sorted(self._templates, key=lambda name: tool_kind(name) != "read")
        for name in names:
            template = self._templates[name]
            if template is None or template.listed:
                continue
            shape = template.variant_for(entity.id)
            if shape is None and template.id_key and kind_of(template.id_key) == entity.kind:
                shape = template.kinds.get("normal")
            if shape is not None and isinstance(shape.body, dict):
                return template, shape
        return None, None

    def _variant_elsewhere(self, tool: ToolSpec, record_id: str) -> Shape | None:
        """For a tool that reads any kind of record by a bare ``id``: another read tool's
        exemplar of the kind ``record_id`` is written like (a bill's, for ``B1002``)."""
        if tool_kind(tool.name) != "read":
            return None
        template = self._templates[tool.name]
        if template is not None and template.variant_for(record_id) is not None:
            return None
        for name, other in self._templates.items():
            if other is not None and name != tool.name and tool_kind(name) == "read":
                found = other.variant_for(record_id)
                if found is not None:
                    return found
        return None

    def _face(self, tool: ToolSpec, record: Any, entity: Entity,
              arguments: Mapping[str, Any]) -> Any:
        """The answer as production writes it: the record, or the text a tool whose
        exemplars are plain text answers with (an id lookup answers with the id alone)."""
        template = self._templates[tool.name]
        if template is None or template.kinds or template.text is None:
            return record
        return self._text(tool, template.text, entity, arguments)

    def _text(self, tool: ToolSpec, text: str, entity: Entity | None,
              arguments: Mapping[str, Any]) -> str:
        """A plain-text exemplar written for this call (:mod:`generator._world_text`)."""
        own = entity.id if entity is not None else ""

        def new_id(like: str) -> str:
            return new_identifier(tool.name, seeded(self._seed, tool.name, "text"),
                                  self._known, like=like)

        return text_answer(text, own, arguments, seeded(self._seed, tool.name, "text", own,
                                                      self._calls), new_id, self._known)

    def _staled(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record as an out-of-date cache would show it."""
        old = self._now - timedelta(days=_STALE_DAYS)
        record = {**record, "stale": True, "updated_at": stamp(old)}
        if "created_at" in record:
            record["created_at"] = min(str(record["created_at"]), stamp(old))
        return record

    # ------------------------------------------------------------------ scenario

    def _register(self, record_id: str, kind: str | None, owned: bool) -> None:
        """A record the scenario named in an answer: from now on the world holds it."""
        if record_id in self._entities:
            return
        entity = self._hold(self._fresh(record_id, f"{kind}_id" if kind else None,
                                        past=True))
        entity.kind, entity.owned = kind, owned

    def _focal(self, id_facts: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
        """The fact naming the record the situation is about: the focal tool's identifier
        for its own noun, else one of its identifiers that is not the person's own, else
        the first identifier fact."""
        if not id_facts:
            return None
        candidates = list(id_facts)
        if self._focus is not None:
            names = id_names(self._tools[self._focus])
            taken = [(k, v) for k, v in id_facts if any(same_noun(k, n) for n in names)]
            candidates = taken or candidates
            nouns = tool_nouns(self._focus)
            named = [(k, v) for k, v in candidates if kind_of(k) in nouns]
            if named:
                return named[0]
        others = [(k, v) for k, v in candidates if kind_of(k) not in OWNER_KINDS]
        return (others or candidates)[0]

    # ------------------------------------------------------------------ state helpers

    def _fresh(self, entity_id: str, key: str | None, *, past: bool = False) -> Entity:
        if not past:
            return Entity(entity_id, key, None, self._moment(), self._moment())
        draw = spread(self._seed, "entity", entity_id)
        created = self._now - timedelta(days=3 + draw % 37, minutes=(draw >> 8) % 600)
        return Entity(entity_id, key, None, created,
                      created + timedelta(hours=1 + (draw >> 16) % 47))

    def _hold(self, entity: Entity) -> Entity:
        if entity.id:
            self._entities[entity.id] = entity
            self._known.add(entity.id)
            self._scenario.note(entity.id)
        return entity

    def _apply_state(self, entity: Entity) -> Entity:
        """Make the person's entity show the world state the rollout is built for."""
        if self._state == "already_acted_on":
            entity.status = (self._rules.target(self._acting) if self._acting else None) \
                or self._already
            entity.mutated = True
        elif self._state == "partially_completed":
            entity.partial = entity.mutated = True
        elif self._state == "duplicate":
            entity.duplicate_of = ""
            entity.mutated = True
            if entity.id:
                self._make_sibling(entity)
        elif self._focus is not None:  # a record the focal action can act on
            entity.status = self._rules.usable(entity.kind, self._focus)
        return entity

    def _make_sibling(self, entity: Entity) -> None:
        rng = seeded(self._seed, "sibling", entity.id)
        sibling = new_identifier("", rng, self._known, like=entity.id)
        entity.duplicate_of = sibling
        twin = self._hold(Entity(sibling, entity.key, None, entity.created_at,
                                  entity.updated_at))
        twin.kind = entity.kind
        if entity.kind:
            self._scenario.hold(entity.kind, sibling)

    def _ensure_id(self, tool: ToolSpec, entity: Entity) -> None:
        """Name the person's entity the first time a tool shows it (facts named none)."""
        if entity.id:
            return
        entity.key = self._id_key(tool)
        entity.kind = kind_of(entity.key or "") or entity.kind
        entity.id = self._new_id(tool, "subject")
        self._hold(entity)
        if entity.kind and entity.kind not in OWNER_KINDS:
            self._scenario.hold(entity.kind, entity.id)
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
        return new_identifier(tool.name, seeded(self._seed, tool.name, "id", draw), self._known,
                              like=like)

    def _id_key(self, tool: ToolSpec) -> str | None:
        """The key a tool's records carry their id under: the exemplars' (``order_id``),
        else the identifier argument the tools take for this tool's noun (``booking_ref``
        for ``create_booking`` when ``get_booking`` takes it), else None (``id``)."""
        if tool.name in self._id_keys:
            return self._id_keys[tool.name]
        template = self._templates[tool.name]
        key = template.id_key if template is not None else None
        nouns = tool_nouns(tool.name)
        for other in self._tools.values() if key is None else ():
            key = next((name for name in id_names(other)
                        if subject_noun("", name).rstrip("s") in nouns), None)
            if key is not None:
                break
        self._id_keys[tool.name] = key
        return key

    def _owner(self, tool: ToolSpec) -> Entity | None:
        """The person's own record (a user, a customer), made when first asked for."""
        template = self._templates[tool.name]
        kind = kind_of(template.id_key or "") if template is not None else None
        nouns = [w for w in (x.rstrip("s") for x in words(tool.name)) if w in OWNER_KINDS]
        owner_kind = self._scenario.owner_kind or (
            kind if kind in OWNER_KINDS else nouns[0] if nouns else None)
        if self._scenario.owner_id is None:
            if owner_kind is None or (kind is not None and kind != owner_kind):
                return None
            like = (template.id_value or template.text or "") if template is not None else ""
            self._scenario.owner(owner_kind, like.strip() or f"{owner_kind[:1].upper()}1001")
        entity = self._entities.get(self._scenario.owner_id or "")
        if entity is not None and entity.kind is None:
            entity.kind = self._scenario.owner_kind
        return entity

    def _subject(self, tool: str, ids: Sequence[tuple[str, str]], kind: str,
                 person: bool | None) -> Entity | None:
        """The entity a call is about: the identifier naming the tool's noun, else one
        that is not the person's own, else the first; without identifiers, the person
        when the call describes them (their record of the kind the tool shows), the
        person's entity when the facts name no identifier, else nothing (a search, or an
        action about no record)."""
        if not ids:
            if person:  # the person's own record, or theirs of the kind the tool shows
                template = self._templates[tool]
                shows = kind_of(template.id_key or "") if template is not None else None
                nouns = tool_nouns(tool)
                primary = self._primary
                if shows in OWNER_KINDS or (shows is None and nouns & OWNER_KINDS):
                    return self._owner(self._tools[tool]) or primary
                if primary is not None and (self._idless or primary.kind == shows):
                    return primary
                return self._owner(self._tools[tool]) or primary
            if self._idless and (kind != "create" or self._primary is not None):
                return self._primary
            return None
        nouns = tool_nouns(tool, skip=1)
        owner = self._scenario.owner_id
        _, value = next(((n, v) for n, v in ids if kind_of(n) in nouns),
                        next(((n, v) for n, v in ids if v != owner), ids[0]))
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
            target = (self._focus or self._first_tool) if fault.tool == "*" else fault.tool
            if index not in self._fired and target == tool and fault.on_call == count:
                self._fired.add(index)
                return fault
        return None

    def _fault(self, tool: ToolSpec, condition: str) -> Outcome:
        if condition == "timeout":
            return refusal("timeout", f"The {tool.name} service did not answer within 30 "
                            "seconds.", retryable=True)
        if condition == "permission_denied":
            return refusal("permission_denied",
                            f"This account is not allowed to use {tool.name}.")
        if condition == "not_found":
            return refusal("not_found", f"No {subject_noun(tool.name, None)} matches this "
                            "request.")
        return Outcome("error", {"error": "internal_error", "code": 500,
                                  "message": f"The {tool.name} service failed unexpectedly."})

    def _event(self, call: ToolCall, outcome: Outcome, spoil: str | None) -> WorldEvent:
        status, payload = outcome.status, outcome.payload
        if status == "ok" and spoil == "stale_result" and isinstance(payload, dict):
            payload, status = self._staled(payload), "stale_result"
        if status == "ok":
            collect_ids(payload, self._known)
        text = payload if isinstance(payload, str) else orjson.dumps(payload).decode()
        if spoil == "malformed_result":  # cut before the closing brace: never valid JSON
            text, status = text[: max(1, len(text) * 3 // 5)], "malformed_result"
        mutated = outcome.mutated and self._needs_effect
        self._fired_mutation = self._fired_mutation or mutated
        return WorldEvent(call_id=call.id, tool=call.name, arguments=call.arguments,
                          status=status, result=text, effect=outcome.effect,
                          entity_id=outcome.entity_id or None, mutated=mutated)


@dataclass(frozen=True)
class _Toolset:
    """What every world of a run derives from the same tools, derived once."""

    templates: Mapping[str, Template | None]
    rules: StatusRules
    latest: date | None  # production's clock: the latest date in any exemplar


@functools.lru_cache(maxsize=64)
def _toolset(tools: tuple[tuple[str, tuple[str, ...]], ...]) -> _Toolset:
    """The templates, status rules and clock of tools given as (name, exemplars)."""
    templates = {name: parse_template(exemplars) for name, exemplars in tools}
    latest = max((day for day in map(latest_date, templates.values()) if day is not None),
                 default=None)
    return _Toolset(templates, StatusRules(templates), latest)


def _fact_key(key: str) -> str:
    """A fact's key without the counter that tells two of a kind apart (``order_id_2``)."""
    return re.sub(r"_\d+$", "", key)


__all__ = ["FAULT_CONDITIONS", "WORLD_STATES", "World", "is_id_like", "load_tool_file",
           "looks_like_placeholder", "sample_facts", "tool_from_structure", "tool_kind"]
