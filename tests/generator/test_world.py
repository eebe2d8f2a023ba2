"""The simulated world: deterministic, remembers, says no, and reads like production.

The processor's own classifiers (``processor.axes``) serve as the oracle for what a result
*shows*: a world built for ``already_acted_on`` must produce results the processor reads as
``already_acted_on``, a scheduled ``timeout`` a step it reads as ``timeout``.
"""

from __future__ import annotations

import json
import random
import re
from datetime import date, time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.errors import ToolSchemaError
from generator.records import Fault, ToolCall, ToolSpec, WorldEvent
from generator.world import (
    FAULT_CONDITIONS,
    World,
    is_id_like,
    load_tool_file,
    looks_like_placeholder,
    sample_facts,
    tool_from_structure,
    tool_kind,
)
from processor.axes import situate, step_condition
from processor.records import Step

_ORDER = {"type": "string", "description": "The order's identifier"}
LOOKUP = ToolSpec("lookup_order", "Look up an order.", {
    "type": "object", "properties": {"order_id": _ORDER}, "required": ["order_id"]},
    exemplars=(
        '{"order_id": "A-1001", "status": "shipped", "carrier": "UPS", "tracking_number": '
        '"1Z3F0A22", "total": 89.5, "items": [{"sku": "TR-22", "qty": 1}], '
        '"placed_at": "2025-06-02", "gift": false}',
        '{"order_id": "A-1002", "status": "processing", "carrier": "FedEx", "total": 19.0, '
        '"placed_at": "2025-06-01", "gift": true}',
        '{"error": "not_found", "message": "No order A-9"}'))
REFUND = ToolSpec("issue_refund", "Refund an order.", {
    "type": "object", "properties": {
        "order_id": _ORDER, "amount": {"type": "number"},
        "reason": {"type": "string", "enum": ["damaged", "wrong_item", "other"]}},
    "required": ["order_id", "amount"]})
CREATE = ToolSpec("create_ticket", "Open a support ticket.", {
    "type": "object", "properties": {
        "subject": {"type": "string"}, "email": {"type": "string", "format": "email"}},
    "required": ["subject", "email"]})
GET_TICKET = ToolSpec("get_ticket", "Read a ticket.", {
    "type": "object", "properties": {"ticket_id": {"type": "string"}},
    "required": ["ticket_id"]})
DELETE_TICKET = ToolSpec("delete_ticket", "Delete a ticket.", {
    "type": "object", "properties": {"ticket_id": {"type": "string"}},
    "required": ["ticket_id"]})
SEARCH = ToolSpec("search_orders", "Find orders by email.", {
    "type": "object", "properties": {"email": {"type": "string", "format": "email"}},
    "required": ["email"]})
ADDRESS = ToolSpec("update_address", "Change the delivery address.", {
    "type": "object", "additionalProperties": False, "properties": {
        "order_id": _ORDER, "address": {"type": "object", "properties": {
            "line1": {"type": "string"}, "city": {"type": "string"}},
            "required": ["line1", "city"]}},
    "required": ["order_id", "address"]})
TRACK = ToolSpec("track_shipment", "Where a parcel is.", {
    "type": "object", "properties": {"tracking_number": {"type": "string"}},
    "required": ["tracking_number"]})
TOOLS = (LOOKUP, REFUND, CREATE, GET_TICKET, DELETE_TICKET, SEARCH, ADDRESS, TRACK)
FACTS = {"order_id": "ORD-4821", "email": "ana.k@mailbox.test"}


def make(state: str = "entity_exists", seed: int = 7, **kwargs: Any) -> World:
    return World(TOOLS, seed=seed, world_state=state, facts=kwargs.pop("facts", FACTS),
                 **kwargs)


def ask(world: World, tool: str, arguments: Any, call_id: str = "c1") -> WorldEvent:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return world.call(ToolCall(call_id, tool, text))


def body(event: WorldEvent) -> Any:
    return json.loads(event.result)


def as_step(event: WorldEvent) -> Step:
    return Step(tool=event.tool, call_id=event.call_id, arguments=event.arguments,
                result=event.result, status="ok", error=None, bound_by="call_id",
                span_id=None)


REFUND_ARGS = {"order_id": "ORD-4821", "amount": 20.0}

# --------------------------------------------------------------------------- determinism

