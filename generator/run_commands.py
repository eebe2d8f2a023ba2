"""``tracemill runs`` and ``tracemill rollouts``: what generation stored.

While a service holds the store both ask its admin API and print the same output;
``runs`` adds the next scheduled generation.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from tracemill.config import Settings
from tracemill.errors import ConfigError, StoreLockedError

__all__ = ["add_run_commands"]

Common = Callable[[argparse.ArgumentParser], None]


def add_run_commands(commands: Any, common: Common) -> None:
    """Add ``runs`` and ``rollouts`` to the subcommand parsers."""
    runs = commands.add_parser("runs", help="List generation runs, or print one run's record.",
                               description="Without RUN_ID, one line per run, newest first.")
    common(runs)
    runs.add_argument("run_id", nargs="?", metavar="RUN_ID",
                      help="Print this run's stored record (JSON).")
    runs.add_argument("--json", action="store_true", help="Print JSON.")
    runs.set_defaults(handler=_runs)

    rollouts = commands.add_parser(
        "rollouts", help="List stored rollouts, or show one rollout in full.",
        description="Without arguments, one line per rollout (id, run, purpose, situation, "
                    "mutation and whether it fired, outcome, failure class, turns), newest "
                    "run first. `tracemill rollouts show ROLLOUT_ID` prints one rollout: the "
                    "transcript with every tool call and the world's answer, its lineage to "
                    "production conversations, its mutation, and every grade.")
    common(rollouts)
    rollouts.add_argument("words", nargs="*", metavar="show ROLLOUT_ID",
                          help="Show this rollout in full (ids look like RUN_ID:INDEX).")
    rollouts.add_argument("--run", dest="run_id", metavar="RUN_ID",
                          help="Only this run's rollouts.")
    rollouts.add_argument("--situation", metavar="LABEL_OR_ID",
                          help="Only rollouts aimed at this situation: a cell label "
                               "('tool=refund_order & world_state=missing'), part of one, "
                               "or a situation id.")
    rollouts.add_argument("--outcome", choices=["pass", "fail", "ungraded"],
                          help="Only rollouts with this outcome.")
    rollouts.add_argument("--mutation", choices=["fired", "not_fired", "none"],
                          help="Only rollouts whose planned mutation fired, did not fire, or "
                               "had none to fire.")
    rollouts.add_argument("--limit", type=int, default=50, metavar="N",
                          help="Most rollouts listed (default 50).")
    rollouts.add_argument("--json", action="store_true",
                          help="Print JSON: each rollout in full (as `rollouts show ID "
                               "--json`), messages in OpenAI chat format.")
    rollouts.set_defaults(handler=_rollouts)


def _runs(args: argparse.Namespace, settings: Settings) -> int:
    from generator.rollout_store import latest_record, list_runs
    from tracemill.store import open_configured

    schedule: list[dict[str, Any]] = []
    try:
        store = open_configured(settings, read_only=True)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        from urllib.parse import quote

        from tracemill.collector_client import ApiNotFound, ask_api

        if args.run_id:
            try:
                found = ask_api(settings, f"/runs/{quote(args.run_id, safe='')}", locked)
            except ApiNotFound:
                found = None
            if found is None:
                raise ConfigError(f"no finished record for run {args.run_id!r}; "
                                  "`tracemill runs` lists the runs") from None
            print(json.dumps(found, indent=2))
            return 0
        rows = ask_api(settings, "/runs", locked)
        schedule = ask_api(settings, "/status", locked)["schedule"]
    else:
        try:
            cursor = store.cursor()
            if args.run_id:
                record = latest_record(cursor, args.run_id)
                if record is None:
                    raise ConfigError(f"no finished record for run {args.run_id!r}; "
                                      "`tracemill runs` lists the runs")
                print(json.dumps(json.loads(record), indent=2))
                return 0
            rows = list_runs(cursor)
        finally:
            store.close()
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("no generation runs yet: `tracemill generate --agent offline --budget 50`")
    for row in rows if not args.json else []:
        print(f"{row['run_id']}  {row['state']:<8}  {row['rollouts']:>6} rollouts  "
              f"{row['failed']:>5} failed  stop={row['stop_reason']}  agent={row['agent']}")
    for job in schedule if not args.json else []:
        if job["name"] == "generate":
            print(f"next scheduled generation: {job['next_run'] or 'paused'} "
                  f"(cron {job['schedule']}, by the running service)")
    return 0


def _rollouts(args: argparse.Namespace, settings: Settings) -> int:
    from generator.errors import GeneratorError
    from generator.rollout_store import previous_run
    from generator.rollout_views import (
        RolloutFilter,
        find_rollout,
        list_rollouts,
        render_detail,
        render_list,
    )
    from tracemill.redact import redactor
    from tracemill.store import open_configured

    words = list(args.words)
    if words and (words[0] != "show" or len(words) != 2):
        raise ConfigError("write `tracemill rollouts` to list rollouts or `tracemill rollouts "
                          f"show ROLLOUT_ID` to show one (got {' '.join(words)!r})")
    if args.limit < 1:
        raise ConfigError(f"--limit must be 1 or more (got {args.limit})")
    redact = redactor(settings.redact)
    try:
        store = open_configured(settings, read_only=True)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        return _rollouts_from_api(args, settings, locked, words)
    try:
        cursor = store.cursor()
        if words:
            detail = find_rollout(cursor, words[1])
            if detail is None:
                raise GeneratorError(f"no rollout {words[1]!r} in the store; ids look like "
                                     "RUN_ID:INDEX, `tracemill rollouts` lists them")
            shown = redact.apply(detail.to_json())
            print(json.dumps(shown, indent=2) if args.json
                  else render_detail(_detail(shown)))
            return 0
        if args.run_id and previous_run(cursor, args.run_id) is None:
            raise GeneratorError(f"no run {args.run_id!r} in the store; `tracemill runs` "
                                 "lists them")
        rows = list_rollouts(cursor, RolloutFilter(
            run_id=args.run_id, situation=args.situation, outcome=args.outcome,
            mutation=args.mutation, limit=args.limit))
        # --json gives each rollout in full, as `rollouts show ID --json` does
        full = [find_rollout(cursor, row.rollout_id) for row in rows] if args.json else []
    finally:
        store.close()
    if args.json:
        print(json.dumps([redact.apply(detail.to_json()) for detail in full
                          if detail is not None], indent=2))
    elif not rows:
        print("no rollouts match" if (args.run_id or args.situation or args.outcome
                                       or args.mutation)
              else "no rollouts yet: `tracemill generate --agent offline --budget 50`")
    else:
        print(render_list(rows))
        if len(rows) == args.limit:
            print(f"(the first {args.limit}; --limit N shows more)")
    return 0


def _rollouts_from_api(args: argparse.Namespace, settings: Settings, locked: Any,
                       words: list[str]) -> int:
    from urllib.parse import quote

    from generator.errors import GeneratorError
    from generator.rollout_views import render_detail, render_list
    from tracemill.collector_client import ApiNotFound, ask_api

    if words:
        try:
            body = ask_api(settings, f"/rollouts/{quote(words[1], safe='')}", locked)
        except ApiNotFound:
            raise GeneratorError(f"no rollout {words[1]!r} in the store; ids look like "
                                 "RUN_ID:INDEX, `tracemill rollouts` lists them") from None
        print(json.dumps(body, indent=2) if args.json else render_detail(_detail(body)))
        return 0
    try:
        bodies = ask_api(settings, "/rollouts", locked, params={
            "run": args.run_id, "situation": args.situation, "outcome": args.outcome,
            "mutation": args.mutation, "limit": args.limit})
    except ApiNotFound as exc:
        raise GeneratorError(str(exc)) from None
    if args.json:
        print(json.dumps(bodies, indent=2))
    elif not bodies:
        print("no rollouts match" if (args.run_id or args.situation or args.outcome
                                       or args.mutation)
              else "no rollouts yet: `tracemill generate --agent offline --budget 50`")
    else:
        print(render_list([_detail(body).summary for body in bodies]))
        if len(bodies) == args.limit:
            print(f"(the first {args.limit}; --limit N shows more)")
    return 0


def _detail(body: dict[str, Any]) -> Any:
    """A :class:`RolloutDetail` back from its ``to_json`` form (the API's answer)."""
    from dataclasses import fields

    from generator.rollout_views import CheckView, LabelView, RolloutDetail, RolloutSummary

    summary = RolloutSummary(**{f.name: body[f.name] for f in fields(RolloutSummary)})
    rest = {f.name: body[f.name] for f in fields(RolloutDetail) if f.name != "summary"}
    rest["checks"] = tuple(CheckView(**c) for c in rest["checks"])
    rest["labels"] = tuple(LabelView(**v) for v in rest["labels"])
    for name in ("source_conversations", "planted"):
        rest[name] = tuple(rest[name])
    return RolloutDetail(summary=summary, **rest)


