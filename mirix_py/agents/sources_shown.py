"""A model's memory shown to a reader as the turns it was drawn from.

Memory keeps every turn word for word before any model call (`update_flow`'s verbatim episodes), so
an episode, fact or procedure a model wrote from turns adds what to search by; its own words are
where a weak model's mistakes enter an answer ("Nate: A person who is named Nate." read back as
"Nate describes the stuffed animal as a person who is named Nate"; benchmarks/docs/local_model.md).
With `llm_memories_shown="sources"` a reader (the chat's prompt and targeted search, `/context`,
the framework adapters' contexts) is handed, in a model memory's place, the turns it cites in their speakers'
words. With `"keys"` (the default) those turns take the model memory's rank but no extra room: the reader
gets as many memories as the hits hold besides the model's, the lowest ranked giving way, so the
model's memories decide which turns are shown and never lengthen a weak answerer's prompt (added
turns cost a 0.5B answerer more than they brought; benchmarks/docs/local_model.md). With `"none"` a
reader is handed none of them: it gets what the rules kept, as without a model. A model memory whose
turns memory does not hold as turns (screens, a deleted turn) is shown as it is, except with
`"none"`; memories the rules or a caller wrote, and vault entries, are always shown as they are.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

from mirix_py.records import Memory, MemoryType, SearchHit
from mirix_py.store.memories import MemoryStore
from mirix_py.store.questions import INPUT_PREFIX, said_ids
from mirix_py.store.summaries import holds_turn

__all__ = ["MemoriesShown", "as_keys", "as_sources", "without_model"]

MemoriesShown = Literal["sources", "keys", "none", "own_words"]
SHOWN_AS_SOURCES = frozenset({MemoryType.episodic, MemoryType.semantic, MemoryType.procedural})


def as_sources(hits: Sequence[SearchHit], store: MemoryStore, user_id: str, model_actors: Collection[str],
               tags: Collection[str] = ()) -> list[SearchHit]:
    """`hits` with each memory a model (an actor of `model_actors`) inserted replaced by the turns it
    cites that are not shown already, in its place and with its score; `tags`: the caller's ids of the
    hits' inputs (`store.questions.said_ids`)."""
    return _sourced(hits, store, user_id, model_actors, tags)[0]


def as_keys(hits: Sequence[SearchHit], store: MemoryStore, user_id: str, model_actors: Collection[str],
            tags: Collection[str] = ()) -> list[SearchHit]:
    """`as_sources`, cut to as many hits as `hits` holds besides the model memories replaced: the
    turns a model's memory cites take its rank, and the lowest ranked hits give way to them."""
    out, replaced = _sourced(hits, store, user_id, model_actors, tags)
    return out[:len(hits) - replaced]


def without_model(hits: Sequence[SearchHit], store: MemoryStore, user_id: str, model_actors: Collection[str],
                  tags: Collection[str] = ()) -> list[SearchHit]:
    """`hits` without the episodes, facts and procedures a model (an actor of `model_actors`) inserted."""
    by_model = _by_model(hits, store, user_id, model_actors)
    return [h for h in hits if h.memory.id not in by_model]


def _by_model(hits: Sequence[SearchHit], store: MemoryStore, user_id: str, model_actors: Collection[str]) -> set[str]:
    """Ids of the hits' episodes, facts and procedures (not turns) a model inserted."""
    candidates = [h.memory.id for h in hits if h.memory.memory_type in SHOWN_AS_SOURCES and not holds_turn(h.memory)]
    inserted = store.inserted_as(candidates, user_id=user_id) if candidates else {}
    return {i for i, actor in inserted.items() if actor in model_actors}


def _sourced(hits: Sequence[SearchHit], store: MemoryStore, user_id: str, model_actors: Collection[str],
             tags: Collection[str]) -> tuple[list[SearchHit], int]:
    """`as_sources`'s hits, and how many model memories gave their place to turns."""
    by_model = _by_model(hits, store, user_id, model_actors)
    if not by_model:
        return list(hits), 0
    turns = _turns(store, user_id, [h.memory for h in hits if h.memory.id in by_model], tags)
    shown = {h.memory.id for h in hits if h.memory.id not in by_model}
    out: list[SearchHit] = []
    replaced = 0
    for hit in hits:
        sources = turns.get(hit.memory.id, [])
        if hit.memory.id not in by_model or not sources:
            out.append(hit)
            continue
        replaced += 1
        for turn in sources:
            if turn.id not in shown:
                shown.add(turn.id)
                out.append(SearchHit(text=turn.search_text(), score=hit.score, memory=turn, method=hit.method))
    return out, replaced


def _turns(store: MemoryStore, user_id: str, memories: Sequence[Memory], tags: Collection[str]
           ) -> dict[str, list[Memory]]:
    """Memory id -> the turns' own episodes it cites, in the order it cites them (a turn's episodes
    oldest first). A model's memory names the inputs of its batches among its sources; its turns are
    looked for there (a caller's message ids need not be unique across inputs), else everywhere.
    Two reads for all the memories (and two more only for memories naming no input)."""
    cited = {m.id: said_ids(m.source_ids, tags) for m in memories}
    inputs = {m.id: {s for s in m.source_ids if s.startswith(INPUT_PREFIX)} for m in memories}
    made: dict[str, list[str]] = {}
    for scoped in (True, False):
        group = [m.id for m in memories if cited[m.id] and bool(inputs[m.id]) == scoped]
        if group:
            by_cited = store.made_from(user_id, sorted({c for i in group for c in cited[i]}), [MemoryType.episodic.value],
                                    within=sorted({s for i in group for s in inputs[i]}) if scoped else None)
            for c, ids in by_cited.items():
                made.setdefault(c, []).extend(i for i in ids if i not in made.get(c, ()))
    episodes = store.get_many(sorted({e for ids in made.values() for e in ids}), user_id=user_id)
    turns = {e.id: e for e in episodes.values() if holds_turn(e)}
    out: dict[str, list[Memory]] = {}
    for memory in memories:
        found: dict[str, Memory] = {}
        for c in cited[memory.id]:
            own = [turns[e] for e in made.get(c, ()) if e in turns
                   and (not inputs[memory.id] or inputs[memory.id] & set(turns[e].source_ids))]
            found.update((t.id, t) for t in sorted(own, key=lambda t: (t.occurred_at is None, t.occurred_at, t.id)))
        out[memory.id] = list(found.values())
    return out