_CALLS = st.lists(st.sampled_from([
    ("lookup_order", {"order_id": "ORD-4821"}), ("issue_refund", REFUND_ARGS),
    ("create_ticket", {"subject": "Broken lid", "email": "ana.k@mailbox.test"}),
    ("search_orders", {"email": "ana.k@mailbox.test"}), ("lookup_order", {"order_id": "X-1"}),
    ("lookup_order", "{not json"), ("nope", {}),
]), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(calls=_CALLS, seed=st.integers(0, 2**31), state=st.sampled_from(
    ["entity_exists", "missing", "already_acted_on", "duplicate", "partially_completed"]))
def test_same_seed_and_calls_give_the_same_events(calls: list[tuple[str, Any]], seed: int,
                                                   state: str) -> None:
    first, second = make(state, seed), make(state, seed)
    assert [ask(first, *call) for call in calls] == [ask(second, *call) for call in calls]
    assert first.known_ids == second.known_ids


def test_another_seed_draws_other_ids_and_values() -> None:
    events = {}
    for seed in (1, 2):
        world = make(seed=seed)
        ticket = {"subject": "Lid", "email": "a.b@mailbox.test"}
        events[seed] = (ask(world, "create_ticket", ticket),
                        ask(world, "lookup_order", {"order_id": "ORD-4821"}))
    assert events[1][0].entity_id != events[2][0].entity_id
    assert body(events[1][1])["tracking_number"] != body(events[2][1])["tracking_number"]


# --------------------------------------------------------------------------- memory


def test_a_created_record_is_found_by_later_reads() -> None:
    world = make()
    created = ask(world, "create_ticket", {"subject": "Lid", "email": "ana.k@mailbox.test"})
    assert (created.status, created.effect) == ("ok", "created")
    ticket = created.entity_id
    assert ticket and ticket in world.known_ids and ticket in created.result
    read = ask(world, "get_ticket", {"ticket_id": ticket})
    assert read.status == "ok" and read.entity_id == ticket
    assert body(read)["subject"] == "Lid" and body(read)["status"] == "created"


def test_a_deleted_record_is_not_found_afterwards() -> None:
    world = make()
    ticket = ask(world, "create_ticket", {"subject": "Lid", "email": "ana.k@mailbox.test"})
    deleted = ask(world, "delete_ticket", {"ticket_id": ticket.entity_id})
    assert (deleted.status, deleted.effect) == ("ok", "deleted")
    for tool in ("get_ticket", "delete_ticket"):
        again = ask(world, tool, {"ticket_id": ticket.entity_id})
        assert again.status == "not_found" and body(again)["error"] == "not_found"


def test_the_same_update_twice_is_refused_as_already_done() -> None:
    world = make()
    first = ask(world, "issue_refund", REFUND_ARGS)
    assert (first.status, first.effect, body(first)["status"]) == ("ok", "updated", "refunded")
    second = ask(world, "issue_refund", REFUND_ARGS)
    assert (second.status, second.effect, second.entity_id) == ("refused", None, "ORD-4821")
    assert body(second)["status"] == "already_refunded"
    assert body(second)["message"].count("ORD-4821") == 1 and "already refunded" in \
        body(second)["message"]
    assert body(ask(world, "lookup_order", {"order_id": "ORD-4821"}))["status"] == "refunded"
    other = ask(world, "update_address", {"order_id": "ORD-4821",
                                         "address": {"line1": "4 Mill Court", "city": "Graz"}})
    assert other.effect == "updated"
    assert body(ask(world, "lookup_order", {"order_id": "ORD-4821"}))["address"]["city"] == "Graz"


@pytest.mark.parametrize(("name", "kind"), [
    ("get_order", "read"), ("lookup_order", "read"), ("check_cancel_status", "read"),
    ("create_ticket", "create"), ("book_table", "create"), ("placeOrder", "create"),
    ("cancel_order", "update"), ("issue_refund", "update"), ("orders.cancel", "update"),
    ("delete_ticket", "delete"), ("remove_item", "delete"), ("frobnicate", "read"),
])
def test_tool_kind_reads_the_verb(name: str, kind: str) -> None:
    assert tool_kind(name) == kind


# --------------------------------------------------------------------------- refusals


def test_unknown_tool_lists_the_tools() -> None:
    event = ask(make(), "refund_everything", {})
    assert event.status == "unknown_tool"
    assert body(event)["available_tools"] == sorted(tool.name for tool in TOOLS)


@pytest.mark.parametrize(("arguments", "needle"), [
    ('{"order_id": "ORD-4821"', "not a JSON object"),
    ('["ORD-4821"]', "not an object"),
    ({"amount": 3.0}, "order_id"),
    ({"order_id": "ORD-4821", "amount": "ten"}, "must be number"),
    ({"order_id": "ORD-4821", "amount": True}, "must be number"),
    ({"order_id": "ORD-4821", "amount": 3, "reason": "bored"}, "damaged, wrong_item, other"),
])
def test_bad_arguments_are_rejected_with_the_problem(arguments: Any, needle: str) -> None:
    event = ask(make(), "issue_refund", arguments)
    assert event.status == "rejected" and event.effect is None
    assert body(event)["error"] == "rejected" and needle in body(event)["message"]


def test_nested_and_unknown_arguments_are_rejected() -> None:
    world = make()
    missing = ask(world, "update_address", {"order_id": "ORD-4821", "address": {"line1": "x 4"}})
    assert missing.status == "rejected" and "address.city" in body(missing)["message"]
    extra = ask(world, "update_address", {"order_id": "ORD-4821", "colour": "red",
                                          "address": {"line1": "4 Mill Court", "city": "Graz"}})
    assert extra.status == "rejected" and "colour" in body(extra)["message"]


def test_enum_rejection_lists_allowed_values() -> None:
    event = ask(make(), "issue_refund", {"order_id": "ORD-4821", "amount": 3, "reason": "x"})
    assert body(event)["allowed"] == ["damaged", "wrong_item", "other"]


PLACEHOLDERS = ["first name", "user@example.com", "<order id>", "string", "xxx", "12345",
                "john doe", "your_order_id", "order_id", "order id", "N/A", "n/a", "none",
                "{{order_id}}", "ORD-XXXX", "YYYY-MM-DD", "The order's identifier", "...",
                "0000", "test", "", "  ", "<ORDER_ID>", "[order id]", "e.g. ORD-1234",
                "your order number", "123456789", "aaaa", "${order_id}"]


@settings(max_examples=60, deadline=None)
@given(value=st.sampled_from(PLACEHOLDERS))
def test_placeholders_are_refused_with_a_hint(value: str) -> None:
    event = ask(make(), "lookup_order", {"order_id": value})
    assert event.status == "refused", value
    message = body(event)["message"]
    assert "looks like" in message and "ask the person" in message
    assert "ORD-4821" not in message  # the hint shows the shape, never the value


@pytest.mark.parametrize("value", ["user@example.com", "john doe", "test@test.com"])
def test_placeholders_in_any_argument_are_refused(value: str) -> None:
    event = ask(make(), "create_ticket", {"subject": "Lid", "email": value}
                if "@" in value else {"subject": value, "email": "ana.k@mailbox.test"})
    assert event.status == "refused"


_REAL_IDS = st.from_regex(r"\A[A-HJ-NP-W]{1,4}-[1-9][0-9]{3,6}\Z")
_REAL_WORDS = st.sampled_from(["Broken lid", "Hana Kovac", "Refund for the kettle",
                               "wrong size", "42 Elm Street", "Porto", "ana.k@mailbox.test",
                               "jo.smith@gmail.com", "A-1001", "1Z3F0A22", "2025-06-02"])


@settings(max_examples=80, deadline=None)
@given(value=st.one_of(_REAL_IDS, _REAL_WORDS))
def test_real_looking_values_are_never_placeholders(value: str) -> None:
    assert not looks_like_placeholder(value, "order_id", "The order's identifier")
    world = make(facts={"order_id": value, "email": "ana.k@mailbox.test"})
    assert ask(world, "lookup_order", {"order_id": value}).status == "ok"


def test_unknown_identifiers_are_not_found_but_shown_ones_are() -> None:
    world = make()
    event = ask(world, "lookup_order", {"order_id": "ORD-4822"})
    assert event.status == "not_found" and "ORD-4822" in body(event)["message"]
    assert ask(world, "track_shipment", {"tracking_number": "1Z9999"}).status == "not_found"
    tracking = body(ask(world, "lookup_order", {"order_id": "ORD-4821"}))["tracking_number"]
    assert tracking in world.known_ids
    assert ask(world, "track_shipment", {"tracking_number": tracking}).status == "ok"


# ------------------------------------------------------------------------- identifiers, any name

_STR = {"type": "string"}
BOOK = ToolSpec("create_booking", "Book a flight for a passenger; returns a booking reference.", {
    "type": "object", "properties": {
        "flight_id": _STR, "passenger": {"type": "object", "properties": {
            "first_name": _STR, "last_name": _STR, "email": {"type": "string", "format": "email"}},
            "required": ["first_name", "last_name", "email"]},
        "seats": {"type": "integer", "minimum": 1, "maximum": 9}},
    "required": ["flight_id", "passenger"]})
GET_BOOKING = ToolSpec("get_booking", "Look up a booking by its reference.", {
    "type": "object", "properties": {"booking_ref": _STR}, "required": ["booking_ref"]})
CANCEL_BOOKING = ToolSpec("cancel_booking", "Cancel a booking.", {
    "type": "object", "properties": {"booking_ref": _STR, "reason": {
        "type": "string", "enum": ["schedule_change", "illness", "other"]}},
    "required": ["booking_ref", "reason"]})
FIND_BOOKING = ToolSpec("find_booking", "Find a booking by reference or email.", {
    "type": "object", "properties": {"bookingRef": _STR, "email": {
        "type": "string", "format": "email"}, "cabin": {"enum": ["economy", "business"]}}})
PING = ToolSpec("ping", "Health check, no arguments.", {"type": "object", "properties": {}})
FLIGHT_TOOLS = (BOOK, GET_BOOKING, CANCEL_BOOKING, FIND_BOOKING, PING)
PASSENGER = {"first_name": "Ana", "last_name": "Costa", "email": "ana.costa@mailbox.test"}


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("booking_ref", None, True), ("bookingRef", None, True), ("reference", None, True),
    ("payment_reference", None, True), ("pnr", None, True), ("PNR", None, True),
    ("sku", None, True), ("item_sku", None, True), ("account_no", None, True),
    ("orderNum", None, True), ("confirmation", None, True), ("confirmation_code", None, True),
    ("ticket", None, True), ("record_locator", None, True), ("order_id", None, True),
    ("license_key", "LK-4821-XY", True), ("license_key", "blue", False),
    ("license_key", None, False), ("api_key", "sk-4821abcd", False),
    ("idempotency_key", "4f1c-7719", False), ("zip_code", None, False),
    ("phone_no", None, False), ("phoneNumber", None, False), ("page_num", None, False),
    ("country_code", None, False), ("house_number", None, False), ("reason", None, False),
    ("email", None, False), ("referee", None, False), ("ticket", "T-4821", True),
    ("ticket", "My printer is broken", False)])
