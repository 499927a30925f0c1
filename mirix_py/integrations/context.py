"""Coarse retrieval for an agent's context, shared by the REST `/context` endpoint and `MirixMemory`.

MIRIX's chat flow first turns the question into topics, then fetches the top items of every memory
type for them. This is that step on its own, for agents that bring their own model: keyword topics
(and a time window when the message names one, "last week", "in May 2023"), the core blocks, and
the best items of the other five types; with the engine's `search_context` N (as every reader's search
has it), each of the first N matches is followed by the turns said around it. Vault items of `high` sensitivity are
never included, and vault secrets stay masked (only their captions are shown). What it returns is
a record (`records.MemoryContext`), which the thin HTTP client reads too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mirix_py.agents.chat import Retrieval, offline_topics
from mirix_py.agents.core_blocks import core_memory
from mirix_py.text.passages import focus
from mirix_py.records import CoreMemory, KnowledgeVaultMemory, MemoryContext, SearchHit, Sensitivity

if TYPE_CHECKING:  # pragma: no cover
    from mirix_py.engine import Mirix


def first_matches(hits: list[SearchHit], max_items: int) -> list[SearchHit]:
    """The first `max_items` matches, each with the context turns that follow it: as in `search`, a turn
    given as context is not counted."""
    kept: list[SearchHit] = []
    matches = 0
    for hit in hits:
        if hit.context_for is None:
            if matches == max_items:
                break
            matches += 1
        kept.append(hit)
    return kept


def shareable(hits: list[SearchHit]) -> list[SearchHit]:
    """`hits` without high-sensitivity vault entries: what a framework's memory may put near a model."""
    return [h for h in hits
            if not (isinstance(h.memory, KnowledgeVaultMemory) and h.memory.sensitivity is Sensitivity.high)]


def handed(retrieval: Retrieval) -> list[SearchHit]:
    """The hits a caller outside the engine may be handed: no high-sensitivity vault entry, the others masked."""
    return [h.model_copy(update={"memory": h.memory.masked()}) if isinstance(h.memory, KnowledgeVaultMemory) else h
            for h in shareable(retrieval.hits)]


def retrieve_context(mx: "Mirix", user_id: str, message: str, *, max_items: int = 10,
                     read_after: str | None = None) -> MemoryContext:
    """Topics, core blocks and up to `max_items` matches (with their context turns) for `message`."""
    flow = mx.readers.side(user_id, after=read_after).chat
    topics = offline_topics(message, flow.now())  # "yesterday" on the user's clock (MIRIX_TIMEZONE), else UTC's
    # core blocks from the store the hits come from (a replica's, with `database_read_url`), as chat reads them
    core: dict[str, CoreMemory] = core_memory(flow.store, user_id)
    # the ranking alone, and the first match of each type it left out only when it leaves room
    ranked = flow.ranking(user_id, message, topics, max_items)
    hits = handed(flow.retrieval(user_id, message, topics, core, ranked))
    if sum(h.context_for is None for h in hits) < max_items:
        floors = flow.floors(user_id, message, topics, ranked)
        if floors:
            hits = handed(flow.retrieval(user_id, message, topics, core, ranked + floors))
    hits = first_matches(hits, max_items)
    # a long memory's text cut to the lines about the message, as MCP, AutoGen and chat put it in a prompt
    hits = [h.model_copy(update={"text": focus(h.text, message)}) for h in hits]
    return MemoryContext(user_id=user_id, message=message, topics=topics.keywords, start=topics.start, end=topics.end,
                         core={label: "\n".join(block.dated_lines()) for label, block in core.items()
                               if block.value.strip()},
                         hits=hits)
