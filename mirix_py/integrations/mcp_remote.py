"""The engine methods the MCP tools call, sent to a running `mirix serve` over its REST API.

`mirix mcp` (stdio, as a desktop client starts it) uses this when the data dir has a live server
(`store/discovery.py`): the server is the one process that writes the store, so a memory added
through MCP is in the server's search at once, and `mirix mcp` never opens the store itself. The
tools are the same `build_mcp_server` tools; only their backend differs.
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any, Callable, Sequence, TypeVar

import httpx

from mirix_py.client import Actor, MirixClient
from mirix_py.errors import MirixError
from mirix_py.records import AddResult, ChatResponse, CoreMemory, MemoryBase, MemoryChange, SearchHit

T = TypeVar("T")


class ServerUnreachable(MirixError):
    pass


class RemoteMemory:
    """`add`, `search`, `chat`, `list`, `delete`, `core_memory` with the engine's signatures, each
    one REST call; a server that stopped answering is a `ServerUnreachable` saying what to do."""

    mode = "remote"

    def __init__(self, client: MirixClient) -> None:
        self.client = client

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except httpx.TransportError as exc:
            raise ServerUnreachable(f"the mirix server at {self._where()} does not answer "
                                    f"({type(exc).__name__}); {self._then_what()}") from exc

    def _where(self) -> str:
        return str(self.client.base_url)

    def _then_what(self) -> str:
        """What the user should do once the server stopped answering."""
        return "start it again, then restart this MCP server"

    def add(self, content: str | Sequence[dict[str, Any]], *, user_id: str, occurred_at: datetime | str | None = None,
            source_id: str | None = None, wait: bool = True, expires_at: datetime | str | None = None) -> AddResult:
        return self._call(self.client.add, content, user_id=user_id, occurred_at=occurred_at, source_id=source_id,
                          wait=wait, expires_at=expires_at)

    def search(self, query: str, *, user_id: str, limit: int = 10, memory_types: Sequence[str] | None = None,
               start: datetime | str | None = None, end: datetime | str | None = None,
               method: str = "hybrid") -> list[SearchHit]:
        return self._call(self.client.search, query, user_id=user_id, limit=limit, memory_types=memory_types,
                          start=start, end=end, method=method)

    def chat(self, message: str, *, user_id: str, remember: bool = True) -> ChatResponse:
        return self._call(self.client.chat, message, user_id=user_id, remember=remember)

    def list(self, *, user_id: str, memory_types: Sequence[str] | None = None, limit: int = 100,
             offset: int = 0) -> builtins.list[MemoryBase]:
        return self._call(self.client.list, user_id=user_id, memory_types=memory_types, limit=limit, offset=offset)

    def delete(self, memory_id: str, *, user_id: str, actor: Actor = "mcp",
               erase: bool = False) -> builtins.list[MemoryChange]:
        """Recorded in history under `actor` (the server takes `mcp`, `cli` or `rest`); the changes made.
        `erase`: their words leave the store too (`Mirix.delete`)."""
        return self._call(self.client.delete, memory_id, user_id=user_id, actor=actor, erase=erase)

    def core_memory(self, *, user_id: str) -> dict[str, CoreMemory]:
        return self._call(self.client.core_memory, user_id=user_id)

    def close(self) -> None:
        self.client.close()


__all__ = ["RemoteMemory", "ServerUnreachable"]
