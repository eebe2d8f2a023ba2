"""``tracemill generate``: spend a budget turning the failure map into graded rollouts.

:func:`run_config` and :func:`generate` are also what ``serve``'s scheduler runs. While a
service holds the store, ``generate`` starts the run in it (with this command's budget
and the service's agent settings), follows its progress and prints its record.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from generator.service_commands import dataclass_from_json
from tracemill.config import Settings
from tracemill.errors import ConfigError, StoreLockedError

__all__ = ["add_generate_command", "generate", "run_config"]

Common = Callable[[argparse.ArgumentParser], None]


def add_generate_command(commands: Any, common: Common) -> None:
    """Add ``generate`` to the subcommand parsers."""
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
    return dataclass_from_json(RunRecord, ask_api(
        settings, f"/runs/{job['run_id']}", locked))