def test_identifier_names(name: str, value: str | None, expected: bool) -> None:
    assert is_id_like(name, {"type": "string"}, value) is expected
    assert not is_id_like(name, {"type": "string", "enum": ["a", "b"]}, value)


def test_unknown_references_are_not_found_whatever_the_argument_is_called() -> None:
    world = World(FLIGHT_TOOLS, seed=1, world_state="entity_exists",
                  facts={"booking_ref": "BK-48213"})
    found = ask(world, "get_booking", {"booking_ref": "BK-48213"})
    assert found.status == "ok" and body(found)["booking_ref"] == "BK-48213"
    assert ask(world, "get_booking", {"booking_ref": "BK-99817"}).status == "not_found"
    assert ask(world, "find_booking", {"bookingRef": "BK-99817"}).status == "not_found"
    assert ask(world, "find_booking", {"bookingRef": "BK-48213"}).status == "ok"
    cancel = ask(world, "cancel_booking", {"booking_ref": "ZZ-40716", "reason": "other"})
    assert cancel.status == "not_found" and cancel.effect is None
    tickets = ToolSpec("getTicket", "", {"type": "object", "properties": {"ticketNo": _STR}})
    world = World([tickets], seed=2, world_state="entity_exists", facts={"ticketNo": "T-58213"})
    assert ask(world, "getTicket", {"ticketNo": "T-58213"}).status == "ok"
    assert ask(world, "getTicket", {"ticketNo": "T-58214"}).status == "not_found"


def test_a_created_booking_is_found_by_the_reference_it_returned() -> None:
    world = World(FLIGHT_TOOLS, seed=3, world_state="entity_exists",
                  facts={"flight_id": "FLI-64442"})
    created = ask(world, "create_booking", {"flight_id": "FLI-64442", "passenger": PASSENGER})
    reference = body(created)["booking_ref"]  # named the way get_booking names it
    assert created.entity_id == reference and re.fullmatch(r"[A-Z]+-\d{5}", reference)
    for shown in (ask(world, "get_booking", {"booking_ref": reference}),
                  ask(world, "find_booking", {"bookingRef": reference})):
        assert shown.status == "ok" and shown.entity_id == reference
        assert body(shown)["passenger"] == PASSENGER and body(shown)["flight_id"] == "FLI-64442"
    # the flight's id is held, but it names no booking
    assert ask(world, "get_booking", {"booking_ref": "FLI-64442"}).status == "not_found"
    cancelled = ask(world, "cancel_booking", {"booking_ref": reference, "reason": "other"})
    assert (cancelled.status, cancelled.entity_id) == ("ok", reference)
    assert body(ask(world, "get_booking", {"booking_ref": reference}))["status"] == "cancelled"


def test_a_lookup_with_none_of_its_identifiers_is_rejected() -> None:
    """Observed tools require their identifiers; a supplied tool whose identifier is
    optional still needs something to find the record by (an email, not an enum)."""
    inventory = tool_from_structure("check_inventory", '{"sku": "VARCHAR", "size": "VARCHAR"}')
    assert inventory.parameters["required"] == ["sku"]
    world = World([inventory, *FLIGHT_TOOLS], seed=1, world_state="entity_exists",
                  facts={"sku": "TRS-940"})
    for tool, arguments in (("check_inventory", {}), ("check_inventory", {"size": "10"}),
                            ("find_booking", {}), ("find_booking", {"cabin": "economy"})):
        refused = ask(world, tool, arguments)
        assert refused.status == "rejected", (tool, arguments, refused.result)
        assert body(refused)["missing"] in (["sku"], ["bookingRef"])
    assert ask(world, "check_inventory", {"sku": "TRS-940", "size": "10"}).status == "ok"
    # an email finds a booking only when it is the person's: this person gave none
    assert ask(world, "find_booking", {"email": "ana.k@mailbox.test"}).status == "not_found"
    world = World([inventory, *FLIGHT_TOOLS], seed=1, world_state="entity_exists",
                  facts={"sku": "TRS-940", "email": "ana.k@mailbox.test"})
    assert ask(world, "find_booking", {"email": "ana.k@mailbox.test"}).status == "ok"
    assert ask(world, "find_booking", {"email": "bo.l@mailbox.test"}).status == "not_found"
    health = body(ask(world, "ping", {}))
    assert health["status"] == "ok" and "TRS-940" not in json.dumps(health)


# --------------------------------------------------------------------------- world states


def _situation(events: list[WorldEvent]) -> str:
    return situate(first_ask="refund please", user_turns=[], steps=[as_step(e) for e in events],
                   policy_rule="x").world_state


@pytest.mark.parametrize("state", ["entity_exists", "missing", "already_acted_on",
                                   "duplicate", "partially_completed", "unknown"])
def test_each_world_state_reads_as_itself(state: str) -> None:
    world = make(state)
    events = [ask(world, "lookup_order", {"order_id": "ORD-4821"}),
              ask(world, "issue_refund", REFUND_ARGS)]
    expected = "entity_exists" if state == "unknown" else state
    assert _situation(events) == expected
    if state == "missing":
        assert {e.status for e in events} == {"not_found"}
        assert "ORD-4821" not in world.known_ids
    else:
        assert "ORD-4821" in world.known_ids


def test_already_acted_on_answers_every_action_so() -> None:
    """Reads show the record as production would (refunded); acting again is refused."""
    world = make("already_acted_on")
    read = ask(world, "lookup_order", {"order_id": "ORD-4821"})
    assert body(read)["status"] == "refunded" and read.mutated
    for _ in range(2):
        event = ask(world, "issue_refund", REFUND_ARGS)
        assert (event.status, event.effect, body(event)["status"]) == (
            "refused", None, "already_refunded")
        assert "already refunded" in body(event)["message"] and event.mutated
    assert world.mutation_fired is True


