"""Which flows an engine runs: the offline rules always; with a model, the model's update flow (the
rules standing in for its failed parts) and its chat answers. Without a model nothing of autogen
is imported."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING

from mirix_py.agents.chat import ChatFlow
from mirix_py.agents.definitions import AgentDefinition
from mirix_py.agents.flow import Flow
from mirix_py.agents.offline.flow import OfflineFlow
from mirix_py.agents.offline.parser import load_fact_parser
from mirix_py.llm.bounds import CallBounds
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient


@dataclass
class Flows:
    offline: OfflineFlow
    update: Flow  # `offline` without a model
    chat: ChatFlow


def build_flows(store: MemoryStore, searcher: Searcher, client: ChatCompletionClient | None,
                definitions: dict[str, AgentDefinition], *, fact_parser: str, bounds: CallBounds,
                structured_output: str, zone: tzinfo | None, context: int) -> Flows:
    """`bounds` hold every model call; `context`: the turns around the first matches each chat retrieval adds."""
    offline = OfflineFlow(store, searcher, parser=load_fact_parser(fact_parser))
    update: Flow = offline
    if client is not None:
        from mirix_py.agents.update_flow import UpdateFlow  # autogen is needed only with a model
        from mirix_py.llm.bounds import ServerFeatures

        update = UpdateFlow(store, searcher, client, definitions, fallback=offline, bounds=bounds,
                            features=ServerFeatures(structured_output))
    chat = ChatFlow(store, searcher, client, definitions["chat_agent"], bounds=bounds, zone=zone, context=context)
    return Flows(offline, update, chat)
