"""Every tool schema a model sees, in one place: the memory managers', the router's, the chat
agent's and the MCP server's. `schemas/tools.json` holds them as committed; a test fails when they
drift (`mirix schemas export` writes them again), and another checks that each parameter is
described and each closed set enumerated from the records."""

from __future__ import annotations

import asyncio
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
        for tool in manager_tools(collector, sorted(MANAGER_TOOLS[memory_type]) + [NOTHING_TOOL]):
            out[tool.name] = dict(tool.schema)
    router = RouteCollector().tool()
    out[router.name] = dict(router.schema)
    out["search_in_memory"] = search_tool_schema()
    return dict(sorted(out.items()))


def mcp_tool_schemas() -> dict[str, dict[str, Any]]:
    """Tool name -> {description, input schema} of the MCP server."""
    from mirix_py.integrations.mcp_server import build_mcp_server

    server = build_mcp_server(None, users=["schema"])  # type: ignore[arg-type]  # tools are only listed
    tools = asyncio.run(server.list_tools())
    return {t.name: {"description": t.description, "input_schema": t.input_schema} for t in sorted(tools, key=lambda t: t.name)}


def all_tool_schemas() -> dict[str, Any]:
    return {"model_tools": model_tool_schemas(), "mcp_tools": mcp_tool_schemas()}
