"""CLI writes sent to the server that owns the data dir, instead of being refused.

On an embedded store one process writes (`store/writer_lock.py`). When that process is a server
(`mirix serve`, `mirix assistant`, announced in `server.json`: `store/discovery.py`), `mirix add`,
`chat`, `delete`, `update` and `undo` send their call to it over REST, as `mirix mcp` does: the
server sees the write at once, and history records the CLI as the actor (`X-Mirix-Actor: cli`).
Any other holder of the lock (a script, `mirix worker`) still gets the refusal naming it.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

from mirix_py.client import Actor, MirixClient
from mirix_py.integrations.mcp_remote import RemoteMemory
from mirix_py.records import MemoryBase, MemoryChange
from mirix_py.settings import Settings
from mirix_py.store.db import make_engine
from mirix_py.store.discovery import ServerInfo, running_server

__all__ = ["ServerWriter", "server_writer"]

class ServerWriter(RemoteMemory):
    """The engine methods the CLI's write commands call, each one REST call to the running server;
    `engine` reads the store's SQL (never writes) to resolve id prefixes, as the local path does."""

    def __init__(self, info: ServerInfo, settings: Settings) -> None:
        super().__init__(MirixClient(info.url, api_key=info.key, timeout=300))
        self.info = info
        self.engine = make_engine(settings.sql_url, settings.sqlite_driver)

    def _where(self) -> str:
        return f"{self.info.url} (pid {self.info.pid})"

    def _then_what(self) -> str:
        return "once it runs again, or is stopped, run the command again"

    def update(self, memory_id: str, fields: dict[str, Any], *, user_id: str, actor: Actor = "cli") -> MemoryBase:
        return self._call(self.client.update, memory_id, fields, user_id=user_id, actor=actor)

    def undo(self, input_id: str, *, user_id: str, force: bool = False) -> builtins.list[MemoryChange]:
        return self._call(self.client.undo, input_id, user_id=user_id, force=force)

    def close(self) -> None:
        super().close()
        self.engine.dispose()

    def __enter__(self) -> ServerWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def server_writer(data_dir: Path | None) -> ServerWriter | None:
    """A writer through the server that owns `data_dir` (answering its own key), or None."""
    settings = Settings.from_env(data_dir=data_dir)
    info = running_server(settings.data_dir)
    return None if info is None else ServerWriter(info, settings)
