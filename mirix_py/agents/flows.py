"""Which flows an engine runs: the offline rules always; with a model (given, or the one the
settings configure), the model's update flow (the rules standing in for its failed parts) and its
chat answers. Without a model nothing of autogen is imported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mirix_py.agents.chat import ChatFlow
from mirix_py.agents.definitions import AgentDefinition
from mirix_py.agents.flow import Flow
from mirix_py.agents.offline.flow import OfflineFlow
from mirix_py.agents.offline.parser import load_fact_parser
from mirix_py.llm.bounds import CallBounds
from mirix_py.settings import Settings
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher
from mirix_py.boundary.timezones import display_zone, user_zone

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient


@dataclass
class Flows:
    client: ChatCompletionClient | None
    offline: OfflineFlow
    update: Flow  # `offline` without a model
    chat: ChatFlow
    # chat over the primary's store and searcher, for a user whose last write the replica lacks
    # (`store.write_marks`); `chat` itself when chat reads the primary
    chat_on_primary: ChatFlow


def build_flows(store: MemoryStore, searcher: Searcher, settings: Settings, definitions: dict[str, AgentDefinition],
                client: ChatCompletionClient | None = None,
                reading: tuple[MemoryStore, Searcher] | None = None) -> Flows:
    """Every model call is bounded by the settings' `llm_max_tokens` and `llm_timeout_s` (and seeded by
    `llm_seed` when set); each chat retrieval adds the turns around the first `search_context` matches.
    `reading`: the store and searcher chat reads from (a replica's), else `store` and `searcher`."""
    chat_store, chat_searcher = reading or (store, searcher)
    if client is None and settings.llm_configured:
        from mirix_py.llm.clients import build_model_client  # autogen only when a model is configured

        client = build_model_client(settings)
    bounds = CallBounds(settings.llm_max_tokens, settings.llm_timeout_s, seed=settings.llm_seed)
    offline = OfflineFlow(store, searcher, parser=load_fact_parser(settings.fact_parser),
                          zone=user_zone(settings.timezone))
    update: Flow = offline
    if client is not None:
        from mirix_py.agents.update_flow import UpdateFlow  # autogen is needed only with a model
        from mirix_py.llm.bounds import ServerFeatures

        update = UpdateFlow(store, searcher, client, definitions, fallback=offline, bounds=bounds,
                            features=ServerFeatures(settings.llm_structured_output),
                            max_managers=settings.llm_max_managers, prompt_order=settings.llm_prompt_order)
    def chat_over(chat_store: MemoryStore, chat_searcher: Searcher) -> ChatFlow:
        return ChatFlow(chat_store, chat_searcher, client, definitions["chat_agent"], bounds=bounds,
                        zone=display_zone(settings.timezone), context=settings.search_context,
                        question_zone=user_zone(settings.timezone),
                        memories_shown=settings.llm_memories_shown,
                        model_actors=[d.name for d in definitions.values() if d.role == "memory_manager"])

    chat = chat_over(chat_store, chat_searcher)
    return Flows(client, offline, update, chat, chat if chat_store is store else chat_over(store, searcher))
