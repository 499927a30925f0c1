"""What the framework adapters share: opening an engine or a client, the memory tools an agent
calls (search, add, core memory) as plain typed async functions that each framework wraps its way,
and what a conversation's turns are sent to the engine as: inputs within its `max_input_chars`, a turn
longer than that split into consecutive pieces (a framework's own store takes any length, so a
memory layer may not fail a run over it, nor drop what was said), a user's mere question marked as chat
marks its own (`marked`), so the questions saved run after run do not crowd out what the user said.

Both an embedded `Mirix` and a `MirixClient` (a running `mirix serve`) answer the same calls here:
`add`, `search`, `core_memory`, `core_append`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from mirix_py.boundary.sizes import MAX_ADD_MESSAGES
from mirix_py.text.by_day import day_lines
from mirix_py.text.passages import focus
from mirix_py.text.pieces import pieces_within
from mirix_py.errors import CoreMemoryFull, InvalidInput
from mirix_py.integrations.context import shareable
from mirix_py.store.agent_sessions import message_text  # the session store reads an item's text as the adapters do
from mirix_py.store.questions import turn_id
from mirix_py.records import SearchHit
from mirix_py.settings import Settings

def open_memory(mx: Any = None, *, data_dir: str | Path | None = None, base_url: str | None = None,
                api_key: str | None = None) -> tuple[Any, bool]:
    """The engine or client to use, and whether the caller owns it (and so closes it)."""
    if base_url and (mx is not None or data_dir is not None):
        raise ValueError("give either base_url (a REST server) or an embedded engine (mx / data_dir), not both")
    if mx is not None:
        return mx, False
    if base_url:
        from mirix_py.client import MirixClient

        return MirixClient(base_url, api_key=api_key), True
    from mirix_py.engine import Mirix

    return Mirix(data_dir), True


def render_hits(hits: list[SearchHit], query: str) -> str:
    """Hits as prompt lines, long ones cut to the passages about the query, dated ones under their day
    (`text.by_day`); no high-sensitivity vault items, vault secrets masked (as every other way into a
    prompt does)."""
    shown = shareable(hits)
    return "\n".join(day_lines([focus(h.text, query) for h in shown],
                               [f"- [{h.memory.id}] ({h.memory.memory_type.value}) " for h in shown]))


def input_limit(memory: Any) -> int:
    """The limit on one input: an engine's `settings.max_input_chars`; a REST client's
    `max_input_chars` (its server's, read from /health when first asked for)."""
    from mirix_py.client import MirixClient

    if isinstance(memory, MirixClient):
        return memory.max_input_chars
    limit = getattr(getattr(memory, "settings", None), "max_input_chars", None)
    return limit if isinstance(limit, int) and limit > 0 else Settings.model_fields["max_input_chars"].default


def marked(turn: dict[str, Any]) -> dict[str, Any]:
    """A chat turn with the id chat would give it (`store.questions.turn_id`: a user's message that only
    asks gets a question id), so the questions saved run after run rank below what the user said; a turn
    that has an id, a statement or a reply is left as it is."""
    if turn.get("id"):
        return turn
    given = turn_id(str(turn.get("role", "user")), str(turn.get("content", "")))
    return {**turn, "id": given} if given else turn


def turn_pieces(turn: dict[str, Any], max_chars: int) -> list[dict[str, Any]]:
    """A chat turn as turns like it (its role, its other fields) whose contents are its text's
    `pieces_within` the limit."""
    return [{**turn, "content": piece} for piece in pieces_within(turn["content"], max_chars)]


def first_input(turns: list[dict[str, Any]], max_chars: int) -> list[dict[str, Any]]:
    """The leading turns that fit in one input together (at least one: each fits alone): at most
    `max_chars` of text and MAX_ADD_MESSAGES messages, as a REST add takes."""
    size = 0
    for n, turn in enumerate(turns):
        size += len(turn["content"])
        if n and (size > max_chars or n == MAX_ADD_MESSAGES):
            return turns[:n]
    return turns


def inputs_within(turns: list[dict[str, Any]], max_chars: int) -> list[list[dict[str, Any]]]:
    """Chat turns as consecutive inputs the engine takes: each within `max_chars`, a longer turn's
    text split (`turn_pieces`), every character kept in order."""
    pieces = [piece for turn in turns for piece in turn_pieces(turn, max_chars)]
    inputs = []
    while pieces:
        inputs.append(first_input(pieces, max_chars))
        pieces = pieces[len(inputs[-1]):]
    return inputs


def memory_tools(memory: Any, user_id: str, *, limit: int = 5) -> list[Callable[..., Awaitable[str]]]:
    """search_memory, add_memory, read_core_memory and core_memory_append for one user, as typed
    async functions whose docstrings tell the model what each does."""

    async def call(method: str, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(memory, method), *args, **kwargs)  # engine calls are thread-safe

    async def search_memory(query: str, max_results: int = limit) -> str:
        """Search the user's long-term memory (events, facts, how-tos, documents) for what the query asks about.

        Args:
            query: What to look for, in words.
            max_results: How many memories to return at most, 1 to 50.
        """
        if isinstance(max_results, bool) or not isinstance(max_results, int):
            return f"Not searched: max_results must be a whole number, not {max_results!r}"
        try:  # a bad query is the model's to rewrite, as a refused add is: a raise would end the agent's run
            hits = await call("search", query, user_id=user_id, limit=max(1, min(max_results, 50)))
        except InvalidInput as exc:
            return f"Not searched: {exc}"
        return render_hits(hits, query) or "No memories found."

    async def add_memory(content: str) -> str:
        """Remember something the user said or that should be kept for later conversations.

        Args:
            content: The text to remember, in full sentences.
        """
        try:
            result = await call("add", content, user_id=user_id, wait=True)
        except InvalidInput as exc:
            return f"Not remembered: {exc}"
        return f"Remembered ({len(result.changes)} memory changes)."

    async def read_core_memory() -> str:
        """Read the user's core memory: the always-known facts about the user (human) and the assistant (persona)."""
        blocks = await call("core_memory", user_id=user_id)
        return "\n".join(f"[{label}] " + "\n".join(block.dated_lines()) for label, block in blocks.items()
                         if block.value.strip()) \
            or "Core memory is empty."

    async def core_memory_append(label: Literal["human", "persona"], text: str) -> str:
        """Add a line to a core memory block: 'human' for facts about the user, 'persona' for the assistant.

        Args:
            label: Which block: human or persona.
            text: The line to add.
        """
        try:
            block = await call("core_append", label, text, user_id=user_id)
        except (CoreMemoryFull, InvalidInput) as exc:
            return f"Not added: {exc}"
        return f"[{label}] {block.value}"

    return [search_memory, add_memory, read_core_memory, core_memory_append]


__all__ = ["first_input", "input_limit", "inputs_within", "marked", "memory_tools", "message_text", "open_memory",
           "render_hits", "turn_pieces"]
