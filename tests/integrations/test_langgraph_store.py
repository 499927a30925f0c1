"""MirixStore as a LangGraph BaseStore: put/get/search/delete/list_namespaces (sync and async), the
engine's own memories seen through it, and a real `create_react_agent` whose tools use the store,
driven by a scripted chat model."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.base import BaseStore, InvalidNamespaceError

from mirix_py.engine import Mirix
from mirix_py.integrations.langgraph import MirixStore


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def test_put_get_search_delete(mx):
    store = MirixStore(mx)
    store.put(("ada", "memories"), "diet", {"content": "Ada is vegetarian and allergic to peanuts.", "n": 2})
    store.put(("ada", "memories"), "work", {"content": "Ada works as a structural engineer in Porto.", "n": 5})
    store.put(("ada", "episodic"), "trip", {"content": "Ada flew to Oslo for a conference."})
    store.put(("bob", "memories"), "diet", {"content": "Bob eats everything, peanuts included."})

    got = store.get(("ada", "memories"), "diet")
    assert got is not None and got.value == {"content": "Ada is vegetarian and allergic to peanuts.", "n": 2}
    assert got.namespace == ("ada", "memories") and got.key == "diet"
    assert store.get(("ada", "memories"), "nothing") is None
    assert store.get(("bob", "memories"), "diet").value["content"].startswith("Bob")

    hits = store.search(("ada",), query="what food can she not eat", limit=2)
    assert hits[0].key == "diet" and hits[0].score and hits[0].score > 0
    assert all(h.namespace[0] == "ada" for h in hits)  # bob's diet is another user's
    assert [h.key for h in store.search(("ada", "memories"), filter={"n": {"$gt": 3}})] == ["work"]
    assert [h.key for h in store.search(("ada", "episodic"), query="Oslo")] == ["trip"]
    (trip,) = mx.list(user_id="ada", memory_types=["episodic"])  # kept as a memory of the type its path names
    assert trip.summary == "Ada flew to Oslo for a conference."

    store.put(("ada", "memories"), "diet", {"content": "Ada is vegan now."})  # an update keeps one memory
    assert store.get(("ada", "memories"), "diet").value == {"content": "Ada is vegan now."}
    assert store.search(("ada",), query="vegan")[0].key == "diet"
    assert sum(1 for m in mx.list(user_id="ada") if m.memory_type.value == "semantic") == 2

    store.delete(("ada", "memories"), "diet")
    assert store.get(("ada", "memories"), "diet") is None
    assert "diet" not in [h.key for h in store.search(("ada", "memories"))]

    assert store.list_namespaces() == [("ada", "episodic"), ("ada", "memories"), ("bob", "memories")]
    assert store.list_namespaces(prefix=("ada",)) == [("ada", "episodic"), ("ada", "memories")]
    assert store.list_namespaces(suffix=("memories",), max_depth=1) == [("ada",), ("bob",)]
    with pytest.raises(InvalidNamespaceError):
        store.put(("ada", "core"), "x", {"content": "no"})


def test_engine_memories_and_user_position(mx):
    mx.add("My brother Tom is a pilot for a regional airline.", user_id="ada")
    store = MirixStore(mx, user_position=1)  # LangMem's ("memories", "{user_id}")
    hits = store.search(("episodic", "ada"), query="what does Tom do")
    assert hits and "pilot" in hits[0].value["content"] and hits[0].value["memory_type"] == "episodic"
    item = store.get(("episodic", "ada"), hits[0].key)
    assert item is not None and "pilot" in item.value["content"]
    store.put(("memories", "ada"), "k", {"content": "Ada likes tea."})
    assert store.get(("memories", "ada"), "k").value == {"content": "Ada likes tea."}
    assert ("memories", "ada") in store.list_namespaces()


def test_async_calls(mx):
    store = MirixStore(mx)

    async def main():
        await store.aput(("ada", "notes"), "cello", {"text": "Ada plays the cello on Sundays."})
        got = await store.aget(("ada", "notes"), "cello")
        hits = await store.asearch(("ada",), query="which instrument")
        await store.adelete(("ada", "notes"), "cello")
        return got, hits, await store.aget(("ada", "notes"), "cello"), await store.alist_namespaces()

    got, hits, gone, namespaces = asyncio.run(main())
    assert got.value["text"].startswith("Ada plays") and hits[0].key == "cello" and gone is None
    assert namespaces == []


class ScriptedChatModel(BaseChatModel):
    """A chat model whose replies a function writes from the conversation; it 'binds' tools by name."""

    script: Any

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.script(messages))])


def agent_script(messages: list[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"From memory: {last.content}")
    text = str(last.content)
    if text.startswith("Remember"):
        return AIMessage(content="", tool_calls=[{"name": "save_memory", "id": "c1",
                                                  "args": {"content": text.removeprefix("Remember: ")}}])
    return AIMessage(content="", tool_calls=[{"name": "search_memory", "id": "c2", "args": {"query": text}}])


@tool
def save_memory(content: str, store: Annotated[BaseStore, InjectedStore()], config: RunnableConfig) -> str:
    """Save a fact about the user."""
    user = config["configurable"]["user_id"]
    store.put((user, "memories"), f"m{len(store.search((user, 'memories'))) + 1}", {"content": content})
    return "saved"


@tool
def search_memory(query: str, store: Annotated[BaseStore, InjectedStore()], config: RunnableConfig) -> str:
    """Search what is known about the user."""
    hits = store.search((config["configurable"]["user_id"],), query=query, limit=1)
    return hits[0].value["content"] if hits else "nothing"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # create_react_agent moved to langchain.agents in 1.x
def test_create_react_agent_with_the_store(mx):
    store = MirixStore(mx)
    agent = create_react_agent(ScriptedChatModel(script=agent_script), [save_memory, search_memory], store=store)
    ada = {"configurable": {"user_id": "ada"}}
    agent.invoke({"messages": [HumanMessage("Remember: I am allergic to peanuts.")]}, ada)
    assert store.get(("ada", "memories"), "m1").value == {"content": "I am allergic to peanuts."}

    out = agent.invoke({"messages": [HumanMessage("What am I allergic to?")]}, ada)
    assert out["messages"][-1].content == "From memory: I am allergic to peanuts."
    other = agent.invoke({"messages": [HumanMessage("What am I allergic to?")]}, {"configurable": {"user_id": "bob"}})
    assert "peanuts" not in other["messages"][-1].content

    async def ainvoke():
        return await agent.ainvoke({"messages": [HumanMessage("what about peanuts?")]}, ada)
    assert "peanuts" in asyncio.run(ainvoke())["messages"][-1].content


def test_example_runs(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(repo / "examples" / "langgraph_store.py"), "--data-dir",
                          str(tmp_path / "mem")], capture_output=True, text=True, timeout=300, env=env, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "Noted (saved as fact-1)." in out.stdout
    assert "From memory:\n- my brother Tom is a pilot." in out.stdout
    assert "namespaces: [('ada', 'facts')]" in out.stdout


def test_put_items_are_found_among_many_engine_memories(mx):
    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import EpisodicMemory

    mx.store.apply([InsertOp(memory=EpisodicMemory(user_id="ada", summary=f"Coffee, coffee and more coffee at cafe {i}."))
                    for i in range(30)], user_id="ada", actor="test")
    store = MirixStore(mx)
    store.put(("ada", "prefs"), "coffee", {"content": "Ada likes her morning coffee black, without sugar, in a big "
                                                      "mug, before her long walk to the office."})
    assert len(mx.search("coffee", user_id="ada", limit=40)) > 20  # more matches than one search page holds
    assert [h.key for h in store.search(("ada", "prefs"), query="coffee", limit=1)] == ["coffee"]


def test_a_secret_in_a_put_value_goes_to_the_vault(mx):
    store = MirixStore(mx)
    store.put(("ada", "notes"), "vpn", {"content": "VPN password is Tr0ub4dor&3xyz"})
    got = store.get(("ada", "notes"), "vpn")
    assert got is not None and "Tr0ub4dor" not in str(got.value) and "[vault:kv_" in got.value["content"]
    assert "Tr0ub4dor" not in str([i.value for i in store.search(("ada",))])


def test_items_put_with_a_ttl_expire_and_reads_start_it_again(mx):
    from datetime import timedelta

    from mirix_py.records import utcnow
    from waiting import wait_for

    store = MirixStore(mx, ttl={"default_ttl": 60.0, "refresh_on_read": False})
    assert store.supports_ttl
    store.put(("ada", "memories"), "code", {"content": "Ada parks in spot P3-17 this week."}, ttl=0.05)  # 3 s
    store.put(("ada", "memories"), "diet", {"content": "Ada is vegetarian."})  # the config's default: an hour
    store.put(("ada", "memories"), "home", {"content": "Ada lives in Porto."}, ttl=None)  # never
    expiry = {m.summary: m.expires_at for m in mx.list(user_id="ada", memory_types=["semantic"])}
    now = utcnow()
    assert now < expiry["Ada parks in spot P3-17 this week."] <= now + timedelta(seconds=3)
    assert now + timedelta(minutes=59) < expiry["Ada is vegetarian."] <= now + timedelta(minutes=60)
    assert expiry["Ada lives in Porto."] is None

    # a read with refresh_ttl starts the TTL again from now (the config says not to by default)
    before = expiry["Ada is vegetarian."]
    wait_for(lambda: utcnow() > now + timedelta(milliseconds=50), 5.0)
    assert store.get(("ada", "memories"), "diet", refresh_ttl=True) is not None
    refreshed = {m.summary: m.expires_at for m in mx.list(user_id="ada", memory_types=["semantic"])}
    assert refreshed["Ada is vegetarian."] > before and refreshed["Ada lives in Porto."] is None
    store.get(("ada", "memories"), "home")
    assert {m.summary: m.expires_at for m in mx.list(user_id="ada", memory_types=["semantic"])} == refreshed

    wait_for(lambda: store.get(("ada", "memories"), "code") is None, 30.0)
    assert "code" not in [h.key for h in store.search(("ada",), query="Where does Ada park?")]
    # put again under the same key once expired (its row is still there until the sweep): a fresh item
    store.put(("ada", "memories"), "code", {"content": "Ada parks in spot B2-04 from now on."})
    assert store.get(("ada", "memories"), "code").value == {"content": "Ada parks in spot B2-04 from now on."}
    with pytest.raises(ValueError, match="ttl"):
        store.put(("ada", "memories"), "x", {"content": "no"}, ttl=-1)


def test_a_store_without_a_ttl_config_keeps_items_put_without_one(mx):
    store = MirixStore(mx)
    store.put(("ada", "memories"), "diet", {"content": "Ada is vegetarian."})
    (memory,) = mx.list(user_id="ada", memory_types=["semantic"])
    assert memory.expires_at is None
