"""The generator: spend a budget turning the failure map into graded simulated conversations.

Entry point: :func:`run_generation` with a :class:`RunConfig` (``tracemill generate`` builds
one from its settings). The parts, each usable on its own:

- :mod:`generator.plan` — budget allocation over the map and a pairwise covering array;
- :mod:`generator.world` — the simulated world answering tool calls from their schemas;
- :mod:`generator.person` — sampled personas and the writers that speak for them;
- :mod:`generator.backends` — the agent under test and the other roles' models;
- :mod:`generator.checks`, :mod:`generator.graders`, :mod:`generator.judges` — grading
  and measuring graders against human labels.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.backends import BackendOptions, build_backend
    from generator.budget import Budget, BudgetLedger
    from generator.checks import conduct_checks
    from generator.graders import GraderVerdict, JudgeGrader, PythonGrader, combine
    from generator.person import sample_persona
    from generator.plan import Plan, PlanOptions, build_plan, load_plan_inputs
    from generator.records import (
        ChatBackend,
        Grade,
        Message,
        ModelReply,
        ModelRequest,
        PlannedRollout,
        Rollout,
        ToolCall,
        ToolSpec,
        Transcript,
    )
    from generator.run import RunConfig, run_generation
    from generator.run_record import RunRecord, render_record
    from generator.simulate import Limits, simulate
    from generator.template_person import TemplatePerson
    from generator.world import World, load_tool_file

_HOMES = {
    "BackendOptions": "backends", "build_backend": "backends", "Budget": "budget",
    "BudgetLedger": "budget", "conduct_checks": "checks", "GraderVerdict": "graders",
    "JudgeGrader": "graders", "PythonGrader": "graders", "combine": "graders",
    "TemplatePerson": "template_person", "sample_persona": "person", "Plan": "plan",
    "PlanOptions": "plan", "build_plan": "plan", "load_plan_inputs": "plan",
    "RunRecord": "run_record", "render_record": "run_record", "ChatBackend": "records",
    "Grade": "records", "Message": "records", "ModelReply": "records",
    "ModelRequest": "records", "PlannedRollout": "records", "Rollout": "records",
    "ToolCall": "records", "ToolSpec": "records", "Transcript": "records",
    "RunConfig": "run", "run_generation": "run", "Limits": "simulate",
    "simulate": "simulate", "World": "world", "load_tool_file": "world",
}


def __getattr__(name: str) -> Any:
    """Import on first use: the command line loads this package for every command."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'generator' has no attribute {name!r}")
    return getattr(importlib.import_module(f"generator.{home}"), name)


__all__ = [
    "BackendOptions", "Budget", "BudgetLedger", "ChatBackend", "Grade", "GraderVerdict",
    "JudgeGrader", "Limits", "Message", "ModelReply", "ModelRequest", "Plan", "PlanOptions",
    "PlannedRollout", "PythonGrader", "Rollout", "RunConfig", "RunRecord", "TemplatePerson",
    "ToolCall", "ToolSpec", "Transcript", "World", "build_backend", "build_plan",
    "combine", "conduct_checks", "load_plan_inputs", "load_tool_file", "render_record",
    "run_generation", "sample_persona", "simulate",
]
