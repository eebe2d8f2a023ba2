"""The processor's commands: ``process``, ``map``, ``conversations``, ``report``, ``label``.

:func:`add_commands` adds them to the ``tracemill`` parser, each from the module that
holds its handler (:mod:`processor.process_commands`, :mod:`processor.map_commands`,
:mod:`processor.conversation_commands`, :mod:`processor.report_commands`,
:mod:`processor.label_commands`). Each handler gets the parsed arguments and the
process's :class:`~tracemill.config.Settings` and returns an exit code (0 ok, 1 a
``--fail-on`` gate failed, 2 a usage error such as an unknown id, 3 the store is locked
and no running service answered). Every command but ``label`` processes new spans first.
While ``tracemill serve`` holds the store, every one of them goes through its admin API
(:func:`tracemill.collector_client.ask_api`: ``POST /process`` first, then the same
records the offline path reads) and prints the same output; values of the ``redact``
keys are masked either way (:mod:`tracemill.redact`).

Heavy modules are imported inside the handlers, so that ``tracemill --help`` and the
collector's commands start fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from processor.conversation_commands import add_conversations_command
from processor.label_commands import add_label_command
from processor.map_commands import add_map_command, read_map
from processor.process_commands import ProcessSummary, add_process_command, process_summary
from processor.report_commands import add_report_command, report_content

__all__ = ["ProcessSummary", "add_commands", "process_summary", "read_map", "report_content"]

Options = Callable[[argparse.ArgumentParser], None]


def add_commands(commands: Any, common: Options, processing: Options) -> None:
    """Add the processor's commands to the subcommand parsers. ``common``: the options
    every command has (store, config, logs); ``processing``: those of the commands that
    process (common ones plus how outcomes and coordinates are read)."""
    add_process_command(commands, processing)
    add_map_command(commands, processing)
    add_conversations_command(commands, processing)
    add_report_command(commands, processing)
    add_label_command(commands, common)