def test_duplicate_shows_two_matching_records() -> None:
    world = make("duplicate")
    record = body(ask(world, "lookup_order", {"order_id": "ORD-4821"}))
    assert record["duplicate"] is True and len(record["matching_records"]) == 2
    sibling = record["matching_records"][1]
    assert sibling != "ORD-4821" and re.fullmatch(r"ORD-\d{4}", sibling)
    assert ask(world, "lookup_order", {"order_id": sibling}).status == "ok"
    listing = body(ask(world, "search_orders", {"email": "ana.k@mailbox.test"}))
    assert listing["count"] == 2 and listing["duplicate"] is True


def test_a_partial_action_completes_on_the_second_try() -> None:
    world = make("partially_completed")
    assert body(ask(world, "lookup_order", {"order_id": "ORD-4821"}))["status"] == "partial"
    first, second, third = (ask(world, "issue_refund", REFUND_ARGS) for _ in range(3))
    assert (body(first)["status"], body(first)["completed_items"]) == ("partial", 2)
    assert (body(second)["status"], second.effect) == ("refunded", "updated")
    assert body(third)["status"] == "already_refunded"


def test_missing_world_without_identifiers_finds_nothing() -> None:
    world = make("missing", facts={"email": "ana.k@mailbox.test"})
    assert ask(world, "search_orders", {"email": "ana.k@mailbox.test"}).status == "not_found"
    created = ask(world, "create_ticket", {"subject": "Lid", "email": "ana.k@mailbox.test"})
    assert created.status == "ok"


def test_without_identifier_facts_the_state_names_the_persons_record() -> None:
    world = make("already_acted_on", facts={"email": "ana.k@mailbox.test"})
    listing = body(ask(world, "search_orders", {"email": "ana.k@mailbox.test"}))
    order = listing["results"][0]["order_id"]  # the key lookup_order takes
    assert listing["results"][0]["status"] == "refunded" and order in world.known_ids
    assert body(ask(world, "lookup_order", {"order_id": order}))["status"] == "refunded"
    refused = ask(world, "issue_refund", {"order_id": order, "amount": 5.0})
    assert body(refused)["status"] == "already_refunded" and refused.mutated


def test_stale_world_reads_carry_old_data() -> None:
    fresh = body(ask(make(seed=3), "lookup_order", {"order_id": "ORD-4821"}))
    stale = body(ask(make(seed=3, stale=True), "lookup_order", {"order_id": "ORD-4821"}))
    assert stale["stale"] is True and "stale" not in fresh
    assert stale["updated_at"] < fresh["updated_at"]
    action = body(ask(make(seed=3, stale=True), "issue_refund", REFUND_ARGS))
    assert "stale" not in action  # only reads come from the stale cache


# --------------------------------------------------------------------------- faults


@pytest.mark.parametrize("condition", FAULT_CONDITIONS)
def test_each_fault_fires_once_on_its_call(condition: str) -> None:
    world = make(faults=[Fault("lookup_order", condition, on_call=2)])
    events = [ask(world, "lookup_order", {"order_id": "ORD-4821"}, f"c{i}") for i in range(3)]
    assert [e.status for e in events] == ["ok", condition, "ok"]
    assert step_condition(as_step(events[1])) == condition
    assert step_condition(as_step(events[0])) == "success"
    if condition == "malformed_result":
        with pytest.raises(json.JSONDecodeError):
            json.loads(events[1].result)
    else:
        answer = body(events[1])
        assert answer.get("stale") is True if condition == "stale_result" else "error" in answer


def test_a_star_fault_hits_the_first_tool_called() -> None:
    world = make(faults=[Fault("*", "timeout", on_call=1)])
    first = ask(world, "search_orders", {"email": "ana.k@mailbox.test"})
    assert first.status == "timeout" and first.effect is None
    assert ask(world, "lookup_order", {"order_id": "ORD-4821"}).status == "ok"
    assert ask(world, "search_orders", {"email": "ana.k@mailbox.test"}).status == "ok"


def test_a_timeout_on_an_action_changes_nothing() -> None:
    world = make(faults=[Fault("issue_refund", "timeout", on_call=1)])
    assert ask(world, "issue_refund", REFUND_ARGS).status == "timeout"
    assert body(ask(world, "lookup_order", {"order_id": "ORD-4821"}))["status"] != "refunded"
    assert ask(world, "issue_refund", REFUND_ARGS).effect == "updated"


def test_unknown_fault_conditions_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault condition 'meltdown'"):
        make(faults=[Fault("lookup_order", "meltdown")])
    make(faults=[Fault("lookup_order", "success")])  # a tool-condition value, not a fault


# --------------------------------------------------------------------------- shapes


