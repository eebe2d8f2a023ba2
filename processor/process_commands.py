"""``tracemill process``, and what every processor command does first.

The other processor commands (:mod:`processor.map_commands`,
:mod:`processor.conversation_commands`, :mod:`processor.report_commands`) open the store
and process new spans through :func:`processed`; when a running ``tracemill serve`` holds
the store they ask it to process instead (:func:`process_remote`) and read its API.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from tracemill.config import Settings
from tracemill.errors import StoreLockedError

__all__ = ["ProcessSummary", "add_process_command", "process_remote", "process_summary",
           "processed", "redactor_of", "say"]

Options = Callable[[argparse.ArgumentParser], None]


def add_process_command(commands: Any, processing: Options) -> None:
    """Add ``process`` to the subcommand parsers."""
    process = commands.add_parser(
        "process", help="Turn new spans into conversations and rebuild the failure map.",
        description="Incremental: only conversations touched by new spans, log records or "
                    "labels are rebuilt. map, conversations and report run it first.")
    processing(process)
    process.set_defaults(handler=_process)


def processed(settings: Settings, environ: Mapping[str, str]) -> tuple[Any, Any]:
    """The store, opened and brought up to date (the caller closes it), and what
    processing did. ``environ``: model keys for ``--stance-model``. Raises
    ``StoreLockedError`` while a service holds the store (see :func:`process_remote`)."""
    from processor.run import ProcessOptions, process
    from tracemill.store import open_configured

    store = open_configured(settings)
    try:
        result = process(store, ProcessOptions.from_settings(settings), credentials=environ)
    except BaseException:
        store.close()
        raise
    return store, result


def process_remote(settings: Settings, locked: StoreLockedError) -> dict[str, Any]:
    """Ask the service holding the store to process new spans now (as the offline path
    does first); returns its answer (a :class:`ProcessSummary`)."""
    from tracemill.collector_client import ask_api

    answer: dict[str, Any] = ask_api(settings, "/process", locked, body={}, timeout=3600)
    return answer


def say(text: str) -> None:
    """Print one block of a command's output (flushed: the reader may be a pipe)."""
    print(text, flush=True)


def redactor_of(settings: Settings) -> Any:
    """The :class:`~tracemill.redact.Redactor` of the ``redact`` setting."""
    from tracemill.redact import redactor

    return redactor(settings.redact)


class ProcessSummary(BaseModel):
    """What one processing run did, as ``tracemill process`` prints it (also the admin
    API's ``POST /process`` answer)."""

    conversations_rebuilt: int = Field(description="Conversations built or rebuilt.")
    spans_read: int = Field(description="Spans read to do so.")
    log_records_read: int = Field(description="Log records read.")
    seconds: float = Field(description="Wall time.")
    situations: int = Field(description="Situations in the failure map.")
    statuses: dict[str, int] = Field(description="Situations per status.")
    stance_model: str | None = Field(description="What the stance model did, if it ran.")


def process_summary(result: Any, situations: list[Any]) -> ProcessSummary:
    """The summary of a :class:`~processor.run.ProcessResult` and the map it left."""
    statuses: dict[str, int] = {}
    for situation in situations:
        statuses[situation.status] = statuses.get(situation.status, 0) + 1
    stance = None
    if result.stance_model is not None:
        run = result.stance_model
        stance = (f"stance model {run.model}: {run.asked} asked, {run.unparseable} "
                  f"unparseable, {run.applied} stances changed"
                  + (f"; DEGRADED, {run.failed} kept the pattern stance: {run.error}"
                     if run.degraded else ""))
    return ProcessSummary(conversations_rebuilt=result.conversations_rebuilt,
                          spans_read=result.spans_read,
                          log_records_read=result.log_records_read, seconds=result.seconds,
                          situations=len(situations), statuses=statuses,
                          stance_model=stance)


def _process(args: argparse.Namespace, settings: Settings) -> int:
    from processor.map_records import read_situations

    try:
        store, result = processed(settings, args.environ)
    except StoreLockedError as locked:  # a running `serve` holds it: it processes
        done = ProcessSummary(**process_remote(settings, locked))
    else:
        try:
            cursor = store.cursor()
            try:
                situations = read_situations(cursor)
            finally:
                cursor.close()
        finally:
            store.close()
        done = process_summary(result, situations)
    say(f"rebuilt {done.conversations_rebuilt} conversations from {done.spans_read} "
        f"spans and {done.log_records_read} log records in {done.seconds:.1f}s; "
        f"failure map: {done.situations} situations"
        + (" (" + ", ".join(f"{n} {s}" for s, n in done.statuses.items()) + ")"
           if done.statuses else "") + "; `tracemill map` lists them")
    if done.stance_model is not None:
        say(done.stance_model)
    return 0
