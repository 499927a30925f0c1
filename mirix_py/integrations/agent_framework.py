"""`MirixContextProvider`: mirix-py memory for Microsoft Agent Framework agents, in the shape of that
framework's `Mem0ContextProvider`: before each run it adds what memory knows about the input, after
it it sends the run's messages to the engine.

    from agent_framework import Agent
    from mirix_py.integrations.agent_framework import MirixContextProvider

    memory = MirixContextProvider(user_id="ada", mx=mx)        # or base_url=..., api_key=... (a `mirix serve`)
    agent = Agent(client=chat_client, instructions="...", context_providers=[memory])

Retrieval is the coarse step MIRIX's chat agent takes (topics from the input, core memory and the
best matches of every type in one ranking; no high-sensitivity vault items, secrets masked), added as one user
message after `context_prompt`, as mem0's provider does. After the run, the user and assistant
messages (input and response) go to the engine as one input, source id `agent-framework:<session id>`;
a run longer than the engine's `max_input_chars` as consecutive inputs, a longer message's text cut at
paragraph, line, sentence or word breaks (`integrations.tools.inputs_within`; over REST the server's
limit, from its /health), so no length fails a run and every word said is remembered, in order.
Each user message that only asks (every sentence ends with "?") is marked as chat marks its question
(`integrations.tools.marked`): search ranks it below what the user said, so the questions of many runs
do not crowd the user's statements out of the next run's context.
Both are made plain first (`text.storable.printable`: a terminal's escape sequences dropped, form feeds
made line breaks), so a control character in the input or the reply fails no run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from agent_framework import ContextProvider, Message

from mirix_py.integrations.tools import input_limit, inputs_within, marked, open_memory
from mirix_py.text.storable import printable


def _plain_text(message: Any) -> str:
    """A message's text as plain text (empty for none)."""
    return printable(message.text) if message is not None and message.text else ""


def _role(message: Any) -> str:
    role = getattr(message, "role", "")
    return str(getattr(role, "value", role))


class MirixContextProvider(ContextProvider):
    """Adds a user's mirix memory before each agent run and remembers the run's messages after it."""

    DEFAULT_CONTEXT_PROMPT = "## Memories\nConsider the following memories when answering user questions:"
    DEFAULT_SOURCE_ID: ClassVar[str] = "mirix"

    def __init__(self, source_id: str = DEFAULT_SOURCE_ID, *, user_id: str, mx: Any = None,
                 data_dir: str | Path | None = None, base_url: str | None = None, api_key: str | None = None,
                 context_prompt: str | None = None, max_items: int = 10, remember: bool = True,
                 wait: bool = True) -> None:
        super().__init__(source_id)
        self.user_id = user_id
        self.memory, self._owned = open_memory(mx, data_dir=data_dir, base_url=base_url, api_key=api_key)
        self.context_prompt = context_prompt or self.DEFAULT_CONTEXT_PROMPT
        self.max_items, self.remember, self.wait = max_items, remember, wait

    def _context(self, text: str) -> str:
        if hasattr(self.memory, "chat_flow"):  # an embedded engine
            from mirix_py.integrations.context import retrieve_context

            return retrieve_context(self.memory, self.user_id, text, max_items=self.max_items).render()
        return self.memory.context(text, user_id=self.user_id, max_items=self.max_items).render()

    async def before_run(self, *, agent: Any, session: Any, context: Any, state: dict[str, Any]) -> None:
        """Retrieve memory for the input messages and add it to the context as one user message."""
        text = "\n".join(t for t in map(_plain_text, context.input_messages) if t.strip())
        if not text.strip():
            return
        found = await asyncio.to_thread(self._context, text)
        if found:
            context.extend_messages(self.source_id, [Message(role="user", contents=[f"{self.context_prompt}\n{found}"])])

    async def after_run(self, *, agent: Any, session: Any, context: Any, state: dict[str, Any]) -> None:
        """Send the run's user and assistant messages, in plain text and marked (`marked`: a mere
        question states nothing), to the engine as one input (more, in order, when they are over
        its limit)."""
        if not self.remember:
            return
        messages = list(context.input_messages)
        if context.response is not None and context.response.messages:
            messages += list(context.response.messages)
        said = [{"role": _role(m), "content": _plain_text(m)} for m in messages if _role(m) in ("user", "assistant")]
        turns = [marked(t) for t in said if t["content"].strip()]
        if turns:
            source = f"agent-framework:{getattr(session, 'session_id', None) or context.session_id or 'run'}"
            await asyncio.to_thread(self._remember, turns, source[:256])

    def _remember(self, turns: list[dict[str, str]], source_id: str) -> None:
        for said in inputs_within(turns, input_limit(self.memory)):
            self.memory.add(said, user_id=self.user_id, source_id=source_id, wait=self.wait)

    async def __aenter__(self) -> "MirixContextProvider":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned:
            self.memory.close()


__all__ = ["MirixContextProvider"]
