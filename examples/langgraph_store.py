"""A LangGraph ReAct agent whose long-term memory is mirix-py (`MirixStore`, a LangGraph `BaseStore`).

    python examples/langgraph_store.py            # offline: a scripted chat model calls the tools

The agent's tools read and write the store it was given (`create_react_agent(..., store=store)`);
namespaces start with the user id, and search is the engine's hybrid search. Swap the scripted model
for any LangChain chat model that calls tools (e.g. `ChatOpenAI`) to run it for real.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from typing import Annotated, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.base import BaseStore

from mirix_py.integrations.langgraph import MirixStore


@tool
def remember(fact: str, store: Annotated[BaseStore, InjectedStore()], config: RunnableConfig) -> str:
    """Save a fact about the user for later conversations."""
    user = config["configurable"]["user_id"]
    key = f"fact-{len(store.search((user, 'facts'), limit=1000)) + 1}"
    store.put((user, "facts"), key, {"content": fact})
    return f"saved as {key}"


@tool
def recall(query: str, store: Annotated[BaseStore, InjectedStore()], config: RunnableConfig) -> str:
    """Search what is known about the user."""
    hits = store.search((config["configurable"]["user_id"],), query=query, limit=3)
    return "\n".join(f"- {h.value['content']}" for h in hits) or "nothing"


class ScriptedChatModel(BaseChatModel):
    """Stands in for a real model: 'Remember: X' calls `remember`, a question calls `recall`, a tool
    result is answered with."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"Noted ({last.content})." if last.name == "remember"
                              else f"From memory:\n{last.content}")
        elif str(last.content).startswith("Remember:"):
            reply = AIMessage(content="", tool_calls=[{"name": "remember", "id": "t1",
                                                       "args": {"fact": str(last.content)[9:].strip()}}])
        else:
            reply = AIMessage(content="", tool_calls=[{"name": "recall", "id": "t2", "args": {"query": last.content}}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def main(data_dir: str) -> None:
    store = MirixStore(data_dir=data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of langchain.agents
        agent = create_react_agent(ScriptedChatModel(), [remember, recall], store=store)
    ada = {"configurable": {"user_id": "ada"}}
    for text in ("Remember: my brother Tom is a pilot.", "Remember: I'm allergic to peanuts.",
                 "What does my brother do?"):
        out = agent.invoke({"messages": [HumanMessage(text)]}, ada)
        print(f"> {text}\n{out['messages'][-1].content}")
    print("namespaces:", store.list_namespaces())
    store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="where memories live (default: a temp dir)")
    args = parser.parse_args()
    main(args.data_dir or tempfile.mkdtemp(prefix="mirix-langgraph-"))
