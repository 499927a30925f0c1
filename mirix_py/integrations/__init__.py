"""Integrations: the AutoGen `Memory` plug-in (`mirix_py.integrations.autogen.MirixMemory`) and the
MCP server (`mirix_py.integrations.mcp_server`). Import the submodule you need; each needs its extra."""
