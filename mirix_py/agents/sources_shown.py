"""A model's memory shown to a reader as the turns it was drawn from.

Memory keeps every turn word for word before any model call (`update_flow`'s verbatim episodes), so
an episode, fact or procedure a model wrote from turns adds what to search by; its own words are
where a weak model's mistakes enter an answer ("Nate: A person who is named Nate." read back as
"Nate describes the stuffed animal as a person who is named Nate"; benchmarks/docs/local_model.md).
With `llm_memories_shown="sources"` a reader (the chat's prompt and targeted search, `/context`,
the framework adapters) is handed, in a model memory's place, the turns it cites in their speakers'
words. A model memory whose turns memory does not hold as turns (screens, a deleted turn) is shown
as it is; so are memories the rules or a caller wrote, and vault entries.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

from mirix_py.records import Memory, MemoryType, SearchHit
from mirix_py.store.memories import MemoryStore
from mirix_py.store.questions import said_ids
from mirix_py.store.summaries import holds_turn

__all__ = ["MemoriesShown", "as_sources"]

MemoriesShown = Literal["sources", "own_words"]
SHOWN_AS_SOURCES = frozenset({MemoryType.episodic, MemoryType.semantic, MemoryType.procedural})


def as_sources(hits: Sequence[SearchHit], store: MemoryStore, user_id: str, model_actors: Collection[str],
               tags: Collection[str] = ()) -> list[SearchHit]:
    """`hits` with each memory a model (an actor of `model_actors`) inserted replaced by the turns it
    cites that are not shown already, in its place and with its score; `tags`: the caller's ids of the
    hits' inputs (`store.questions.said_ids`)."""
    candidates = [h.memory.id for h in hits if h.memory.memory_type in SHOWN_AS_SOURCES and not holds_turn(h.memory)]
    inserted = store.inserted_as(candidates, user_id=user_id) if candidates else {}
    by_model = {i for i, actor in inserted.items() if actor in model_actors}
    if not by_model:
        return list(hits)
    cited = {h.memory.id: said_ids(h.memory.source_ids, tags) for h in hits if h.memory.id in by_model}
    turns = _turns(store, user_id, {c for ids in cited.values() for c in ids})
    shown = {h.memory.id for h in hits if h.memory.id not in by_model}
    out: list[SearchHit] = []
    for hit in hits:
        sources = [t for c in cited.get(hit.memory.id, ()) for t in turns.get(c, ())]
        if hit.memory.id not in by_model or not sources:
            out.append(hit)
            continue
        for turn in sources:
            if turn.id not in shown:
                shown.add(turn.id)
                out.append(SearchHit(text=turn.search_text(), score=hit.score, memory=turn, method=hit.method))
    return out


def _turns(store: MemoryStore, user_id: str, cited: Collection[str]) -> dict[str, list[Memory]]:
    """Cited id -> the turns' own episodes that cite it (oldest first)."""
    if not cited:
        return {}
    made = store.made_from(user_id, sorted(cited), [MemoryType.episodic.value])
    memories = store.get_many(sorted({m for ids in made.values() for m in ids}), user_id=user_id)
    out: dict[str, list[Memory]] = {}
    for c, ids in made.items():
        own = [memories[m] for m in ids if m in memories and holds_turn(memories[m])]
        if own:
            out[c] = sorted(own, key=lambda m: (m.occurred_at is None, m.occurred_at, m.id))
    return out
