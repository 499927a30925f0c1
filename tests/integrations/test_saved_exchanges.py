"""An agent whose conversations an adapter saves in memory, asked the same and similar questions run
after run: its past questions and replies (which restate memory) must not crowd the user's statements
out of the context the next run gets. Agent Framework, OpenAI Agents and AutoGen, on every layout."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from agent_framework import Agent as FrameworkAgent
from agent_framework import BaseChatClient, ChatResponse, Message
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from autogen_core.memory import MemoryContent, MemoryMimeType
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from mirix_py.integrations.agent_framework import MirixContextProvider
from mirix_py.integrations.autogen import MirixMemory
from mirix_py.integrations.context import retrieve_context
from mirix_py.integrations.openai_agents import MirixSession
from mirix_py.store.questions import ANSWER_PREFIX, QUESTION_PREFIX

set_tracing_disabled(True)  # nothing leaves the machine

USER = "kim"
START = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)
FACTS = [  # (day, what the user said): three facts that changed, and others
    (1, "I live in Paris, in a small flat near the Canal Saint-Martin."),
    (1, "I drink coffee every morning, usually a double espresso."),
    (2, "My manager is Ana. She runs the data platform team."),
    (6, "I bought a new road bike, a blue Bianchi."),
    (7, "My favourite food is ramen."),
    (30, "We moved to Berlin last week, the new flat is in Kreuzberg."),
    (31, "Ana left the company, my new manager is Joe."),
    (32, "I stopped drinking coffee, I only drink green tea now."),
]
CURRENT = {  # probe question -> the user's current statement that answers it
    "where do I live?": "We moved to Berlin last week, the new flat is in Kreuzberg.",
    "who is my manager?": "Ana left the company, my new manager is Joe.",
    "do I drink coffee?": "I stopped drinking coffee, I only drink green tea now.",
}
QUESTIONS = [  # twelve runs: the same and similar questions, some restating an old fact
    "where do I live?", "who is my manager?", "do I drink coffee?",
    "where do I live now?", "who's my boss these days?", "do I still drink coffee?",
    "which city do I live in?", "who do I report to?", "what do I drink in the morning?",
    "I live in Paris, right?", "Ana is still my manager, right?", "I drink coffee every morning, don't I?",
]


def reply(question: str) -> str:
    """A model's plausible reply: it restates what memory held, the old fact first."""
    if "live" in question:
        return "You told me you live in Paris, near the Canal Saint-Martin, and later that you moved to Berlin."
    if "manager" in question or "boss" in question or "report" in question:
        return "Your manager is Ana, who runs the data platform team; you later said Joe is your new manager."
    return "You drink coffee every morning, usually a double espresso, though you later said you stopped."


def last_text(messages: Any) -> str:
    return next(m.text for m in reversed(list(messages)) if m.role == "user" and not m.text.startswith("## Memories"))


class ReplyingClient(BaseChatClient):
    """An Agent Framework chat client that replies to the user's last message with `reply`."""

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> ChatResponse:
        return ChatResponse(messages=[Message(role="assistant", contents=[reply(last_text(messages))])],
                            response_id="r")


class ReplyingModel(Model):
    """An Agents SDK model that replies to the user's last message with `reply`."""

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, **kwargs) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        asked = next(str(i["content"]) for i in reversed(items) if isinstance(i, dict) and i.get("role") == "user")
        item = ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed",
                                     content=[ResponseOutputText(type="output_text", text=reply(asked),
                                                                 annotations=[])])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


async def through_agent_framework(mx) -> None:
    agent = FrameworkAgent(client=ReplyingClient(), instructions="Answer from memory.",
                           context_providers=[MirixContextProvider(user_id=USER, mx=mx)])
    session = agent.create_session(session_id="s1")
    for question in QUESTIONS:
        await agent.run(question, session=session)


async def through_openai_agents(mx) -> None:
    agent = Agent(name="assistant", instructions="Answer from memory.", model=ReplyingModel())
    session = MirixSession("s1", USER, mx=mx)
    for question in QUESTIONS:
        await Runner.run(agent, question, session=session)


async def through_autogen(mx) -> None:
    memory = MirixMemory(USER, mx=mx)
    for question in QUESTIONS:  # an app saving each exchange as chat messages
        exchange = [{"role": "user", "content": question}, {"role": "assistant", "content": reply(question)}]
        await memory.add(MemoryContent(content={"messages": exchange}, mime_type=MemoryMimeType.JSON))


ADAPTERS = {"agent_framework": through_agent_framework, "openai_agents": through_openai_agents,
            "autogen": through_autogen}


def remember_facts(mx) -> None:
    for day, text in FACTS:
        mx.add([{"role": "user", "name": "Kim", "content": text}], user_id=USER,
               occurred_at=START + timedelta(days=day - 1))
    mx.flush()


def context_rank(mx, question: str, statement: str) -> int | None:
    """The 1-based rank, among the matches of the context an agent gets for `question`, of the memory
    that is the user's `statement` (None when it is not there)."""
    matches = [h for h in retrieve_context(mx, USER, question).hits if h.context_for is None]
    return next((n for n, h in enumerate(matches, 1) if h.text.endswith(f"Kim: {statement}")), None)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_saved_exchanges_leave_the_users_statements_on_top(mx, adapter):
    remember_facts(mx)
    before = {q: context_rank(mx, q, statement) for q, statement in CURRENT.items()}
    assert all(rank is not None and rank <= 3 for rank in before.values()), before

    asyncio.run(ADAPTERS[adapter](mx))
    mx.flush()

    after = {q: context_rank(mx, q, statement) for q, statement in CURRENT.items()}
    assert all(rank is not None and rank <= 3 for rank in after.values()), (before, after)
    episodes = mx.list(user_id=USER, memory_types=["episodic"], limit=1000)
    assert any(s.startswith(QUESTION_PREFIX) for m in episodes for s in m.source_ids)  # remembered, marked
    # a reply ranks as said (it may hold a tool's result): never marked as chat's own answer is
    assert not any(s.startswith(ANSWER_PREFIX) for m in episodes for s in m.source_ids)
    assert any("assistant:" in m.search_text() for m in episodes)


def test_a_statement_with_a_question_ranks_as_a_statement(mx):
    """Only a message that only asks is marked: what the user states in the same message still counts."""
    async def main():
        agent = FrameworkAgent(client=ReplyingClient(), instructions="Answer.",
                               context_providers=[MirixContextProvider(user_id=USER, mx=mx)])
        await agent.run("My sister Lea is a nurse in Lyon. Where should we eat when she visits?",
                        session=agent.create_session(session_id="s1"))

    asyncio.run(main())
    mx.flush()
    said = [m for m in mx.list(user_id=USER, memory_types=["episodic"], limit=100) if "Lea is a nurse" in m.search_text()]
    assert said and not any(s.startswith(QUESTION_PREFIX) for m in said for s in m.source_ids)
    assert "Lea is a nurse" in mx.search("what does my sister do?", user_id=USER, limit=3)[0].text
