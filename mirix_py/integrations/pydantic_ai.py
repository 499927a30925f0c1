"""`MirixToolset`: mirix-py memory as a pydantic-ai toolset (search, add, core memory), typed arguments.

    from pydantic_ai import Agent
    from mirix_py.integrations.pydantic_ai import MirixToolset

    agent = Agent("openai:gpt-4o", toolsets=[MirixToolset("ada", mx=mx)])   # or base_url=..., api_key=...

The tools are `search_memory(query: str, max_results: int)`, `add_memory(content: str)`,
`read_core_memory()` and `core_memory_append(label: Literal["human", "persona"], text: str)`; their
JSON schemas and descriptions come from the signatures and docstrings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai.toolsets import FunctionToolset

from mirix_py.integrations.tools import memory_tools, open_memory


class MirixToolset(FunctionToolset[Any]):
    """The memory tools of one user over an embedded engine or a `mirix serve`."""

    def __init__(self, user_id: str, *, mx: Any = None, data_dir: str | Path | None = None,
                 base_url: str | None = None, api_key: str | None = None, limit: int = 5,
                 id: str | None = None) -> None:
        self.memory, self._owned = open_memory(mx, data_dir=data_dir, base_url=base_url, api_key=api_key)
        self.user_id = user_id
        super().__init__(memory_tools(self.memory, user_id, limit=limit), docstring_format="google",
                         require_parameter_descriptions=True, id=id)

    def close(self) -> None:
        if self._owned:
            self.memory.close()


__all__ = ["MirixToolset"]