def test_results_take_the_exemplars_shape_with_new_values() -> None:
    exemplar = json.loads(LOOKUP.exemplars[0])
    for seed in range(20):
        record = body(ask(make(seed=seed), "lookup_order", {"order_id": "ORD-4821"}))
        for key, value in exemplar.items():
            assert type(record[key]) is type(value), key
        assert record["order_id"] == "ORD-4821"
        assert record["carrier"] in ("UPS", "FedEx")
        assert record["status"] in ("shipped", "processing")
        assert record["tracking_number"] != exemplar["tracking_number"]
        assert re.fullmatch(r"\d[A-Z]\d[A-Z]\d[A-Z]\d\d", record["tracking_number"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", record["placed_at"])
        assert set(record["items"][0]) == {"sku", "qty"}
        assert "error" not in record


CANCEL = ToolSpec("cancel_order", "Cancel an order.", {
    "type": "object", "properties": {"order_id": _ORDER}, "required": ["order_id"]},
    exemplars=(
        '{"status": "already_cancelled", "message": "Order A-61789 was handled on 2025-06-03."}',
        '{"cancellation": "C-451698", "status": "cancelled"}',
        '{"status": "cancelled", "cancellation": "C-451698", "duplicate": true}'))


def _day(stamp: str) -> str:
    return stamp[:10]


@pytest.mark.parametrize("state", ["entity_exists", "already_acted_on", "duplicate"])
def test_each_kind_of_answer_takes_its_own_exemplar(state: str) -> None:
    """A normal answer never carries the "already handled" exemplar's message, and that
    message, when it is the answer, names the record itself and its real date."""
    for seed in range(25):
        world = World([LOOKUP, CANCEL], seed=seed, world_state=state,
                      facts={"order_id": "A-40614"})
        answers = [body(ask(world, "cancel_order", {"order_id": "A-40614"})) for _ in range(2)]
        normal = [a for a in answers if not a["status"].startswith("already")]
        assert normal or state == "already_acted_on"
        for answer in normal:
            assert "message" not in answer and answer["status"] == "cancelled"
            assert re.fullmatch(r"C-\d{6}", answer["cancellation"])
            assert answer["cancellation"] != "C-451698"
        for answer in answers[len(normal):]:
            assert answer["status"] == "already_cancelled" and "cancellation" not in answer
            assert answer["message"] == ("Order A-40614 was handled on "
                                         f"{_day(answer['updated_at'])}.")
        assert "A-61789" not in json.dumps(answers)


def test_free_text_agrees_with_its_record() -> None:
    refund = ToolSpec("issue_refund", "Refund an order.", REFUND.parameters, exemplars=(
        '{"refund": "R-399868", "amount": 49.99, "status": "refunded", "message": '
        '"Refund R-399868 of 49.99 USD for order A-19534 issued on 2025-06-03 at 14:05; '
        '2 items."}',))
    for seed in range(25):
        world = World([refund], seed=seed, world_state="entity_exists",
                      facts={"order_id": "A-40614"})
        record = body(ask(world, "issue_refund", {"order_id": "A-40614", "amount": 20.0}))
        assert re.fullmatch(r"R-\d{6}", record["refund"]) and record["amount"] == 20.0
        stamp = record["updated_at"]
        assert record["message"] == (f"Refund {record['refund']} of 20.0 USD for order "
                                     f"A-40614 issued on {stamp[:10]} at {stamp[11:16]}; "
                                     "2 items.")


_SENTENCES = st.sampled_from(["Order {id} was handled on {day}.", "Shipped {day}T{clock}Z",
                              "Window {day} to {day}, slot {clock}", "Note for {id}: {day}"])


@settings(max_examples=60, deadline=None)
@given(sentence=_SENTENCES, day=st.dates(date(2000, 1, 1), date(2030, 12, 31)),
       clock=st.times().map(lambda t: t.strftime("%H:%M")), seed=st.integers(0, 2**31),
       ident=st.from_regex(r"[A-Z]{1,3}-[1-9][0-9]{3,6}", fullmatch=True))
def test_dates_in_results_stay_real_dates(sentence: str, day: date, clock: str, seed: int,
                                          ident: str) -> None:
    text = sentence.format(id=ident, day=day.isoformat(), clock=clock)
    tool = ToolSpec("lookup_order", "", LOOKUP.parameters, exemplars=(json.dumps(
        {"order_id": "A-1001", "note": text, "history": [{"note": text, "at": text[-16:]}]}),))
    world = World([tool], seed=seed, world_state="entity_exists", facts={"order_id": "A-40614"})
    result = ask(world, "lookup_order", {"order_id": "A-40614"}).result
    for found in re.findall(r"(?<!\d)\d{4}-\d\d-\d\d(?!\d)", result):
        date.fromisoformat(found)
    for found in re.findall(r"(?<![\d:])\d\d:\d\d(?![\d:])", result):
        time.fromisoformat(found)
    assert ident not in result


def test_without_exemplars_a_small_generic_record() -> None:
    world = make()
    record = body(ask(world, "get_ticket", {"ticket_id": body(ask(
        world, "create_ticket", {"subject": "Lid", "email": "ana.k@mailbox.test"}))["ticket_id"]}))
    assert {"ticket_id", "status", "created_at", "updated_at"} <= set(record)


def test_no_result_contains_a_harness_word() -> None:
    world = make("duplicate", faults=[Fault("*", "stale_result", 1)])
    texts = [ask(world, *call).result for call in [
        ("lookup_order", {"order_id": "ORD-4821"}), ("issue_refund", REFUND_ARGS),
        ("search_orders", {"email": "ana.k@mailbox.test"}), ("lookup_order", {"order_id": "x"}),
        ("create_ticket", {"subject": "Lid", "email": "ana.k@mailbox.test"})]]
    assert world.internals()
    assert not [w for w in world.internals() for text in texts if w in text.lower()]


# --------------------------------------------------------------------------- facts


def test_sample_facts_reshapes_observed_values() -> None:
    rng = random.Random(5)
    facts = [sample_facts(REFUND, rng, ['{"order_id": "A-1001", "amount": 20.5}'])
             for _ in range(20)]
    for fact in facts:
        assert re.fullmatch(r"A-[1-9]\d{3}", fact["order_id"]) and fact["order_id"] != "A-1001"
        assert set(fact) == {"order_id", "amount"}
    assert len({fact["order_id"] for fact in facts}) > 10


def test_facts_for_references_are_identifiers_and_objects_stay_objects() -> None:
    rng = random.Random(2)
    handles = ToolSpec("get_booking", "", {"type": "object", "properties": {
        "booking_ref": _STR, "pnr": _STR, "ticket": _STR, "sku": _STR, "account_no": _STR,
        "confirmation": _STR}})
    for _ in range(20):
        facts = sample_facts(handles, rng)
        assert set(facts) == set(handles.parameters["properties"])
        assert re.fullmatch(r"BOO-\d{5}", facts["booking_ref"]), facts
        assert re.fullmatch(r"[A-Z2-9]{6}", facts["pnr"]) and facts["sku"].startswith("SKU-")
        assert all(any(ch.isdigit() for ch in value) for key, value in facts.items()
                   if key != "pnr"), facts  # identifiers, never "desk lamp"
    booked = sample_facts(BOOK, rng)
    passenger = json.loads(booked["passenger"])
    assert set(passenger) == {"first_name", "last_name", "email"}
    world = World(FLIGHT_TOOLS, seed=5, world_state="entity_exists", facts=booked)
    made = ask(world, "create_booking", {"flight_id": booked["flight_id"], "passenger": passenger})
    assert made.status == "ok", made.result
    observed = sample_facts(ADDRESS, rng, ['{"order_id": "A-1001", "address": '
                                           '{"line1": "42 Elm Street", "city": "Graz"}}'])
    address = json.loads(observed["address"])  # reshaped, still an object
    assert re.fullmatch(r"[1-9]\d Elm Street", address["line1"]) and address["city"] == "Graz"


def test_sample_facts_from_the_schema() -> None:
    tool = ToolSpec("book_visit", "", {"type": "object", "properties": {
        "customer_id": {"type": "string"}, "email": {"type": "string", "format": "email"},
        "day": {"type": "string", "format": "date"}, "slot": {"enum": ["am", "pm"]},
        "party": {"type": "integer", "minimum": 1, "maximum": 8}, "note": {"type": "string"}},
        "required": ["email", "day", "slot", "party"]})
    facts = sample_facts(tool, random.Random(1))
    assert set(facts) == {"customer_id", "email", "day", "slot", "party"}
    assert re.fullmatch(r"CUS-\d{5}", facts["customer_id"])
    assert re.fullmatch(r"[a-z]+\.[a-z]@mailbox\.test", facts["email"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", facts["day"]) and facts["slot"] in ("am", "pm")
    assert 1 <= int(facts["party"]) <= 8


_NAMES = st.sampled_from(["order_id", "id", "customer_number", "email", "amount", "name",
                          "reason", "sku", "quantity", "city", "booking_code", "date",
                          "first_name", "query", "user_uuid"])
_SCHEMAS = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "number"},
                            {"type": "string", "format": "email"},
                            {"type": "string", "format": "date"}, {},
                            {"type": "string", "format": "uuid"}])


def _typed(value: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    return int(value) if kind == "integer" else float(value) if kind == "number" else value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=st.dictionaries(_NAMES, _SCHEMAS, min_size=1, max_size=5),
       seed=st.integers(0, 10_000))
def test_sampled_facts_are_accepted_by_the_world(params: dict[str, dict[str, Any]],
                                                 seed: int) -> None:
    tool = ToolSpec("lookup_thing", "", {"type": "object", "properties": params,
                                         "required": list(params)})
    facts = sample_facts(tool, random.Random(seed))
    assert set(facts) == set(params)
    assert not any(looks_like_placeholder(value, key) for key, value in facts.items())
    world = World([tool], seed=seed, world_state="entity_exists", facts=facts)
    arguments = {key: _typed(value, params[key]) for key, value in facts.items()}
    assert ask(world, "lookup_thing", arguments).status == "ok"


# --------------------------------------------------------------------------- tool schemas


def test_tool_from_structure() -> None:
    tool = tool_from_structure(
        "update_order", '{"order_id":"VARCHAR","amount":"DOUBLE","count":"UBIGINT",'
        '"items":["VARCHAR"],"opts":{"x":"BOOLEAN"},"meta":"JSON","gone":"NULL"}',
        exemplars=('{"status": "ok"}',))
    props = tool.parameters["properties"]
    assert props["order_id"] == {"type": "string"} and props["amount"] == {"type": "number"}
    assert props["count"] == {"type": "integer"}
    assert props["items"] == {"type": "array", "items": {"type": "string"}}
    assert props["opts"] == {"type": "object", "properties": {"x": {"type": "boolean"}}}
    assert props["meta"] == {} and props["gone"] == {}
    assert tool.parameters["required"] == ["order_id"]
    assert (tool.source, tool.exemplars, tool.description) == (
        "observed", ('{"status": "ok"}',), "Update order.")
    world = World([tool], seed=1, world_state="entity_exists", facts={"order_id": "Q-77"})
    assert ask(world, "update_order", {"order_id": "Q-77", "amount": 2}).status == "ok"
    assert ask(world, "update_order", {"amount": 2}).status == "rejected"


def test_tool_from_a_broken_structure_names_the_tool() -> None:
    with pytest.raises(ToolSchemaError, match=r"'update_order'.*not JSON"):
        tool_from_structure("update_order", '{"order_id": VARCHAR')
    assert tool_from_structure("ping", "").parameters["properties"] == {}


def test_load_tool_file_reads_both_styles(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([
        {"type": "function", "function": {"name": "lookup_order", "description": "Look up.",
                                          "parameters": LOOKUP.parameters}},
        {"name": "ping", "description": "Ping."},
    ]))
    lookup, ping = load_tool_file(path)
    assert (lookup.name, lookup.description, lookup.source) == ("lookup_order", "Look up.",
                                                                 "supplied")
    assert lookup.parameters == LOOKUP.parameters
    assert ping.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(("content", "needles"), [
    ("[{", ["not valid JSON"]),
    ('"tools"', ["JSON string", "list"]),
    ("[]", ["empty list"]),
    ('[{"name": "ok"}, 7]', ["tool 1", "not an object"]),
    ('[{"description": "no name"}]', ["tool 0", '"name"']),
    ('[{"name": "has space"}]', ["tool 0", "'has space'"]),
    ('[{"type": "retrieval"}]', ["tool 0", "retrieval"]),
    ('[{"name": "a", "parameters": {"type": "array"}}]', ["tool 0 (a)", '"type": "object"']),
    ('[{"name": "a", "parameters": {"properties": []}}]', ["tool 0 (a)", "properties"]),
    ('[{"name": "a", "parameters": {"properties": {"x": {"type": "text"}}}}]',
     ["tool 0 (a)", "properties.x.type", "'text'"]),
    ('[{"name": "a", "parameters": {"properties": {"x": {}}, "required": ["y"]}}]',
     ["tool 0 (a)", "required", "y"]),
    ('[{"name": "a", "parameters": {"properties": {"x": {"enum": []}}}}]',
     ["tool 0 (a)", "enum"]),
    ('[{"name": "a"}, {"name": "a"}]', ["tool 1 (a)", "unique"]),
])
def test_malformed_tool_files_name_file_tool_and_problem(tmp_path: Path, content: str,
                                                         needles: list[str]) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content)
    with pytest.raises(ToolSchemaError) as caught:
        load_tool_file(path)
    message = str(caught.value)
    assert str(path) in message
    for needle in needles:
        assert needle in message, (needle, message)


