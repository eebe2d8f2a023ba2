"""The generator's commands: ``generate``, ``runs``, ``rollouts`` and ``judges`` (and,
from :mod:`generator.export_commands`, ``split``, ``export`` and ``eval``).

:func:`add_commands` adds them to the ``tracemill`` parser; each handler gets the parsed
arguments and the process's :class:`~tracemill.config.Settings` and returns an exit code.
Model API keys are read from the environment mapping the command line hands down (the
variables each backend names: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...). While
``tracemill serve`` holds the store, ``generate``, ``runs``, ``rollouts`` and ``export`` go
through its admin API and print the same output (``runs`` adds the next scheduled
generation; ``generate`` starts a run in the service with the given budget and the
service's agent settings, and follows it until it lands).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from generator.export_commands import add_commands as add_export_commands
from tracemill.config import Settings
from tracemill.errors import ConfigError, StoreLockedError

Common = Callable[[argparse.ArgumentParser], None]


def add_commands(commands: Any, common: Common) -> None:
    """Add ``generate``, ``runs``, ``rollouts`` and ``judges`` to the subcommand parsers."""
    generate = commands.add_parser(
        "generate",
        help="Spend a budget turning the failure map into graded simulated conversations.",
        description="Plans rollouts over the failure map (new and persistent failures "
                    "first, a pairwise covering array for the rest), simulates each with a "
                    "simulated world and person against the agent under test, grades and "
                    "stores them, and prints the run record. Processes new spans first. "
                    "An unfinished run with the same options (stopped by a time limit, an "
                    "interrupt or a failing agent or grader) is resumed with the plan it "
                    "stored; --fresh starts a new one.")
    common(generate)
    _generate_options(generate)
    generate.set_defaults(handler=_generate)

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

    judges = commands.add_parser(
        "judges", help="Measure graders against human labels on rollouts.",
        description="Attach human labels with `tracemill label FILE` (rollout_id, passed); "
                    "this prints each grader's agreement, Cohen's kappa and "
                    "pass-when-gold-fails rate with 95% intervals, and flags graders below "
                    "the bar.")
    common(judges)
    judges.add_argument("--json", action="store_true", help="Print JSON.")
    judges.set_defaults(handler=_judges)
    add_export_commands(commands, common)
    export = commands.choices["export"]
    export.set_defaults(handler=_through_service(export.get_default("handler"),
                                                 _export_through_api))


def _generate_options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--agent", metavar="SPEC",
        help="Agent under test: offline[:MISTAKE_RATE] (no key), python:module:function, "
             "openai:MODEL, anthropic:MODEL, ollama:MODEL, vllm:MODEL@URL, fireworks:MODEL.")
    add("--budget", metavar="BUDGET",
        help="200 (rollouts), '50k tokens' or '$5' (default 100 rollouts).")
    add("--seed", type=int, metavar="N", help="Seed of the plan and every rollout (default 0).")
    add("--person", dest="user_model", metavar="SPEC",
        help="The simulated person: template (default, offline) or a model spec.")
    add("--writer", dest="writer_model", metavar="SPEC",
        help="A model that paraphrases asks of failures with no trigger in the world.")
    add("--grader", metavar="SPEC",
        help="After the conduct checks: python:module:function or judge (needs --judge).")
    add("--judge", dest="judge_model", metavar="SPEC", help="The judge model for --grader judge.")
    add("--rubric", dest="rubric_file", type=Path, metavar="FILE",
        help="The judge's rubric as a text file (default: a support-agent rubric).")
    add("--tools", dest="tools_file", type=Path, metavar="FILE",
        help="OpenAI-style function schemas (JSON) for the simulated world; they win over "
             "the schemas inferred from traces.")
    add("--world", metavar="SPEC",
        help="What answers the agent's tool calls: simulated (default), "
             "python:module:function or http://host:port/path (your own staging system; "
             "see generator/worlds.py for the contract).")
    add("--prices", dest="prices_file", type=Path, metavar="FILE",
        help="Prices per model in USD per million tokens (TOML or JSON) over the built-in "
             "table; needed for a money budget on unlisted models.")
    add("--system-prompt", dest="system_prompt_file", type=Path, metavar="FILE",
        help="The agent's system prompt (model backends).")
    add("--concurrency", type=int, metavar="N", help="Conversations in flight (default 32).")
    add("--time-limit", dest="time_limit_seconds", type=float, metavar="SECONDS",
        help="Stop starting rollouts after this long (default: no limit).")
    add("--max-turns", type=int, metavar="N",
        help="Most turns of the simulated person (default 5).")
    add("--exploration-share", type=float, metavar="X",
        help="Share of the budget for the rest of the grid (default 0.2).")
    add("--guard-share", type=float, metavar="X",
        help="Share of the budget re-checking fixed cells (default 0.05).")
    add("--fault-rate", type=float, metavar="X",
        help="Share of exploration rollouts with a scheduled tool fault (default 0.1; at "
             "0.5 or more faults are covered pairwise).")
    add("--no-prefer-success", dest="prefer_success", action="store_const", const=False,
        help="Put tool conditions into the covering array instead of sampling faults.")
    add("--max-rollouts", type=int, metavar="N",
        help="Most rollouts a token or money budget plans (default 5000).")
    add("--saturation-window", type=int, metavar="N",
        help="Stop when N rollouts in a row add nothing new (default 250; 0: never).")
    add("--pass-threshold", type=float, metavar="X",
        help="Grader rewards at or above it pass (default 0.5).")
    add("--timeout", dest="request_timeout_seconds", type=float, metavar="SECONDS",
        help="Timeout of one model request (default 60).")
    add("--max-retries", type=int, metavar="N",
        help="Retries of a model request on 429, 5xx and timeouts (default 4).")
    add("--logprobs", action="store_const", const=True,
        help="Store the agent's token log probabilities with each rollout "
             "(OpenAI-compatible backends).")
    add("--resume", metavar="RUN_ID",
        help="Continue this unfinished run (same options); by default an unfinished run "
             "with the same options is resumed anyway.")
    add("--fresh", action="store_true",
        help="Start a new run even when an unfinished run with the same options exists.")
    add("--json", action="store_true", help="Print the run record as JSON.")
    add("--no-progress", action="store_true", help="No progress bar on stderr.")


def _read_text(path: Path | None, what: str) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} file {path}: {exc}") from None


def run_config(settings: Settings) -> Any:
    """The :class:`~generator.run_config.RunConfig` the settings describe."""
    from generator.backends import BackendOptions
    from generator.budget import Budget
    from generator.plan import PlanOptions
    from generator.prices import PriceTable
    from generator.run_config import RunConfig
    from generator.simulate import Limits

    if not settings.agent:
        raise ConfigError("generate needs the agent under test: --agent SPEC (offline for a "
                          "run with no model key; openai:MODEL, anthropic:MODEL, ...)")
    prices = (PriceTable.load(settings.prices_file) if settings.prices_file
              else PriceTable.default())
    return RunConfig(
        agent=settings.agent, budget=Budget.parse(settings.budget), seed=settings.seed,
        person=settings.user_model, writer=settings.writer_model,
        judge=settings.judge_model, grader=settings.grader,
        rubric=_read_text(settings.rubric_file, "rubric"),
        system_prompt=_read_text(settings.system_prompt_file, "system prompt"),
        tools_file=settings.tools_file, world=settings.world,
        concurrency=settings.concurrency,
        time_limit_s=settings.time_limit_seconds or None,
        saturation_window=settings.saturation_window, max_rollouts=settings.max_rollouts,
        pass_threshold=settings.pass_threshold,
        limits=Limits(max_turns=settings.max_turns, logprobs=settings.logprobs),
        plan=PlanOptions(seed=settings.seed, exploration_share=settings.exploration_share,
                         guard_share=settings.guard_share, fault_rate=settings.fault_rate,
                         prefer_success=settings.prefer_success,
                         paraphrase=settings.writer_model is not None),
        backend=BackendOptions(timeout_s=settings.request_timeout_seconds,
                               max_retries=settings.max_retries,
                               concurrency=settings.concurrency, prices=prices,
                               logprobs=settings.logprobs),
    )


def generate(settings: Settings, environ: Mapping[str, str], *, resume: str | None = None,
             fresh: bool = False, progress: bool = True) -> Any:
    """Process new spans, then run one generation run; returns its record."""
    from generator.run import run_generation
    from processor.run import ProcessOptions, process
    from tracemill.store import open_configured

    store = open_configured(settings)  # locked: the caller goes through the service
    try:
        config = run_config(settings)
        process(store, ProcessOptions.from_settings(settings))
        return asyncio.run(run_generation(store, config, environ, resume=resume, fresh=fresh,
                                          progress=progress))
    finally:
        store.close()


def _generate(args: argparse.Namespace, settings: Settings) -> int:
    from generator.run_record import render_record

    try:
        record = generate(settings, args.environ, resume=args.resume, fresh=args.fresh,
                          progress=not args.no_progress)
    except StoreLockedError as locked:  # a running `serve` holds it: run it there
        record = _generate_through_api(args, settings, locked)
    if args.json:
        print(json.dumps(record.to_json(), indent=2))
    else:
        print(render_record(record))
    if record.stop_reason == "interrupted":
        return 130
    if record.written and not record.graded:
        print("tracemill generate: error: no rollout could be graded (see degraded and "
              "last errors above); the run is stored but holds nothing to train on",
              file=sys.stderr)
        return 1
    if record.lost:
        print(f"tracemill generate: error: {len(record.lost)} rollouts were lost to an "
              "internal error (see lost above); please report it", file=sys.stderr)
        return 1
    return 0


#: generate options the service takes from its own settings, not from this command
_SERVICE_SIDE = ("agent", "user_model", "writer_model", "grader", "judge_model",
                 "rubric_file", "tools_file", "world", "prices_file", "system_prompt_file",
                 "seed", "resume")


def _generate_through_api(args: argparse.Namespace, settings: Settings,
                          locked: StoreLockedError) -> Any:
    """Start a run in the service holding the store with this command's budget, follow
    its progress on stderr, and return its stored record."""
    import time

    from generator.run_record import RunRecord
    from tracemill.collector_client import ApiNotFound, ask_api

    given = [f"--{name.replace('_', '-')}" for name in _SERVICE_SIDE
             if getattr(args, name, None) is not None]
    if given:
        print(f"tracemill generate: warning: {', '.join(given)} ignored: the running "
              "service runs generation with its own settings (restart it with them, or "
              "stop it and run `tracemill generate` on its file)", file=sys.stderr)
    try:
        job = ask_api(settings, "/runs", locked, body={"budget": settings.budget})
    except ApiNotFound as exc:
        raise ConfigError(f"the running service did not start the run: {exc}") from None
    print(f"started generation run {job['job_id']} in the running service (budget "
          f"{job['budget']})", file=sys.stderr)
    shown = -1
    try:
        while job["state"] in ("queued", "running", "stopping"):
            time.sleep(0.5)
            job = ask_api(settings, f"/jobs/{job['job_id']}", locked)
            if not args.no_progress and job["rollouts"] != shown and sys.stderr.isatty():
                shown = job["rollouts"]
                print(f"\rgenerate: {shown} rollouts stored", end="", file=sys.stderr)
    except KeyboardInterrupt:
        ask_api(settings, f"/jobs/{job['job_id']}/stop", locked, body={})
        raise
    if shown >= 0:
        print(file=sys.stderr)
    if job["run_id"] is None or job["state"] == "failed":
        raise ConfigError(f"the generation run failed in the service: {job['error']} "
                          "(`tracemill runs` lists the recorded runs)")
    return _dataclass_from_json(RunRecord, ask_api(
        settings, f"/runs/{job['run_id']}", locked))


def _dataclass_from_json(cls: Any, data: Any) -> Any:
    """A dataclass (with nested dataclasses, lists and dicts of them) from its ``asdict``
    form, as the API answers it."""
    import dataclasses
    import typing

    if dataclasses.is_dataclass(cls) and isinstance(data, dict):
        hints = typing.get_type_hints(cls)
        build: Any = cls
        return build(**{f.name: _dataclass_from_json(hints[f.name], data[f.name])
                        for f in dataclasses.fields(cls) if f.name in data})
    origin, params = typing.get_origin(cls), typing.get_args(cls)
    if origin is list and isinstance(data, list):
        return [_dataclass_from_json(params[0], item) for item in data]
    if origin is tuple and isinstance(data, list):
        return tuple(_dataclass_from_json(params[0], item) for item in data)
    if origin is dict and isinstance(data, dict):
        return {key: _dataclass_from_json(params[1], item) for key, item in data.items()}
    return data


def _through_service(offline: Any, remote: Any) -> Any:
    """A handler that runs ``offline`` and, when a running service holds the store,
    ``remote(args, settings, locked)`` instead."""
    def handler(args: argparse.Namespace, settings: Settings) -> int:
        try:
            code: int = offline(args, settings)
        except StoreLockedError as locked:
            code = remote(args, settings, locked)
        return code

    return handler


def _export_through_api(args: argparse.Namespace, settings: Settings,
                        locked: StoreLockedError) -> int:
    """``tracemill export`` written by the service holding the store into ``--out`` (which
    must lie under its export_dir), printed as offline."""
    import time

    from tracemill.collector_client import ApiNotFound, ask_api

    if args.embedder:
        raise ConfigError("--embedder runs in this process and cannot be sent to the running "
                          "service; stop it and export from its file")
    try:
        job = ask_api(settings, "/exports", locked, body={
            "format": args.export_format, "out": str(args.out.resolve()),
            "loss_mask": args.loss_mask, "seed": args.export_seed,
            "allow_length_bias": args.allow_length_bias})
        while job["state"] in ("queued", "running"):
            time.sleep(0.2)
            job = ask_api(settings, f"/exports/{job['export_id']}", locked)
    except ApiNotFound as exc:
        raise ConfigError(str(exc)) from None
    if job["state"] != "finished":
        raise ConfigError(f"the export failed in the running service: {job['error']}")
    _print_card(args, job["card"])
    return 0


def _print_card(args: argparse.Namespace, card: dict[str, Any]) -> None:
    decon = card["decontamination"]
    if args.json:
        print(json.dumps(card, indent=2))
    else:
        print(f"wrote {args.export_format} to {args.out}: train {card['train']['rollouts']} "
              f"rollouts, held out {card['held_out']['rollouts']}; left out "
              + ", ".join(f"{k} {v}" for k, v in card["left_out"].items()))
        for name, rows in card["files"].items():
            print(f"  {name}: {rows} rows")
        print("  decontamination: " + ", ".join(f"{k} {v}" for k, v in decon["removed"].items())
              + f" of {decon['checked']} (rules run: {', '.join(decon['rules_run'])})")
    for note in decon["not_run"]:
        print(f"tracemill export: warning: {note}", file=sys.stderr)
    for warning in card["warnings"]:
        print(f"tracemill export: warning: {warning}", file=sys.stderr)


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


def _judges(args: argparse.Namespace, settings: Settings) -> int:
    from generator.judges import judge_report, render_judge_report
    from tracemill.store import open_configured

    store = open_configured(settings, read_only=True)
    try:
        cursor = store.cursor()
        reports = judge_report(cursor)
    finally:
        store.close()
    if args.json:
        print(json.dumps([_plain(r) for r in reports], indent=2))
    else:
        print(render_judge_report(reports))
    return 0


def _plain(value: Any) -> Any:
    from dataclasses import asdict, is_dataclass

    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value
