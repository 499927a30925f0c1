"""mirix-py for the OpenAI Agents SDK: a `Session` whose turns become memories, and function tools.

    from agents import Agent, Runner
    from mirix_py.integrations.openai_agents import MirixSession, mirix_tools

    session = MirixSession("chat-42", user_id="ada", mx=mx)      # or base_url=..., api_key=... (a `mirix serve`)
    agent = Agent(name="assistant", tools=mirix_tools("ada", mx=mx))
    await Runner.run(agent, "I'm allergic to peanuts.", session=session)

The session keeps the conversation items as the SDK gave them (in an Agents SDK `SQLiteSession`: by
default a file in the engine's data dir, in memory over REST), so `get_items` replays them exactly,
and sends the user and assistant messages to the engine once a reply has come (one input per run,
source id `openai-agents:<session_id>`), where they become memories. `pop_item` and `clear_session` change
the conversation only; the memories stay (delete them with `Mirix.undo` or `delete_user`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agents import FunctionTool, function_tool
from agents.memory import SessionABC, SQLiteSession

from mirix_py.integrations.tools import memory_tools, message_text, open_memory


def _turn(item: Any) -> dict[str, str] | None:
    """A user or assistant message item as a chat message; tool calls, reasoning and the rest are not turns."""
    get = item.get if isinstance(item, dict) else lambda key, default=None: getattr(item, key, default)
    role = get("role")
    if role not in ("user", "assistant") or get("type", "message") != "message":
        return None
    text = message_text(get("content"))
    return {"role": str(role), "content": text} if text.strip() else None


class MirixSession(SessionABC):
    """An Agents SDK session over mirix-py: conversation items kept verbatim, turns remembered."""

    def __init__(self, session_id: str, user_id: str, *, mx: Any = None, data_dir: str | Path | None = None,
                 base_url: str | None = None, api_key: str | None = None, history: SessionABC | None = None,
                 remember: bool = True, wait: bool = True) -> None:
        self.session_id, self.user_id = session_id, user_id
        self.memory, self._owned = open_memory(mx, data_dir=data_dir, base_url=base_url, api_key=api_key)
        if history is None:
            settings = getattr(self.memory, "settings", None)
            db = Path(settings.data_dir) / "openai_agents_sessions.sqlite" if settings is not None else ":memory:"
            history = SQLiteSession(session_id, db)
        self.history = history
        self.remember, self.wait = remember, wait
        self._pending: list[dict[str, str]] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return await self.history.get_items(limit)

    async def add_items(self, items: list[Any]) -> None:
        """Keep the items; remember the turns once the assistant has answered (the SDK adds a run's
        input before the model is called: remembered then, a question would be its own best match)."""
        await self.history.add_items(items)
        self._pending += [t for t in map(_turn, items) if t is not None]
        if any(t["role"] == "assistant" for t in self._pending):
            await asyncio.to_thread(self._flush)

    def _flush(self) -> None:
        turns, self._pending = self._pending, []
        if self.remember and turns:
            self.memory.add(turns, user_id=self.user_id, source_id=f"openai-agents:{self.session_id}",
                            wait=self.wait)

    async def pop_item(self) -> Any | None:
        return await self.history.pop_item()

    async def clear_session(self) -> None:
        await self.history.clear_session()

    def close(self) -> None:
        self._flush()  # turns not yet answered
        close = getattr(self.history, "close", None)
        if close is not None:
            close()
        if self._owned:
            self.memory.close()


def mirix_tools(user_id: str, *, mx: Any = None, data_dir: str | Path | None = None, base_url: str | None = None,
                api_key: str | None = None, limit: int = 5) -> list[FunctionTool]:
    """search_memory, add_memory, read_core_memory and core_memory_append as Agents SDK function tools."""
    memory, _ = open_memory(mx, data_dir=data_dir, base_url=base_url, api_key=api_key)
    return [function_tool(fn) for fn in memory_tools(memory, user_id, limit=limit)]


__all__ = ["MirixSession", "mirix_tools"]