def test_a_missing_tool_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ToolSchemaError, match=r"cannot read the tool file .*nope\.json"):
        load_tool_file(tmp_path / "nope.json")


# --------------------------------------------------------------------------- the scenario
# A shop's tools shaped like tau2-style retail ones, with exemplars written for this test
# (their own people and ids): a user holds orders, an order holds items and was paid with
# one of the user's payment methods.

_ID = {"type": "string"}
SHOP = (
    ToolSpec("find_user_id_by_email", "Find a user id by email.", {
        "type": "object", "properties": {"email": _ID}, "required": ["email"]},
        exemplars=("mira_holt_4410",)),
    ToolSpec("get_user_details", "Read a user.", {
        "type": "object", "properties": {"user_id": _ID}, "required": ["user_id"]},
        exemplars=(json.dumps({
            "user_id": "mira_holt_4410", "name": {"first_name": "Mira", "last_name": "Holt"},
            "email": "mira.holt77@shop.test",
            "payment_methods": {
                "credit_card_5512093": {"source": "credit_card", "id": "credit_card_5512093",
                                        "brand": "visa", "last_four": "9921"},
                "gift_card_7730021": {"source": "gift_card", "id": "gift_card_7730021",
                                      "balance": 42.0}},
            "orders": ["#W5512901", "#W7730114"]}),)),
    ToolSpec("get_order_details", "Read an order.", {
        "type": "object", "properties": {"order_id": _ID}, "required": ["order_id"]},
        exemplars=tuple(json.dumps({
            "order_id": order, "user_id": "mira_holt_4410", "status": status,
            "items": [item], "payment_history": [
                {"transaction_type": "payment", "amount": 54.2,
                 "payment_method_id": "credit_card_5512093"}]})
            for order, status, item in (
                ("#W5512901", "delivered", {"name": "Yoga Mat", "item_id": "6610293301",
                                            "options": {"thickness": "6mm"}}),
                ("#W7730114", "pending", {"name": "Headphones", "item_id": "8830129912",
                                          "options": {"battery life": "20 hours"}}),
                ("#W6610422", "cancelled", {"name": "Kettle", "item_id": "4410293344",
                                            "options": {"capacity": "1.5l"}})))),
    ToolSpec("cancel_pending_order", "Cancel a pending order.", {
        "type": "object", "properties": {"order_id": _ID, "reason": _ID},
        "required": ["order_id", "reason"]},
        exemplars=(json.dumps({"order_id": "#W7730114", "user_id": "mira_holt_4410",
                               "status": "cancelled", "items": []}),)),
    ToolSpec("exchange_delivered_order_items", "Exchange items of a delivered order.", {
        "type": "object", "properties": {
            "order_id": _ID, "item_ids": {"type": "array", "items": _ID},
            "new_item_ids": {"type": "array", "items": _ID}},
        "required": ["order_id", "item_ids", "new_item_ids"]},
        exemplars=(json.dumps({"order_id": "#W5512901", "user_id": "mira_holt_4410",
                               "status": "exchange requested"}),)),
)
SHOP_FACTS = {"email": "ana.kovac@mailbox.test", "order_id": "#W2938475"}


def shop(state: str = "entity_exists", focus: str | None = "cancel_pending_order",
         seed: int = 11, **kwargs: Any) -> World:
    return World(SHOP, seed=seed, world_state=state, facts=kwargs.pop("facts", SHOP_FACTS),
                 focus=focus, **kwargs)


