"""mirix-py for the OpenAI Agents SDK: a `Session` whose turns become memories, and function tools.

    from agents import Agent, Runner
    from mirix_py.integrations.openai_agents import MirixSession, mirix_tools

    session = MirixSession("chat-42", user_id="ada", mx=mx)      # or base_url=..., api_key=... (a `mirix serve`)
    agent = Agent(name="assistant", tools=mirix_tools("ada", mx=mx))
    await Runner.run(agent, "I'm allergic to peanuts.", session=session)

The session keeps the conversation items as the SDK gave them, per user and session id
(`mirix_py.store.agent_sessions`: with an embedded engine in its data dir, encrypted with its vault key and deleted
by `delete_user`; in memory over REST), so `get_items` replays them exactly, and sends the user and
assistant messages to the engine once a reply has come (one input per run, source id
`openai-agents:<session_id>`), where they become memories. The items are kept exactly as given (the SDK
matches them again by content); the turns sent to the engine are made plain (`text.storable.printable`:
a terminal's escape sequences dropped, form feeds made line breaks), so a control character in a
user's message or a model's reply fails no run. Each turn goes with a message id of its own, which the
session keeps beside its item (`said_as`): `Mirix.delete(..., erase=True)` of the turn finds the item
by it and replaces its text, and takes back the facts and core lines restated from that message alone.
Each user message that only asks (every sentence ends with "?") is marked as chat marks its question
(`integrations.tools.marked`): search ranks it below what the user said, so the questions of many runs
do not crowd out the user's statements. A run longer than the engine's `max_input_chars` goes as consecutive inputs, a longer
turn's text cut at paragraph, line, sentence or word breaks (`text.pieces.pieces_within`), so no
length fails a run and every word said is remembered, in order (over REST the server's limit, from its /health). `session_settings` (`SessionSettings`,
as `SQLiteSession` takes it) gives the default `limit` of `get_items`. `pop_item` and `clear_session`
change the conversation and what is still to be remembered; memories already made stay (delete them
with `Mirix.undo` or `delete_user`).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from agents import FunctionTool, function_tool
from agents.memory import SessionABC, SessionSettings
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from mirix_py.boundary.inputs import check_storable, check_user, normalize_add
from mirix_py.store.agent_sessions import FILE_NAME, SessionStore, said_text
from mirix_py.integrations.tools import first_input, input_limit, marked, memory_tools, open_memory, turn_pieces

TURN_PREFIX = "oa-"  # the message ids the session gives the turns it remembers (not a question: `marked`)


def _turn(item: Any) -> dict[str, str] | None:
    """A user or assistant message item as a chat message in plain text (`said_text`), a mere question marked
    as chat marks its own (`marked`), any other turn with an id of its own (the item's own id stays in the
    session only); tool calls, reasoning and the rest are not turns."""
    text = said_text(item)
    if text is None:
        return None
    role = item.get("role") if isinstance(item, dict) else getattr(item, "role", None)
    turn = marked({"role": str(role), "content": text})
    return turn if turn.get("id") else {**turn, "id": TURN_PREFIX + uuid.uuid4().hex[:16]}


def _pieces(turn: dict[str, str], max_chars: int) -> list[dict[str, str]]:
    """A turn's pieces within the engine's limit (`turn_pieces`), each with an id of its own: an erasure of
    one piece's memory takes only that piece out of the input log."""
    pieces = turn_pieces(turn, max_chars)
    return pieces if len(pieces) == 1 else [{**p, "id": f"{turn['id']}.{n}"} for n, p in enumerate(pieces, 1)]


class _UserSession(SessionABC):
    """One user's session in a `SessionStore`, as an SDK session (each call in a worker thread)."""

    def __init__(self, store: SessionStore, user_id: str, session_id: str) -> None:
        self.store, self.user_id, self.session_id = store, user_id, session_id

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return await asyncio.to_thread(self.store.get_items, self.user_id, self.session_id, limit)

    async def add_items(self, items: list[Any], said_as: list[list[str]] | None = None) -> None:
        await asyncio.to_thread(self.store.add_items, self.user_id, self.session_id, items, said_as)

    async def pop_item(self) -> Any | None:
        return await asyncio.to_thread(self.store.pop_item, self.user_id, self.session_id)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self.store.clear, self.user_id, self.session_id)

    def close(self) -> None:
        self.store.close()


