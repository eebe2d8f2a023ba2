"""``tracemill judges``: graders measured against human labels on rollouts.

While a service holds the store it asks ``GET /api/v1/judges`` and prints the same
output.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from generator.service_commands import dataclass_from_json
from tracemill.config import Settings
from tracemill.errors import StoreLockedError

__all__ = ["add_judges_command"]

Common = Callable[[argparse.ArgumentParser], None]


def add_judges_command(commands: Any, common: Common) -> None:
    """Add ``judges`` to the subcommand parsers."""
    judges = commands.add_parser(
        "judges", help="Measure graders against human labels on rollouts.",
        description="Attach human labels with `tracemill label FILE` (rollout_id, passed); "
                    "this prints each grader's agreement, Cohen's kappa and "
                    "pass-when-gold-fails rate with 95% intervals, and flags graders below "
                    "the bar.")
    common(judges)
    judges.add_argument("--json", action="store_true", help="Print JSON.")
    judges.set_defaults(handler=_judges)


def _judges(args: argparse.Namespace, settings: Settings) -> int:
    from generator.judges import JudgeReport, judge_report, render_judge_report
    from tracemill.store import open_configured

    try:
        store = open_configured(settings, read_only=True)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        from tracemill.collector_client import ask_api

        reports = [dataclass_from_json(JudgeReport, body)
                   for body in ask_api(settings, "/judges", locked)]
    else:
        try:
            reports = judge_report(store.cursor())
        finally:
            store.close()
    if args.json:
        print(json.dumps([asdict(r) for r in reports], indent=2))
    else:
        print(render_judge_report(reports))
    return 0
