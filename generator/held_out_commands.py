"""``split``, ``export`` and ``eval`` while a running ``tracemill serve`` holds the store.

The commands themselves live in :mod:`generator.export_commands`; these are their remote
halves, wired in by :func:`generator.commands.add_commands` through
:func:`~generator.service_commands.through_service`:

- ``split`` asks ``POST /api/v1/split`` (the service stores the split) and prints the
  same report;
- ``export`` asks ``POST /api/v1/exports``: the service writes into ``--out``, which must
  lie under its ``export_dir``;
- ``eval`` does not go through the service: it runs the agents, worlds and graders named
  on its command line with this shell's model keys, and an admin token must not let
  anyone make the service import ``python:`` callables or call endpoints it names. It
  stops with one message saying how to run it (:func:`eval_refused`).
"""

from __future__ import annotations

import argparse
import json
import sys

from generator.export_commands import print_card
from generator.service_commands import dataclass_from_json
from tracemill.config import Settings
from tracemill.errors import EXIT_UNAVAILABLE, ConfigError, StoreLockedError, TracemillError

__all__ = ["EvalNeedsTheStore", "eval_refused", "export_through_api", "split_through_api"]


def split_through_api(args: argparse.Namespace, settings: Settings,
                      locked: StoreLockedError) -> int:
    """``tracemill split`` made and stored by the service holding the store, printed as
    offline."""
    from generator.split import SplitError, SplitReport, render_split
    from tracemill.collector_client import ApiNotFound, ask_api

    if not 0.0 < args.held_out < 1.0:  # what split_store says offline; the API answers 422
        raise SplitError(f"--held-out must be a share between 0 and 1, e.g. 0.2 "
                         f"(got {args.held_out})")
    try:
        body = ask_api(settings, "/split", locked, body={
            "held_out": args.held_out, "seed": args.split_seed, "reset": args.reset})
    except ApiNotFound as exc:  # no rollouts, a bad share: the same message as offline
        raise SplitError(str(exc)) from None
    report = dataclass_from_json(SplitReport, body)
    print(json.dumps(report.to_json(), indent=2) if args.json else render_split(report))
    for warning in report.warnings if args.json else ():
        print(f"tracemill split: warning: {warning}", file=sys.stderr)
    return 0


class EvalNeedsTheStore(TracemillError):
    """``eval`` was asked while a running service holds the store (exit 3)."""

    exit_code = EXIT_UNAVAILABLE


def eval_refused(args: argparse.Namespace, settings: Settings,
                 locked: StoreLockedError) -> int:
    """Refuse ``eval`` while a service holds the store, saying exactly what to do."""
    from tracemill.service_info import read_service_info

    service = read_service_info(settings.db, locked.pid)
    pid = service.pid if service else locked.pid
    who = f"the running `tracemill serve` (pid {pid})" if pid else "a running `tracemill serve`"
    stop = f"`kill -TERM {pid}`" if pid else "SIGTERM or Ctrl-C"
    raise EvalNeedsTheStore(
        f"the store {locked.path} is held by {who}, and eval does not go through the "
        "service: it runs the agents, world and grader named here with this shell's model "
        f"keys, and the service runs only its own. Stop the service ({stop}: it drains and "
        "exits), run this `tracemill eval` again, then start the service again")


def export_through_api(args: argparse.Namespace, settings: Settings,
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
    print_card(args, job["card"])
    return 0