@pytest.mark.parametrize("seed", range(8))
def test_the_persons_email_finds_their_user_and_their_orders(seed: int) -> None:
    world = shop(seed=seed)
    found = ask(world, "find_user_id_by_email", {"email": "ana.kovac@mailbox.test"})
    user_id = found.result  # answered as production does: the id alone
    assert found.status == "ok" and re.fullmatch(r"ana_kovac_\d{4}", user_id)
    user = body(ask(world, "get_user_details", {"user_id": user_id}))
    assert user["user_id"] == user_id and user["email"] == "ana.kovac@mailbox.test"
    assert "#W2938475" in user["orders"]
    assert all(re.fullmatch(r"#W\d{7}", order) for order in user["orders"])
    assert not {"#W5512901", "#W7730114", "mira_holt_4410"} & set(json.dumps(user).split('"'))
    for key, method in user["payment_methods"].items():  # keyed by id, each its own id
        assert method["id"] == key and re.fullmatch(r"(credit|gift)_card_\d{7}", key)
    for order_id in user["orders"]:
        order = body(ask(world, "get_order_details", {"order_id": order_id}))
        assert order["order_id"] == order_id and order["user_id"] == user_id
        for payment in order["payment_history"]:
            assert payment["payment_method_id"] in user["payment_methods"]
    other = ask(world, "find_user_id_by_email", {"email": "someone.else@mailbox.test"})
    assert other.status == "not_found" and "someone.else@mailbox.test" in other.result


def test_a_call_without_an_identifier_is_never_answered_with_a_record() -> None:
    world = shop()
    for tool in ("find_user_id_by_email", "get_order_details", "get_user_details"):
        event = ask(world, tool, {})
        assert event.status == "rejected" and event.entity_id is None, tool
        assert "order_id" not in body(event) and "user_id" not in body(event)


def test_ids_keep_their_punctuation_and_only_exact_ids_are_found() -> None:
    world = shop()
    assert ask(world, "get_order_details", {"order_id": "#W2938475"}).status == "ok"
    for wrong in ("W2938475", "#w2938475", " #W2938475x", "#W2938476"):
        event = ask(world, "get_order_details", {"order_id": wrong})
        assert event.status == "not_found", wrong
        assert body(event)["message"].count(wrong.strip()) == 1 and "##" not in event.result


@pytest.mark.parametrize("seed", range(6))
def test_writes_persist_and_later_reads_see_them(seed: int) -> None:
    world = shop(seed=seed)
    before = body(ask(world, "get_order_details", {"order_id": "#W2938475"}))
    assert before["status"] == "pending"  # the record the person came to cancel can be
    cancelled = ask(world, "cancel_pending_order", {"order_id": "#W2938475",
                                                    "reason": "ordered by mistake"})
    assert (cancelled.status, body(cancelled)["status"]) == ("ok", "cancelled")
    after = body(ask(world, "get_order_details", {"order_id": "#W2938475"}))
    assert after["status"] == "cancelled" and after["items"] == before["items"]
    again = ask(world, "cancel_pending_order", {"order_id": "#W2938475", "reason": "again"})
    assert again.status == "refused" and "cancel" in body(again)["message"]
    assert again.entity_id == "#W2938475"


def test_an_exchange_is_kept_and_a_forbidden_write_names_its_reason() -> None:
    world = shop(focus="exchange_delivered_order_items")
    order = body(ask(world, "get_order_details", {"order_id": "#W2938475"}))
    assert order["status"] == "delivered"
    item = order["items"][0]["item_id"]
    refused = ask(world, "cancel_pending_order", {"order_id": "#W2938475", "reason": "x"})
    assert refused.status == "refused" and refused.entity_id == "#W2938475"
    assert "delivered, not pending" in body(refused)["message"]
    exchanged = ask(world, "exchange_delivered_order_items", {
        "order_id": "#W2938475", "item_ids": [item], "new_item_ids": ["5520193348"]})
    assert body(exchanged)["status"] == "exchange requested"
    reread = body(ask(world, "get_order_details", {"order_id": "#W2938475"}))
    assert reread["status"] == "exchange requested" and reread["new_item_ids"] == ["5520193348"]


def test_a_products_options_come_from_its_own_exemplar() -> None:
    for seed in range(30):
        world = shop(seed=seed, facts={"order_id": "#W2938475", "order_id_2": "#W1029384"})
        for order in ("#W2938475", "#W1029384"):
            for item in body(ask(world, "get_order_details", {"order_id": order}))["items"]:
                options = {"Yoga Mat": {"thickness"}, "Headphones": {"battery life"},
                           "Kettle": {"capacity"}}[item["name"]]
                assert set(item["options"]) == options


def test_the_mutation_fires_on_the_planned_tool_and_is_marked() -> None:
    world = shop("already_acted_on")
    assert world.mutation_fired is False
    lookup = ask(world, "find_user_id_by_email", {"email": "ana.kovac@mailbox.test"})
    assert lookup.status == "ok" and not lookup.mutated and "already" not in lookup.result
    assert world.mutation_fired is False
    read = ask(world, "get_order_details", {"order_id": "#W2938475"})
    assert body(read)["status"] == "cancelled" and read.mutated  # production's own word
    cancel = ask(world, "cancel_pending_order", {"order_id": "#W2938475", "reason": "x"})
    assert cancel.status == "refused" and cancel.mutated
    assert body(cancel)["status"] == "already_cancelled"
    assert body(cancel)["message"].count("#W2938475") == 1 and "##" not in cancel.result
    assert world.mutation_fired is True


def test_a_star_fault_fires_on_the_focal_tool_not_the_first_called() -> None:
    world = shop(faults=[Fault("*", "timeout")])
    first = ask(world, "find_user_id_by_email", {"email": "ana.kovac@mailbox.test"})
    assert first.status == "ok" and not first.mutated and world.mutation_fired is False
    fault = ask(world, "cancel_pending_order", {"order_id": "#W2938475", "reason": "x"})
    assert fault.status == "timeout" and fault.mutated and world.mutation_fired is True


@pytest.mark.parametrize(("state", "faults", "kind", "expected"), [
    ("already_acted_on", (), "world_state", False), ("missing", (), "world_state", False),
    ("duplicate", (), "explore", False), ("partially_completed", (), "world_state", False),
    ("entity_exists", (Fault("cancel_pending_order", "error"),), "tool_fault", False),
    ("entity_exists", (), "explore", None), ("unknown", (), "reperson", None),
    ("already_acted_on", (), "reperson", None), ("entity_exists", (), "paraphrase", None)])
def test_mutation_fired_is_false_until_the_agent_reaches_it(
        state: str, faults: tuple[Fault, ...], kind: str, expected: bool | None) -> None:
    world = shop(state, faults=faults, mutation=kind)
    ask(world, "find_user_id_by_email", {"email": "ana.kovac@mailbox.test"})
    assert world.mutation_fired is expected
    events = [ask(world, "get_order_details", {"order_id": "#W2938475"}),
              ask(world, "cancel_pending_order", {"order_id": "#W2938475", "reason": "x"})]
    assert world.mutation_fired is (None if expected is None else True)
    assert any(e.mutated for e in events) is (expected is not None)


