"""The scenario of one rollout: the person, the records they hold, and the links between them.

A simulated world (:mod:`generator.world`) renders each answer from a production exemplar
of the tool called. Rendered alone, every answer would invent its own people and records:
orders belonging to a stranger, a reservation whose payment method the user does not
have. The scenario links them. Each identifier in a rendered answer gets a *kind*, read
from where it sits:

- a key named like an identifier (:func:`~generator._world_values.is_id_like`): the words
  before the id word (``user_id`` → ``user``, ``flight_number`` → ``flight``, ``bill_id``
  → ``bill``); a bare ``id`` takes the kind of the record it is in;
- a list of identifiers under a plural key (``reservations``, ``line_ids``): the key's
  first word without its plural ``s``;
- the keys of an object keyed by identifiers (``payment_methods: {"credit_card_7815826":
  {...}}``): the parent key's first word.

The *owner* is the person: the first identifier among the facts whose kind is one of
:data:`OWNER_KINDS` (``user_id``, ``customer_id``...), made on first use otherwise. Every
owner-kind identifier in any answer is the owner's. Every other identifier is translated,
once per world, from the exemplar's value to a scenario value: first to an identifier the
person holds of that kind written the same way (the facts' ``reservation_id`` or
``payment_id``; same letters before the first digit), else to a new identifier shaped like
the exemplar's (``#W8178512`` → ``#W2931846``), which from then on is a record the world
holds. Lists and id-keyed objects of a person's record list *all* the person's records of
the kind, so a user lookup lists the reservation the person asked about, and the payment
method a reservation was paid with is one of the user's.

The person's attributes (email, phone, names, date of birth) come from the facts and, when
the facts do not say, from the first rendering of the person's record; a lookup by an
attribute finds the person only when it matches one of them (case and spacing aside).
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from generator._world_values import (
    FIRST_NAMES,
    SURNAMES,
    id_head,
    is_id_like,
    looks_like_id,
    new_identifier,
    words,
)

OWNER_KINDS = frozenset({"user", "customer", "account", "member", "client", "profile",
                         "subscriber", "guest", "patient", "person", "cardholder", "owner"})
"""Kinds of identifier that name the person themselves."""

_ID_WORDS = frozenset({"id", "ids", "uuid", "guid", "number", "numbers", "code", "ref",
                       "reference", "no", "num", "nr", "key"})
_ATTRIBUTES: Mapping[str, str] = {
    "email": "email", "email_address": "email", "phone": "phone", "phone_number": "phone",
    "mobile": "phone", "mobile_number": "phone", "full_name": "full_name",
    "name": "full_name", "customer_name": "full_name", "first_name": "first_name",
    "last_name": "last_name", "surname": "last_name", "dob": "dob",
    "date_of_birth": "dob", "birth_date": "dob", "birthday": "dob", "zip": "zip",
    "zip_code": "zip", "postcode": "zip", "postal_code": "zip"}
"""Argument and field names that describe the person, by the attribute they carry."""
_NAMES = frozenset({"full_name", "first_name", "last_name"})
_CONTACT = frozenset({"email", "phone"})


def attribute_of(key: str) -> str | None:
    """The person attribute a key names (``email_address`` → ``email``), if any."""
    return _ATTRIBUTES.get("_".join(words(key)))


@functools.lru_cache(maxsize=4096)
def kind_of(key: str) -> str | None:
    """The kind of record an identifier-like key names (module docstring), None for a
    bare ``id``."""
    named = [word for word in words(key) if word not in _ID_WORDS]
    if not named:
        return None
    first = named[0]
    return first[:-1] if first.endswith("s") and not first.endswith("ss") else first


_CODE = re.compile(r"^[A-Z0-9]{5,12}$")


def idish(value: str) -> bool:
    """An identifier's value: one token with a digit (``#W8178512``) or a code in capitals
    (``SDZQKO``; airport codes such as ``LAX`` are too short to count)."""
    return looks_like_id(value) or bool(_CODE.match(value))


def _norm(value: object) -> str:
    return re.sub(r"[\s\-().+]", "", str(value)).lower()


@dataclass
class Subject:
    """The record a rendered answer is about (what a bare ``id`` and its own kind mean)."""

    id: str
    """Its identifier."""
    kind: str | None
    """Its kind (``reservation``), None when unknown."""
    owned: bool = True
    """Whether it is the person's (a search result is not)."""
    personal: bool = False
    """Whether its contact fields are the person's (the record the situation is about)."""


Register = Callable[[str, str | None, bool], None]
"""Called as ``register(id, kind, owned)`` for each identifier the scenario makes up."""


