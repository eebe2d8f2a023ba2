"""The generator's commands: ``generate``, ``runs``, ``rollouts``, ``judges``, ``split``,
``export`` and ``eval``.

:func:`add_commands` adds them to the ``tracemill`` parser, each from the module that
holds its handler (:mod:`generator.generate_commands`, :mod:`generator.run_commands`,
:mod:`generator.judge_commands`, :mod:`generator.export_commands`); each handler gets the
parsed arguments and the process's :class:`~tracemill.config.Settings` and returns an
exit code. Model API keys are read from the environment mapping the command line hands
down (the variables each backend names: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...).
While ``tracemill serve`` holds the store, every one of them but ``eval`` goes through its
admin API and prints the same output (``runs`` adds the next scheduled generation;
``generate`` starts a run in the service with the given budget and the service's agent
settings, and follows it until it lands); ``eval`` says how to run it
(:mod:`generator.held_out_commands`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from generator.export_commands import add_commands as add_export_commands
from generator.generate_commands import add_generate_command, generate, run_config
from generator.held_out_commands import eval_refused, export_through_api, split_through_api
from generator.judge_commands import add_judges_command
from generator.run_commands import add_run_commands
from generator.service_commands import through_service

__all__ = ["add_commands", "generate", "run_config"]

Common = Callable[[argparse.ArgumentParser], None]


def add_commands(commands: Any, common: Common) -> None:
    """Add the generator's commands to the subcommand parsers."""
    add_generate_command(commands, common)
    add_run_commands(commands, common)
    add_judges_command(commands, common)
    add_export_commands(commands, common)
    for name, remote in (("split", split_through_api), ("export", export_through_api),
                         ("eval", eval_refused)):
        parser = commands.choices[name]
        parser.set_defaults(handler=through_service(parser.get_default("handler"), remote))