def test_a_missing_record_fires_when_it_is_looked_for() -> None:
    world = shop("missing")
    user = ask(world, "find_user_id_by_email", {"email": "ana.kovac@mailbox.test"})
    assert user.status == "ok" and not user.mutated  # the person exists; the order does not
    orders = body(ask(world, "get_user_details", {"user_id": user.result}))["orders"]
    assert "#W2938475" not in orders
    looked = ask(world, "get_order_details", {"order_id": "#W2938475"})
    assert looked.status == "not_found" and looked.mutated and world.mutation_fired


# --------------------------------------------------------------------------- tau2's schemas


@pytest.mark.slow
def test_every_tau2_airline_tool_answers_in_a_seeded_scenario() -> None:
    """tau2-bench's real airline schemas, no exemplars: every tool, called with what the
    person knows, succeeds, and the user's record lists the reservation asked about."""
    tau2 = pytest.importorskip("tests.support.tau2")
    pytest.importorskip("tau2")
    tools = [ToolSpec(s["function"]["name"], s["function"]["description"],
                      s["function"]["parameters"]) for s in tau2.tool_schemas("airline")]
    facts = {"user_id": "ana_kovac_4821", "reservation_id": "Q7RX2M",
             "payment_id": "credit_card_4410293", "flight_number": "HAT112"}
    world = World(tools, seed=3, world_state="entity_exists", facts=facts,
                  focus="update_reservation_flights")
    flight = {"flight_number": "HAT112", "date": "2024-05-20"}
    passenger = {"first_name": "Ana", "last_name": "Kovac", "dob": "1990-04-02"}
    calls = {
        "get_user_details": {"user_id": "ana_kovac_4821"},
        "get_reservation_details": {"reservation_id": "Q7RX2M"},
        "search_direct_flight": {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"},
        "search_onestop_flight": {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"},
        "list_all_airports": {},
        "get_flight_status": {"flight_number": "HAT112", "date": "2024-05-20"},
        "calculate": {"expression": "2 * (120 + 35)"},
        "book_reservation": {
            "user_id": "ana_kovac_4821", "origin": "JFK", "destination": "SEA",
            "flight_type": "one_way", "cabin": "economy", "flights": [flight],
            "passengers": [passenger], "payment_methods": [
                {"payment_id": "credit_card_4410293", "amount": 310}],
            "total_baggages": 1, "nonfree_baggages": 0, "insurance": "no"},
        "update_reservation_baggages": {"reservation_id": "Q7RX2M", "total_baggages": 2,
                                        "nonfree_baggages": 1,
                                        "payment_id": "credit_card_4410293"},
        "update_reservation_flights": {"reservation_id": "Q7RX2M", "cabin": "business",
                                       "flights": [flight],
                                       "payment_id": "credit_card_4410293"},
        "update_reservation_passengers": {"reservation_id": "Q7RX2M",
                                          "passengers": [passenger]},
        "send_certificate": {"user_id": "ana_kovac_4821", "amount": 100},
        "transfer_to_human_agents": {"summary": "Wants a refund for a missed connection."},
        "cancel_reservation": {"reservation_id": "Q7RX2M"},
    }
    assert set(calls) == {tool.name for tool in tools}
    for name, arguments in calls.items():
        event = ask(world, name, arguments)
        assert event.status == "ok", (name, event.result)
    reservation = body(ask(world, "get_reservation_details", {"reservation_id": "Q7RX2M"}))
    assert reservation["status"] == "cancelled" and reservation["cabin"] == "business"
    assert reservation["total_baggages"] == 2
    assert ask(world, "get_reservation_details", {"reservation_id": "Q7RX2N"}).status == \
        "not_found"
    assert ask(world, "get_user_details", {"user_id": "ana_kovac_4822"}).status == "not_found"


def test_an_observed_lookup_by_email_needs_the_email() -> None:
    """Observed tools require only identifiers; a lookup by email with no email is still
    rejected, never answered with somebody's id."""
    find = tool_from_structure("find_user_id_by_email", '{"email": "VARCHAR"}',
                               exemplars=("mira_holt_4410",))
    assert find.parameters["required"] == []
    world = World([find, *SHOP[1:]], seed=2, world_state="entity_exists", facts=SHOP_FACTS)
    empty = ask(world, "find_user_id_by_email", {})
    assert empty.status == "rejected" and body(empty)["missing"] == ["email"]
    assert ask(world, "find_user_id_by_email", {"email": "ana.kovac@mailbox.test"}).result \
        .startswith("ana_kovac_")


def test_without_identifier_facts_the_user_lookup_is_not_the_acted_on_record() -> None:
    world = shop("already_acted_on", facts={"email": "ana.kovac@mailbox.test"})
    user = ask(world, "find_user_id_by_email", {"email": "ana.kovac@mailbox.test"})
    assert user.status == "ok" and not user.mutated and world.mutation_fired is False
    orders = body(ask(world, "get_user_details", {"user_id": user.result}))["orders"]
    statuses = {body(ask(world, "get_order_details", {"order_id": o}))["status"]
                for o in orders}
    assert "already_cancelled" not in statuses


def test_a_tool_without_exemplars_shows_the_record_as_other_tools_do() -> None:
    bare = ToolSpec("get_order_details", "Read an order.", SHOP[2].parameters)
    world = World([SHOP[0], SHOP[1], bare, SHOP[3]], seed=5, world_state="entity_exists",
                  facts=SHOP_FACTS, focus="cancel_pending_order")
    order = body(ask(world, "get_order_details", {"order_id": "#W2938475"}))
    assert {"order_id", "user_id", "status", "items"} <= set(order)
    assert order["order_id"] == "#W2938475" and order["user_id"].startswith("ana_kovac_")


def test_an_already_answer_names_the_record_once() -> None:
    cancel = ToolSpec("cancel_pending_order", "", SHOP[3].parameters, exemplars=(
        json.dumps({"order_id": "#W7730114", "status": "cancelled"}),
        json.dumps({"status": "already_cancelled",
                    "message": "Order #W7730114 was already cancelled."})))
    world = World([SHOP[2], cancel], seed=1, world_state="already_acted_on",
                  facts={"order_id": "#W2938475"}, focus="cancel_pending_order")
    event = ask(world, "cancel_pending_order", {"order_id": "#W2938475", "reason": "x"})
    assert body(event)["message"] == "Order #W2938475 was already cancelled."
    assert event.status == "refused" and event.mutated


@pytest.mark.parametrize("seed", range(5))
def test_the_persons_own_record_agrees_with_itself(seed: int) -> None:
    """Facts name only the order: the user it belongs to is made once, and their name,
    handle and email are one person's."""
    world = shop(seed=seed, facts={"order_id": "#W2938475"})
    order = body(ask(world, "get_order_details", {"order_id": "#W2938475"}))
    user = body(ask(world, "get_user_details", {"user_id": order["user_id"]}))
    first, last = user["name"]["first_name"], user["name"]["last_name"]
    assert user["user_id"].startswith(f"{first.lower()}_{last.lower()}_")
    assert user["email"].startswith(f"{first.lower()}.{last.lower()}@")
    assert "#W2938475" in user["orders"] and (first, last) != ("Mira", "Holt")
    assert ask(world, "find_user_id_by_email", {"email": user["email"]}).result == \
        user["user_id"]