@dataclass
class Scenario:
    """The person and the links of one world (see the module docstring)."""

    seed: int
    """The world's seed."""
    register: Register
    """How the world learns of a record the scenario names."""
    owner_kind: str | None = None
    """The kind of the person's own identifier (``user``), when known."""
    owner_id: str | None = None
    """The person's own identifier, once known."""
    attributes: dict[str, str] = field(default_factory=dict)
    """The person's attributes (``email`` → ``ana.k@mailbox.test``)."""
    held: dict[str, list[str]] = field(default_factory=dict)
    """The person's records by kind, in the order they became known."""
    _table: dict[tuple[str, str], str] = field(default_factory=dict)
    _avoid: set[str] = field(default_factory=set)

    # ------------------------------------------------------------------ the person

    def add_fact(self, key: str, value: str) -> None:
        """Learn one fact the person knows (an identifier or an attribute)."""
        attribute = attribute_of(key)
        if attribute is not None:
            self.attributes.setdefault(attribute, value)
            return
        kind = kind_of(key)
        if kind is None:
            return
        if kind in OWNER_KINDS and self.owner_id is None:
            self.owner_kind, self.owner_id = kind, value
        elif kind != self.owner_kind:
            self.hold(kind, value)

    def hold(self, kind: str, value: str) -> None:
        """Count ``value`` among the person's records of ``kind``."""
        ids = self.held.setdefault(kind, [])
        if value not in ids:
            ids.append(value)
        self._avoid.add(value)

    def matches(self, arguments: Mapping[str, Any], tool: str) -> bool | None:
        """Whether the attribute arguments describe the person (None: none were given).
        Names count only for a tool about people (``get_customer_by_name``): a product
        search by ``name`` is no lookup of the person."""
        about_people = bool({w.rstrip("s") for w in words(tool)} & OWNER_KINDS)
        given = {attribute_of(key): value for key, value in arguments.items()
                 if attribute_of(key) is not None and isinstance(value, str | int)
                 and (about_people or attribute_of(key) not in _NAMES)}
        if not given:
            return None
        known = dict(self.attributes)
        if "full_name" not in known and {"first_name", "last_name"} <= known.keys():
            known["full_name"] = f"{known['first_name']} {known['last_name']}"
        for attribute, value in given.items():
            if attribute is None or attribute not in known \
                    or _norm(known[attribute]) != _norm(value):
                return False
        return True

    # ------------------------------------------------------------------ linking

    def link(self, value: Any, exemplar: Any, key: str, subject: Subject,
             parent: str = "", depth: int = 0) -> Any:
        """``value`` (rendered from ``exemplar``) with every identifier linked and, in the
        person's own record, the person's attributes in place."""
        if isinstance(value, dict) and isinstance(exemplar, dict):
            if exemplar and all(isinstance(k, str) and idish(k) for k in exemplar):
                return self._keyed(exemplar, value, key, subject, depth)
            person = subject.owned and depth <= 1 and (
                subject.id == self.owner_id or (subject.personal and key == ""))
            out = {}
            for name, item in value.items():
                linked = self.link(item, exemplar.get(name), name, subject, key, depth + 1)
                attribute = attribute_of(name) if person else None
                if subject.id != self.owner_id and attribute not in _CONTACT:
                    attribute = None  # the focal line's phone is theirs, not its name
                if attribute is not None and isinstance(linked, str):
                    linked = self._attribute(attribute, linked)
                out[name] = linked
            return out
        if isinstance(value, list) and isinstance(exemplar, list) and exemplar:
            if all(isinstance(item, str) and idish(item) for item in exemplar) \
                    and kind_of(key) is not None:
                return self._listed(str(kind_of(key)), [str(i) for i in exemplar], subject)
            return [self.link(item, exemplar[min(index, len(exemplar) - 1)], key, subject,
                              parent, depth) for index, item in enumerate(value)]
        if isinstance(exemplar, str | int) and not isinstance(exemplar, bool) \
                and isinstance(value, str | int) and is_id_like(key, None) \
                and idish(str(exemplar)):
            kind = kind_of(key) or (subject.kind if depth <= 1 else kind_of(parent))
            if kind is None or kind == subject.kind:
                linked = subject.id
            else:
                linked = self.resolve(kind, str(exemplar), subject.owned, drawn=str(value))
            return int(linked) if isinstance(value, int) and linked.isdigit() else linked
        return value

    def resolve(self, kind: str, exemplar: str, owned: bool, listing: bool = False,
                drawn: str | None = None) -> str:
        """The scenario's identifier for the exemplar's ``exemplar`` of ``kind`` (``drawn``:
        a new one already shaped like it, used when a new one is needed and it is free)."""
        if kind == self.owner_kind or (self.owner_kind is None and kind in OWNER_KINDS):
            return self.owner(kind, exemplar)
        found = self._table.get((kind, exemplar))
        if found is not None:
            return found
        mapped = set(self._table.values())
        held = list(self.held.get(kind, ()))
        same = [i for i in held if id_head(i) == id_head(exemplar)]
        free = [i for i in same if i not in mapped]
        if free:  # a record the person told of (a search shows the flight they know)
            chosen = free[0]
        elif owned and same and not listing:
            chosen = same[0]
        elif owned and held and not listing:  # paid with one of the person's methods
            chosen = held[0]
        else:
            chosen = drawn if drawn and drawn != exemplar and drawn not in self._avoid \
                and id_head(drawn) == id_head(exemplar) and len(drawn) == len(exemplar) \
                else self._new(kind, exemplar)
            self._avoid.add(chosen)
            self.register(chosen, kind, owned)
            if owned:
                self.hold(kind, chosen)
        self._table[kind, exemplar] = chosen
        return chosen

    def owner(self, kind: str, like: str) -> str:
        """The person's own identifier, made on first use shaped like ``like``."""
        if self.owner_id is None:
            self.owner_kind = kind
            made = self._new(kind, like)
            named = re.match(r"^([a-z]+)_([a-z]+)_(\d+)$", made)
            if named:  # a name-based handle (sara_doe_496): the person's own name
                first, last = self._names()
                made = f"{first.lower()}_{last.lower()}_{named[3]}"
            self.owner_id = made
            self.register(made, kind, True)
        return self.owner_id

    def _keyed(self, exemplar: dict[str, Any], value: dict[str, Any], key: str,
               subject: Subject, depth: int) -> dict[str, Any]:
        kind = kind_of(key) or "record"
        out: dict[str, Any] = {}
        entries = list(exemplar.items())
        for name, item in entries:
            new = self.resolve(kind, name, subject.owned, listing=True)
            out[new] = self.link(value.get(name, item), item, key,
                                 Subject(new, kind, subject.owned), key, depth + 1)
        for extra in self.held.get(kind, ()) if subject.owned else ():
            if extra not in out:  # a record the person holds that the exemplar did not list
                name, item = next(((n, i) for n, i in entries if id_head(n) == id_head(extra)),
                                  entries[0])
                out[extra] = self.link(value.get(name, item), item, key,
                                       Subject(extra, kind, True), key, depth + 1)
        return out

    def _listed(self, kind: str, exemplar: list[str], subject: Subject) -> list[str]:
        ids = [self.resolve(kind, item, subject.owned, listing=True) for item in exemplar]
        if subject.owned:
            ids += [i for i in self.held.get(kind, ()) if i not in ids]
        return list(dict.fromkeys(ids))

    def _names(self) -> tuple[str, str]:
        """The person's first and last name: said, else read from their email
        (``ana.kovac@...``), else drawn once."""
        first, last = self.attributes.get("first_name"), self.attributes.get("last_name")
        full = self.attributes.get("full_name", "").split()
        local = re.split(r"[._]", self.attributes.get("email", "").split("@")[0])
        if len(full) >= 2:
            first, last = first or full[0], last or full[-1]
        elif len(local) == 2 and all(part.isalpha() and len(part) > 1 for part in local):
            first, last = first or local[0].capitalize(), last or local[1].capitalize()
        rng = random.Random(f"{self.seed}:owner")  # noqa: S311 (simulation, not security)
        return first or rng.choice(FIRST_NAMES).capitalize(), last or rng.choice(SURNAMES)

    def _attribute(self, attribute: str, rendered: str) -> str:
        known = self.attributes.get(attribute)
        if known is None and attribute in ("first_name", "last_name", "full_name"):
            first, last = self._names()
            known = {"first_name": first, "last_name": last}.get(attribute, f"{first} {last}")
        if known is None and attribute == "email" and "@" in rendered:  # their own name
            first, last = self._names()
            known = f"{first.lower()}.{last.lower()}@{rendered.split('@', 1)[1]}"
            self.attributes[attribute] = known
        if known is not None:
            return known
        self.attributes[attribute] = rendered
        return rendered

    def _new(self, kind: str, like: str) -> str:
        rng = random.Random(f"{self.seed}:{kind}:{like}:{len(self._avoid)}")  # noqa: S311
        made = new_identifier(kind, rng, self._avoid, like=like)
        self._avoid.add(made)
        return made

    def note(self, value: str) -> None:
        """An identifier the world holds that new ones must not collide with."""
        self._avoid.add(value)

__all__ = ["OWNER_KINDS", "Scenario", "Subject", "attribute_of", "kind_of"]
