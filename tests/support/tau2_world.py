"""tau2's airline and telecom worlds for :mod:`tests.support.tau2_stream`: intents, replays, typos.

:class:`World` replays call sequences against the REAL tau2 environments, each on a fresh
copy of the domain's database (after an optional prelude of calls that sets the world
up), and caches the replies per (domain, prelude, calls). :data:`INTENTS` are what people
come for, modelled on tau2's gold action sequences: each draws its facts from the real
records and gives the prelude and the calls (lookups, then usually one state-changing
action). :func:`mistype` makes the identifier typos that the "missing" perturbation uses.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from tests.support import tau2

__all__ = ["ALREADY_TOOLS", "INTENTS", "Call", "Intent", "World", "eligible", "extra_lookup",
           "id_key", "mistype"]

ALREADY_TOOLS = frozenset({"enable_roaming", "disable_roaming", "send_payment_request"})
"""Actions whose real tau2 answer says so when they were already done."""
_ID_KEYS = ("reservation_id", "user_id", "phone_number", "customer_id", "line_id", "id",
            "bill_id", "flight_number")


class World:
    """Replays call sequences against real tau2 environments, one fresh world each.

    One environment per domain is kept; each replay gets its own database. Telecom's is
    tiny and deep-copied whole; airline's is large, so it gets a copy-on-touch database:
    shallow copies of the record tables, with deep copies of every record the calls could
    change. Replies are cached per (domain, prelude, calls): a sequence is replayed once.
    """

    def __init__(self) -> None:
        self.envs = {domain: tau2.environment(domain) for domain in tau2.DEVELOPMENT_DOMAINS}
        self.pristine = {domain: env.tools.db for domain, env in self.envs.items()}
        for intent in INTENTS:  # a tau2 release that renamed a tool fails here, loudly
            offered = {tool.name for tool in self.envs[intent.domain].get_tools()}
            missing = {tool for tool, _ in self.shape(intent)} - offered
            if missing:
                raise RuntimeError(f"tau2's {intent.domain} domain no longer offers "
                                   f"{sorted(missing)} (intent {intent.name})")
        self.cache: dict[bytes, tuple[tau2.Reply, ...]] = {}
        self.replays = 0

    def replay(self, domain: str, prelude: Sequence[tuple[str, dict[str, Any]]],
               calls: Sequence[tuple[str, dict[str, Any]]]) -> tuple[tau2.Reply, ...]:
        """tau2's answer to each of ``calls``, made in order on a fresh world of ``domain``
        after the ``prelude`` calls (whose answers are not kept)."""
        key = orjson.dumps([domain, prelude, calls], option=orjson.OPT_SORT_KEYS)
        found = self.cache.get(key)
        if found is not None:
            return found
        self.replays += 1
        env = self.envs[domain]
        if domain == "telecom":
            env.tools.db = self.pristine[domain].model_copy(deep=True)
        else:
            env.tools.db = self._airline_copy([*prelude, *calls])
        for tool, arguments in prelude:
            tau2.call(env, tool, arguments)
        replies = tuple(tau2.call(env, tool, arguments, f"call_{n}")
                        for n, (tool, arguments) in enumerate(calls))
        self.cache[key] = replies
        return replies

    def shape(self, intent: Intent) -> list[Call]:
        """The calls of one draw of ``intent`` (their tools and argument names do not
        depend on the draw)."""
        _, _, calls = intent.build(random.Random(0), self.pristine[intent.domain])
        return calls

    def _airline_copy(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> Any:
        db = self.pristine["airline"]
        copy = db.model_copy()
        copy.reservations = dict(db.reservations)
        copy.users = dict(db.users)
        copy.flights = dict(db.flights)
        for tool, arguments in calls:
            # only these change flights (seats); their records are large, so only then
            seats = tool in ("update_reservation_flights", "book_reservation")
            rid, uid = arguments.get("reservation_id"), arguments.get("user_id")
            if rid in db.reservations:
                reservation = copy.reservations[rid] = db.reservations[rid].model_copy(deep=True)
                uid = uid or reservation.user_id
                for leg in reservation.flights if seats else ():
                    number = leg.flight_number
                    copy.flights[number] = db.flights[number].model_copy(deep=True)
            if uid in db.users:
                copy.users[uid] = db.users[uid].model_copy(deep=True)
            for leg in (arguments.get("flights") or ()) if seats else ():
                number = leg.get("flight_number")
                if number in db.flights:
                    copy.flights[number] = db.flights[number].model_copy(deep=True)
        return copy


# --------------------------------------------------------------------------- intents


Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Intent:
    domain: str
    name: str
    action: str | None
    """The state-changing tool (None: lookups only)."""
    build: Callable[[random.Random, Any], tuple[dict[str, str], list[Call], list[Call]]]
    """(facts for the ask, prelude, calls) from a seeded draw and the pristine database."""


def _airline_reservation(rng: random.Random, db: Any) -> tuple[Any, Any, dict[str, str]]:
    reservations = _AIRLINE_POOL.get(id(db))
    if reservations is None:  # the reservations tau2's gold tasks act on, then 240 more
        gold = sorted({str(arguments["reservation_id"]) for task in tau2.gold_tasks("airline")
                       for _, arguments in task.actions if "reservation_id" in arguments}
                      & set(db.reservations))
        reservations = _AIRLINE_POOL[id(db)] = gold + sorted(set(db.reservations) - set(gold))[
            :240]
    reservation = db.reservations[rng.choice(reservations)]
    user = db.users[reservation.user_id]
    leg = reservation.flights[0]
    facts = {"rid": reservation.reservation_id, "uid": user.user_id,
             "name": f"{user.name.first_name} {user.name.last_name}",
             "origin": reservation.origin, "destination": reservation.destination,
             "date": leg.date}
    return reservation, user, facts


_AIRLINE_POOL: dict[int, list[str]] = {}


def _payment(user: Any) -> str:
    methods = sorted(user.payment_methods)
    usable = [m for m in methods if m.startswith(("credit_card", "gift_card"))]
    return str((usable or methods)[0])


def _cancel_trip(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    reservation, user, facts = _airline_reservation(rng, db)
    rid = reservation.reservation_id
    return facts, [], [("get_user_details", {"user_id": user.user_id}),
                       ("get_reservation_details", {"reservation_id": rid}),
                       ("cancel_reservation", {"reservation_id": rid})]


def _add_bags(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    reservation, user, facts = _airline_reservation(rng, db)
    rid = reservation.reservation_id
    return facts, [], [
        ("get_reservation_details", {"reservation_id": rid}),
        ("get_user_details", {"user_id": user.user_id}),
        ("update_reservation_baggages", {
            "reservation_id": rid, "total_baggages": reservation.total_baggages + 1,
            "nonfree_baggages": reservation.nonfree_baggages + 1,
            "payment_id": _payment(user)})]


def _change_passenger(rng: random.Random,
                      db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    reservation, _, facts = _airline_reservation(rng, db)
    passengers = [p.model_dump() for p in reservation.passengers]
    passengers[0]["dob"] = f"19{rng.randint(50, 99)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    rid = reservation.reservation_id
    return facts, [], [("get_reservation_details", {"reservation_id": rid}),
                       ("update_reservation_passengers",
                        {"reservation_id": rid, "passengers": passengers})]


def _compensation(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    reservation, user, facts = _airline_reservation(rng, db)
    return facts, [], [("get_user_details", {"user_id": user.user_id}),
                       ("get_reservation_details",
                        {"reservation_id": reservation.reservation_id}),
                       ("send_certificate",
                        {"user_id": user.user_id, "amount": rng.choice((50, 100, 150))})]


def _upgrade_cabin(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    reservation, user, facts = _airline_reservation(rng, db)
    rid = reservation.reservation_id
    flights = [{"flight_number": leg.flight_number, "date": leg.date}
               for leg in reservation.flights]
    cabin = "business" if reservation.cabin != "business" else "economy"
    return facts, [], [("get_reservation_details", {"reservation_id": rid}),
                       ("get_user_details", {"user_id": user.user_id}),
                       ("update_reservation_flights", {
                           "reservation_id": rid, "cabin": cabin, "flights": flights,
                           "payment_id": _payment(user)})]


def _flight_status(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    reservation, _, facts = _airline_reservation(rng, db)
    leg = reservation.flights[0]
    return facts, [], [("get_reservation_details",
                        {"reservation_id": reservation.reservation_id}),
                       ("get_flight_status", {"flight_number": leg.flight_number,
                                              "date": leg.date})]


def _find_flight(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    reservation, user, facts = _airline_reservation(rng, db)
    return facts, [], [("get_user_details", {"user_id": user.user_id}),
                       ("search_direct_flight", {"origin": reservation.origin,
                                                 "destination": reservation.destination,
                                                 "date": facts["date"]})]


def _telecom_line(rng: random.Random, db: Any,
                  want: Callable[[Any], bool] = lambda line: True) -> tuple[Any, Any,
                                                                             dict[str, str]]:
    pairs = [(customer, line) for customer in db.customers for line in db.lines
             if line.line_id in customer.line_ids and want(line)]
    customer, line = rng.choice(pairs)
    facts = {"phone": line.phone_number, "cid": customer.customer_id, "lid": line.line_id,
             "name": customer.full_name, "last4": line.phone_number[-4:],
             "gb": str(rng.choice((1, 2, 3, 5)))}
    return customer, line, facts


def _active(line: Any) -> bool:
    return str(getattr(line.status, "value", line.status)).lower() == "active"


def _roaming(enable: bool) -> Callable[[random.Random, Any],
                                       tuple[dict[str, str], list[Call], list[Call]]]:
    def build(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
        customer, line, facts = _telecom_line(rng, db, _active)
        ids = {"customer_id": customer.customer_id, "line_id": line.line_id}
        prelude: list[Call] = []
        if bool(line.roaming_enabled) == enable:  # set the world so the action is needed
            prelude.append(("disable_roaming" if enable else "enable_roaming", dict(ids)))
        action = "enable_roaming" if enable else "disable_roaming"
        return facts, prelude, [("get_customer_by_phone", {"phone_number": line.phone_number}),
                                ("get_details_by_id", {"id": line.line_id}),
                                (action, ids)]
    return build


def _refuel(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    customer, line, facts = _telecom_line(rng, db, _active)
    ids = {"customer_id": customer.customer_id, "line_id": line.line_id}
    return facts, [], [("get_customer_by_phone", {"phone_number": line.phone_number}),
                       ("get_data_usage", dict(ids)),
                       ("refuel_data", {**ids, "gb_amount": float(facts["gb"])})]


def _resume(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    customer, line, facts = _telecom_line(rng, db)
    ids = {"customer_id": customer.customer_id, "line_id": line.line_id}
    prelude: list[Call] = []
    if _active(line):
        prelude.append(("suspend_line", {**ids, "reason": "customer travelling"}))
    return facts, prelude, [("get_customer_by_id", {"customer_id": customer.customer_id}),
                            ("get_details_by_id", {"id": line.line_id}),
                            ("resume_line", ids)]


def _suspend(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    customer, line, facts = _telecom_line(rng, db, _active)
    ids = {"customer_id": customer.customer_id, "line_id": line.line_id}
    reason = rng.choice(("travelling abroad", "lost phone", "not using it for now"))
    return facts, [], [("get_customer_by_phone", {"phone_number": line.phone_number}),
                       ("get_details_by_id", {"id": line.line_id}),
                       ("suspend_line", {**ids, "reason": reason})]


def _pay_bill(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    customers = [c for c in db.customers if c.bill_ids]
    customer = rng.choice(customers)
    bill = rng.choice(sorted(customer.bill_ids))
    facts = {"cid": customer.customer_id, "bill": bill, "name": customer.full_name}
    return facts, [], [("get_customer_by_id", {"customer_id": customer.customer_id}),
                       ("get_bills_for_customer", {"customer_id": customer.customer_id,
                                                   "limit": rng.choice((3, 6, 12))}),
                       ("send_payment_request", {"customer_id": customer.customer_id,
                                                 "bill_id": bill})]


def _data_check(rng: random.Random, db: Any) -> tuple[dict[str, str], list[Call], list[Call]]:
    customer, line, facts = _telecom_line(rng, db)
    return facts, [], [("get_customer_by_phone", {"phone_number": line.phone_number}),
                       ("get_data_usage", {"customer_id": customer.customer_id,
                                           "line_id": line.line_id})]


INTENTS: tuple[Intent, ...] = (
    Intent("airline", "cancel_trip", "cancel_reservation", _cancel_trip),
    Intent("airline", "add_bags", "update_reservation_baggages", _add_bags),
    Intent("airline", "change_passenger", "update_reservation_passengers", _change_passenger),
    Intent("airline", "compensation", "send_certificate", _compensation),
    Intent("airline", "upgrade_cabin", "update_reservation_flights", _upgrade_cabin),
    Intent("airline", "flight_status", None, _flight_status),
    Intent("airline", "find_flight", None, _find_flight),
    Intent("telecom", "roaming_on", "enable_roaming", _roaming(True)),
    Intent("telecom", "roaming_off", "disable_roaming", _roaming(False)),
    Intent("telecom", "refuel", "refuel_data", _refuel),
    Intent("telecom", "resume", "resume_line", _resume),
    Intent("telecom", "suspend", "suspend_line", _suspend),
    Intent("telecom", "pay_bill", "send_payment_request", _pay_bill),
    Intent("telecom", "data_check", None, _data_check),
)
"""What people come for, per domain, modelled on tau2's gold action sequences."""


