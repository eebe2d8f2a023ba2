"""``tracemill label``: attach outcomes (late feedback, human labels) from a file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from processor.process_commands import say
from tracemill.config import Settings
from tracemill.errors import StoreLockedError

__all__ = ["add_label_command"]

Options = Callable[[argparse.ArgumentParser], None]


def add_label_command(commands: Any, common: Options) -> None:
    """Add ``label`` to the subcommand parsers."""
    label = commands.add_parser(
        "label", help="Attach outcomes from a CSV or JSON-lines file.",
        description="Columns: conversation_id, trace_id or rollout_id (a generated "
                    "conversation: human labels on rollouts measure judges, see `tracemill "
                    "judges`); passed and/or reward; kind (human|program|model); "
                    "labeled_by; note.")
    common(label)
    label.add_argument("file", type=Path, metavar="FILE", help="The CSV or .jsonl file.")
    label.add_argument("--by", metavar="NAME",
                       help="labeled_by for rows that do not name it.")
    label.set_defaults(handler=_label)


def _label(args: argparse.Namespace, settings: Settings) -> int:
    from processor.labels import read_labels, store_labels, unknown_targets
    from tracemill.store import open_configured

    labels = read_labels(args.file, args.by)
    try:
        store = open_configured(settings)
    except StoreLockedError as locked:  # a running `serve` holds it: post to its API
        from tracemill.collector_client import ask_api

        count, unknown = 0, []
        for label in labels:
            answer = ask_api(settings, "/labels", locked, body={
                "conversation_id": label.target, "passed": label.passed,
                "reward": label.reward, "kind": label.kind, "labeled_by": label.labeled_by,
                "note": label.note})
            count += int(answer["stored"])
            unknown += answer["unknown"]
    else:
        try:
            count = store_labels(store, labels, args.file)
            unknown = unknown_targets(store, labels)
        finally:
            store.close()
    say(f"stored {count} labels from {args.file}; the next map or report uses them")
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5
                                          else "")
        print(f"warning: {len(unknown)} labels name no processed conversation, trace or "
              f"rollout: {shown} (a typo, or spans not processed yet: run `tracemill "
              "process`)", file=sys.stderr)
    return 0
