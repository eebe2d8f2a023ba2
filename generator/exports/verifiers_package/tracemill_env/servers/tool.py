# mypy: ignore-errors
"""The task's tools, answered by its world (tracemill's simulated service).

The tool server advertises the run's own tool schemas (not Python signatures), so it
replaces the MCP server's list/call handlers the way verifiers' NeMo Gym toolset does.
The rollout's state carries the task's world (plan item and run) and the calls made so
far; each call is answered by replaying them and then it through a fresh world, which
answers exactly as the world the agent has been talking to.
"""

from __future__ import annotations

import json
from typing import Any, cast

import verifiers.v1 as vf
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, Tool
from pydantic import Field

from .. import world


class TracemillState(vf.State):
    """Per-rollout state shared by the task and the tool server."""

    run_id: str = ""
    """The task's run (its tools)."""
    item: dict[str, Any] = Field(default_factory=dict)
    """The task's plan item (its world)."""
    calls: list[list[str]] = Field(default_factory=list)
    """[id, tool, arguments JSON] of every call answered so far, in order."""


class TracemillToolset(vf.Toolset[vf.ToolsetConfig, TracemillState]):
    """The run's tools, answering from the task's world."""

    TOOL_PREFIX = None  # the agent calls them by the names production uses

    def register(self, mcp: MCPServer) -> None:
        server = cast(Any, mcp)
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    def answer(self, state: TracemillState, name: str, arguments: dict[str, Any]
               ) -> tuple[str, str]:
        """(status, result text) of one call, recorded in ``state``."""
        if not state.item:
            raise ValueError("no task world in the rollout state: TracemillTask.setup "
                             "puts it there")
        call = [f"call_{len(state.calls) + 1}", name, json.dumps(arguments)]
        events = world.replay(state.item, state.run_id, [*state.calls, call])
        state.calls.append(call)
        return events[-1].status, events[-1].result

    async def list_tools(self) -> list[Tool]:
        return [Tool(name=t["name"], description=t["description"] or None,
                     input_schema=t["parameters"])
                for t in world.openai_tools(self.state.run_id)]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context | None = None) -> CallToolResult:
        # not_found, refused, a fault: the world's JSON says so, as production's would
        _, text = self.answer(self.state, name, arguments)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=False)


if __name__ == "__main__":
    TracemillToolset.run()