def extra_lookup(rng: random.Random, db: Any, intent: Intent, facts: Mapping[str, str],
                 calls: list[Call]) -> list[Call]:
    """``calls`` with one more lookup before the last call, as agents often make: another of
    the person's reservations (airline), their bills or their customer record (telecom)."""
    if intent.domain == "airline":
        user = db.users.get(facts.get("uid", ""))
        others = sorted(set(user.reservations) - {facts.get("rid")}) if user else []
        if not others:
            return calls
        extra: Call = ("get_reservation_details", {"reservation_id": rng.choice(others)})
    else:
        customer_id = facts.get("cid") or next(
            (c.customer_id for c in db.customers
             if facts.get("lid") in c.line_ids), None)
        if customer_id is None:
            return calls
        extra = rng.choice((("get_bills_for_customer", {"customer_id": customer_id, "limit": 3}),
                            ("get_customer_by_id", {"customer_id": customer_id})))
    return [*calls[:-1], extra, calls[-1]]  # before the action, or the lookup asked for


# --------------------------------------------------------------------------- perturbations


def mistype(draw: random.Random, key: str, value: str) -> str:
    """A plausible typo of an identifier that names no record: one of three per value
    (people mistype the same id the same few ways; replays stay cacheable)."""
    rng = random.Random(f"{key}:{value}:{draw.randrange(3)}")
    if key == "phone_number":
        digits = list(value)
        spots = [i for i, ch in enumerate(digits) if ch.isdigit()][-3:]
        i = rng.choice(spots)
        digits[i] = str((int(digits[i]) + rng.randint(1, 9)) % 10)
        changed = "".join(digits)
        return changed if changed[-4:-3] not in ("1", "2") else changed[:-4] + "9" + changed[-3:]
    if key in ("customer_id", "line_id", "bill_id", "id"):
        return value[0] + str(rng.randint(4, 9)) + value[2:]
    if key == "user_id":
        head, _, tail = value.rpartition("_")
        return f"{head}_{(int(tail) + rng.randint(1, 999)) % 10000:04d}" if tail.isdigit() \
            else value + "x"
    if key == "flight_number":
        return "HAT" + str(rng.randint(400, 999))
    chars = list(value)
    i = rng.randrange(len(chars))
    chars[i] = rng.choice([c for c in string.ascii_uppercase + string.digits if c != chars[i]])
    return "".join(chars)


def id_key(arguments: Mapping[str, Any]) -> str | None:
    """The argument naming the record a call is about (None when there is none)."""
    return next((key for key in _ID_KEYS if isinstance(arguments.get(key), str)), None)


def eligible(kind: str, calls: Sequence[Call], intent: Intent) -> list[int]:
    """Indices of the calls a perturbation of ``kind`` can hit."""
    if kind == "missing":
        return [i for i, (_, arguments) in enumerate(calls) if id_key(arguments)]
    if kind == "already":
        return [i for i, (tool, _) in enumerate(calls)
                if tool == intent.action and tool in ALREADY_TOOLS]
    return list(range(len(calls)))
