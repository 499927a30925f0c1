"""The tool schemas the agents send to a model: the memory managers', the router's and the chat
agent's. `schemas/tools.json` holds them as committed, with the MCP server's
(`integrations.mcp_server.mcp_tool_schemas`; both through `cli.schemas.tool_schemas`); a test fails
when they drift (`mirix schemas export` writes them again), and another checks that each parameter
is described and each closed set enumerated from the records."""

from __future__ import annotations

from typing import Any

from mirix_py.records import MemoryType


def model_tool_schemas() -> dict[str, dict[str, Any]]:
    """Tool name -> the schema the update and chat agents send to a model (every tool offered)."""
    from mirix_py.agents.chat import search_tool_schema
    from mirix_py.agents.definitions import MANAGER_TOOLS
    from mirix_py.agents.tools import NOTHING_TOOL, OpCollector, RouteCollector, manager_tools

    out: dict[str, dict[str, Any]] = {}
    for memory_type in MemoryType:
        # no store: the tools are only listed, never called
        collector = OpCollector(store=None, user_id="schema", memory_type=memory_type,  # type: ignore[arg-type]
                                batch_source_ids=["m1", "m2"], listed_ids={"listed"})
        for tool in manager_tools(collector, sorted(MANAGER_TOOLS[memory_type]) + [NOTHING_TOOL], every_tool=True):
            out[tool.name] = dict(tool.schema)
    router = RouteCollector().tool()
    out[router.name] = dict(router.schema)
    out["search_in_memory"] = search_tool_schema()
    return dict(sorted(out.items()))