def _store_for(memory: Any) -> SessionStore:
    """An embedded engine's file (its data dir, its vault key), else a store in memory (a REST client)."""
    settings, cipher = getattr(memory, "settings", None), getattr(getattr(memory, "store", None), "cipher", None)
    if settings is None or cipher is None:
        return SessionStore()
    return SessionStore(Path(settings.data_dir) / FILE_NAME, cipher)


class MirixSession(SessionABC):
    """An Agents SDK session over mirix-py: conversation items kept verbatim, turns remembered."""

    def __init__(self, session_id: str, user_id: str, *, mx: Any = None, data_dir: str | Path | None = None,
                 base_url: str | None = None, api_key: str | None = None, history: SessionABC | None = None,
                 remember: bool = True, wait: bool = True,
                 session_settings: SessionSettings | dict[str, Any] | None = None) -> None:
        check_user(user_id)  # the engine's rules, before anything is opened
        check_storable(session_id, "session_id")
        self.session_id, self.user_id = session_id, user_id
        self.memory, self._owned = open_memory(mx, data_dir=data_dir, base_url=base_url, api_key=api_key)
        self.history = history if history is not None else _UserSession(_store_for(self.memory), user_id, session_id)
        self.remember, self.wait = remember, wait
        self.session_settings = coerce_session_settings(session_settings) if session_settings is not None \
            else SessionSettings()
        # the turns of the newest items not yet remembered (always the last turns of the history), each
        # as its pieces within the engine's limit, those the engine has taken dropped
        self._pending: list[list[dict[str, str]]] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The latest `limit` items, oldest first; no `limit`: `session_settings.limit` (None: all)."""
        return await self.history.get_items(resolve_session_limit(limit, self.session_settings))

    async def add_items(self, items: list[Any]) -> None:
        """Keep the items as given; remember their turns, in plain text and in pieces within the engine's
        limit, once the assistant has answered (the SDK adds a run's input before the model is called:
        remembered then, a question would be its own best match). A piece the engine would refuse raises
        InvalidInput first, and nothing is kept."""
        said = await asyncio.to_thread(self._turns, items) if self.remember else [[] for _ in items]
        if isinstance(self.history, _UserSession):  # a history of the caller's own keeps items only
            await self.history.add_items(items, [[p["id"] for p in pieces] for pieces in said])
        else:
            await self.history.add_items(items)
        self._pending += [pieces for pieces in said if pieces]
        answered = max((n + 1 for n, t in enumerate(self._pending) if t[0]["role"] == "assistant"), default=0)
        if answered:  # a question still unanswered waits for its answer
            await asyncio.to_thread(self._flush, answered)

    def _turns(self, items: list[Any]) -> list[list[dict[str, str]]]:
        """Each item's turn as its pieces within the engine's limit (over REST the server's, asked for
        once), none for an item that is not a turn; InvalidInput for a piece the engine would refuse."""
        max_chars = input_limit(self.memory)
        turns = [[] if t is None else _pieces(t, max_chars) for t in map(_turn, items)]
        for piece in (p for pieces in turns for p in pieces):
            normalize_add([piece], user_id=self.user_id, occurred_at=None, source_id=self._source, kind="text",
                          max_chars=max_chars)
        return turns

    @property
    def _source(self) -> str:
        return f"openai-agents:{self.session_id}"

    def _flush(self, count: int) -> None:
        """Send the pieces of the first `count` pending turns as one input (more when together they are
        over the engine's limit); a piece stays pending until the engine has taken it, so a failure
        loses none and the next answer sends it again."""
        max_chars = input_limit(self.memory)
        while count > 0:
            pieces = first_input([p for turn in self._pending[:count] for p in turn], max_chars)
            self.memory.add(pieces, user_id=self.user_id, source_id=self._source, wait=self.wait)
            count -= self._taken(len(pieces))

    def _taken(self, count: int) -> int:
        """Drop the first `count` pending pieces (the engine has them); how many turns that finished."""
        finished = 0
        while count > 0:
            turn = self._pending[0]
            taken = min(count, len(turn))
            del turn[:taken]
            count -= taken
            if not turn:
                self._pending.pop(0)
                finished += 1
        return finished

    async def pop_item(self) -> Any | None:
        item = await self.history.pop_item()
        if item is not None and self._pending and _turn(item) is not None:
            self._pending.pop()  # the newest turn not yet remembered is the one popped
        return item

    async def clear_session(self) -> None:
        await self.history.clear_session()
        self._pending.clear()

    def close(self) -> None:
        try:
            self._flush(len(self._pending))  # turns not yet answered
        finally:
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
