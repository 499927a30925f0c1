"""Search over one user's memories: BM25, embedding, hybrid (RRF of both, and of whole sessions)
and plain substring.

Ranking helpers are pure functions; `Searcher` only gathers candidate lists and loads records.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from collections import Counter
from datetime import datetime
from typing import Callable, Iterable, Mapping, Sequence

from sqlalchemy import bindparam, select
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput
from mirix_py.records import CoreMemory, EpisodicMemory, Memory, MemoryType, SearchHit, SearchMethod
from mirix_py.store import neighbours, sessions
from mirix_py.store.embeddings import CachedEmbedder
from mirix_py.store.fulltext import Filters, Part, PartHit, merge_parts
from mirix_py.store.memories import MemoryStore, Provenance
from mirix_py.store.names import actor_leg, named_actors, without_names
from mirix_py.store.questions import QUESTION_POOL
from mirix_py.store.restatements import fuse_apart, restating, weigh_down
from mirix_py.store.summaries import TURN_EVENT
from mirix_py.store.tables import MemoryRow
from mirix_py.store.vault_subject import weigh_down_other_subjects
from mirix_py.text import storable
from mirix_py.text.clauses import question_parts
from mirix_py.text.moments import asked_stems, asks_one_moment, sentences_asked
from mirix_py.text.small_talk import WHOLE_HITS, without_small_talk
from mirix_py.text.words import STOPWORDS, query_terms, text_terms

log = logging.getLogger("mirix_py.search")

MAX_SEARCH_HITS = 10_000  # a ranking is read from its top; more is a listing (`list`)
MAX_SUBSTRING = 10_000  # characters of a `string` search (SQLite refuses a LIKE pattern over 50,000 bytes)

# RRF's constant: 60 in the original paper. At 60, an item ranked ~50th by both legs outscores one
# ranked 1st by one leg, so deep consensus crowds out strong single-leg matches. On LoCoMo every k
# from 3 to 15 read alike and above 60 (benchmarks/docs/locomo_recall.md), so 10 is no knife edge.
RRF_K = 10


def rrf_fuse(rankings: Sequence[Sequence[str]], k: int = RRF_K,
             weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: sum of weight / (k + rank) over the lists an item appears in.

    Equal sums are common (ranks a and b in one list tie with b and a in the other): they go to the
    item the first ranking placed higher, then the next ranking, and only then to the id. Memory ids
    are random, so ordering ties by id made the order, and which hits `context` expands, change from
    one ingestion to the next (LoCoMo conv-30#75 lost its evidence that way)."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    positions: list[dict[str, int]] = []
    for ranking, weight in zip(rankings, weights):
        seen: dict[str, int] = {}
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            seen.setdefault(item, rank)
        positions.append(seen)
    absent = max((len(r) for r in rankings), default=0) + 1
    return sorted(scores.items(),
                  key=lambda kv: (-kv[1], *(p.get(kv[0], absent) for p in positions), kv[0]))


# Hybrid's third leg: whole sessions (`store.sessions`: each input's episodes as one BM25
# document). The episodes of the query's top SESSION_TOP sessions, session by session and within one
# in the order the other two legs' fusion gives them, are fused at SESSION_WEIGHT: a turn that shares
# no word with the question still ranks when its session is about it. On LoCoMo dev (750 words) a
# replay over S = 1-3 and w = 0.25/0.5/1 gave its best at S = 3, w = 0.5, which is where these come
# from: the weight is in-sample; leave-one-conversation-out over S at w = 0.5 picked S = 3 in every
# fold, and every conversation gained (benchmarks/README.md, "Session and entity indexes"). In the
# engine (FTS5's BM25: stemmed, every token counted, statistics over all users) a fresh `mirix eval
# locomo` gained overall (0.8076 -> 0.8173 evidence) but lost in conv-30, so it is off by default
# (`Settings.session_leg`, MIRIX_SESSION_LEG=1 turns it on).
SESSION_TOP = 3
SESSION_WEIGHT = 0.5
SESSION_MEMBERS = 200  # episodes listed per session at most (the first, in time order)
SESSION_TIMED_FETCH = 4  # with a time window, this many times SESSION_TOP sessions are looked at


def session_leg(ranked: Sequence[str], members: Mapping[str, Sequence[str]], fused: Sequence[str]) -> list[str]:
    """The episodes of the `ranked` sessions (best first), session by session; within one, those the
    `fused` ranking holds in its order, then the rest in the order `members` lists them (time)."""
    position = {m: i for i, m in enumerate(fused)}
    leg: list[str] = []
    for session in ranked:
        given = list(dict.fromkeys(members.get(session, ())))
        order = {m: i for i, m in enumerate(given)}
        leg += sorted(given, key=lambda m: (position.get(m, len(position)), order[m]))
    return leg


def top_sessions(scored: Sequence[tuple[str, float]], k: int) -> list[str]:
    """The best `k` session ids of `scored` (higher is better), equal scores by id, not index order."""
    return [i for i, _ in sorted(scored, key=lambda item: (-item[1], item[0]))[:k]]


# A question that names people the memory heard from (the actors of the user's episodes,
# `MemoryStore.actors`) is also searched without the names (`store.names`): a name weighs on a
# sentence's embedding ("Jon: Bye!" lies close to any question about Jon) more than on a BM25
# score. Fused: both legs of the
# name-free question at NAME_FREE_WEIGHT, the question's own full-text leg (and session leg, when
# on) at QUESTION_SHARE of its weight, its vector leg left out, and a leg of the named people's own
# memories among the first `pool` of that fusion, in its order, at ACTOR_WEIGHT. Chosen on LoCoMo dev
# with benchmarks/locomo_hops.py, every leave-one-conversation-out fold gaining, ACTOR_WEIGHT again on
# a store per conversation: a user's own store counts a speaker's name in most of its memories, so
# full text barely weighs it and the actor leg is what prefers the named person's own words
# (benchmarks/docs/locomo_hops.md). Such a question costs one more full-text leg, and its
# name-free form is embedded instead of itself (`Searcher._hybrid`); one that names nobody runs as
# without it (`Settings.name_legs`, MIRIX_NAME_LEGS=0 turns it off). Names are known before any leg
# runs: the user's actors come from an index, so the legs never wait for results to learn them.
NAME_FREE_WEIGHT = 1.0
QUESTION_SHARE = 0.5
ACTOR_WEIGHT = 2.0


def fuse_named(legs: Sequence[Sequence[str]], weights: Sequence[float], name_free: Sequence[Sequence[str]],
               actors: Callable[[Sequence[str]], Mapping[str, str | None]], named: Sequence[str],
               top: int) -> list[tuple[str, float]]:
    """RRF of the question's `legs` (its full-text leg, and others but the vector one, at
    QUESTION_SHARE of their `weights`) and its `name_free` legs, then again with the `named` actors'
    memories among the first `top` of it as one more leg; `actors(ids)` says who said each of those
    ids (None: not an episode)."""
    ranked = [*legs, *name_free]
    shares = [w * QUESTION_SHARE for w in weights] + [NAME_FREE_WEIGHT] * len(name_free)
    first = [i for i, _ in rrf_fuse(ranked, weights=shares)[:top]]
    return rrf_fuse([*ranked, actor_leg(first, actors(first), named)], weights=[*shares, ACTOR_WEIGHT])


def fuse_parts(parts: Sequence[Sequence[tuple[str, float]]], k: int = RRF_K) -> list[tuple[str, float]]:
    """The rankings of the questions a joined question joins (`text.clauses.question_parts`), taken in
    turn: the best of each, then the second of each..., a memory given once, scored 1 / (k + place).
    In turn, not summed: a memory that matches both halves loosely would outrank the best answer to
    one of them, and the half with more matching words would fill the first places again."""
    order: dict[str, None] = {}
    for rank in range(max((len(p) for p in parts), default=0)):
        for part in parts:
            if rank < len(part):
                order.setdefault(part[rank][0], None)
    return [(memory_id, 1.0 / (k + place)) for place, memory_id in enumerate(order, start=1)]


# Full text: equal BM25 scores are common (same term counts, same length) and FTS5 returns them in
# rowid order, a hash of the random memory id, so which of a tied group made the cut changed between
# ingestions: the index orders the group at the cut by its memories (`fulltext.TIE_ORDER_SQLITE`,
# the same order as `tie_key`). Vectors: the leg asks for VECTOR_OVERFETCH times what it keeps.
# Chroma's HNSW results differ between builds and even between processes opening the same data dir,
# and its top k missed true neighbours (LoCoMo dev, 997 questions, top 180 against an exact cosine
# scan: 155-185 missed per process; top 360 cut to 180: 0-2; top 720: 0 in four processes).
VECTOR_OVERFETCH = 4
MAX_OVERFETCH = 32  # a group tied at the cut may widen the fetch up to this many times k
# A type filter that leaves out at most this many of the user's memories (chat's coarse retrieval leaves
# out the core blocks) runs the full-text and vector legs unfiltered, fetching that many more and
# dropping them: filtered, a large user's full-text query joins every row of the user's types
LEFT_OUT_IDS = 64
# Read by primary key, built once with the ids bound at each call (see `MemoryStore.get_many`)
_TIE_KEYS_BY_ID = select(col(MemoryRow.id), col(MemoryRow.occurred_at), col(MemoryRow.text)) \
    .where(col(MemoryRow.id).in_(bindparam("ids", expanding=True)))
_TIMES_BY_ID = select(col(MemoryRow.id), col(MemoryRow.user_id), col(MemoryRow.occurred_at)) \
    .where(col(MemoryRow.id).in_(bindparam("ids", expanding=True)))


def tied_ids(scored: Sequence[tuple[str, float]], k: int) -> set[str]:
    """Ids among the best `k` of `scored` (best first), or tied with the k-th, whose score another
    item shares: the only ones whose order the index chose arbitrarily."""
    if not scored:
        return set()
    cut = scored[min(k, len(scored)) - 1][1]
    counts = Counter(score for _, score in scored if score >= cut)
    return {i for i, score in scored if score >= cut and counts[score] > 1}


def cut_is_open(scored: Sequence[tuple[str, float]], k: int, fetched: int) -> bool:
    """Whether items tied with the k-th of `scored` may lie beyond what was fetched: all `fetched`
    came back and the last shares the k-th's score."""
    return fetched > k and len(scored) >= fetched and scored[-1][1] == scored[k - 1][1]


def settle_ties(scored: Sequence[tuple[str, float]], keys: Mapping[str, tuple], k: int) -> list[tuple[str, float]]:
    """The best `k` of `scored` (id, score; higher is better), equal scores ordered by `keys` (then
    the id) instead of the order the index returned them in, so two ingestions of the same rows keep
    the same candidates in the same order whatever their ids or index layout."""
    return sorted(scored, key=lambda item: (-item[1], keys.get(item[0], ()), item[0]))[:k]


def tie_key(occurred_at: datetime | None, text: str) -> tuple:
    """Equal scores go earlier-said first (conversation order, as raw-turn rankings had), then by
    text; memories without a time after dated ones."""
    return (occurred_at is None, occurred_at or datetime.min, text)


def with_context(store: MemoryStore, hits: list[SearchHit], top: int, *, start: datetime | None = None,
                 end: datetime | None = None) -> list[SearchHit]:
    """`hits` with the neighbours of the first `top` after each (see `Searcher.search`); a search
    bounded in time shows no turn from outside its window."""
    extra = neighbours.around(store, [h.memory for h in hits], top, start=start, end=end)
    out: list[SearchHit] = []
    given: set[str] = set()
    for hit in hits:
        if hit.memory.id in given:
            continue
        out.append(hit)
        given.add(hit.memory.id)
        for n in extra.get(hit.memory.id, []):
            out.append(SearchHit(text=n.search_text(), score=hit.score, memory=n, method=hit.method,
                                 context_for=hit.memory.id))
            given.add(n.id)
    return out


class Searcher:
    def __init__(self, store: MemoryStore, *, session_leg: bool = False, name_legs: bool = True,
                 whole_hits: int = WHOLE_HITS) -> None:
        """`session_leg`: hybrid search fuses whole sessions as a third leg (off, the default: the two
        legs only; see SESSION_TOP). `name_legs`: a hybrid search that names people is also run
        without the names (on, the default; see NAME_FREE_WEIGHT). `whole_hits`: the first hits shown
        as said; the chat turns after them without small talk, and to a question asking for one moment
        as their sentences that share a word with it (`hit_text`)."""
        if whole_hits < 0:
            raise InvalidInput("whole_hits must be zero or positive")
        self.store = store
        self.session_leg = session_leg
        self.name_legs = name_legs
        self.whole_hits = whole_hits
        inner = store.embedder
        self.embedder = None if inner is None else (inner if isinstance(inner, CachedEmbedder) else CachedEmbedder(inner))
        self._warned = False
        self._pool: ThreadPoolExecutor | None = None
        self._parts_pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _workers(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mirix-search")
            return self._pool

    def _part_workers(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._parts_pool is None:
                self._parts_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mirix-search-part")
            return self._parts_pool

    def close(self) -> None:
        with self._pool_lock:
            for pool in (self._pool, self._parts_pool):
                if pool is not None:
                    pool.shutdown(wait=True)
            self._pool = self._parts_pool = None

    @property
    def vector_ready(self) -> bool:
        return self.embedder is not None and self.store.vectors is not None

    def search(self, query: str, *, user_id: str, limit: int = 10, memory_types: Sequence[MemoryType | str] | None = None,
               start: datetime | None = None, end: datetime | None = None,
               method: SearchMethod | str = SearchMethod.hybrid, context: int = 0) -> list[SearchHit]:
        """The best `limit` matches; with `context` N, each of the first N that is an episode is
        followed by the turns said just before and after it in the same input (`store.neighbours`),
        marked `context_for` and not counted in `limit` (a match already given as context is not
        repeated). A hybrid search for a question that joins questions ("…, and when …?") searches
        each and takes their rankings in turn (`fuse_parts`). What restates others follows it
        (`restatements`), and so does a vault entry about another subject than the one asked
        (`vault_subject`)."""
        query = (query or "").strip()
        if not query:
            raise InvalidInput("search query is empty")
        if found := storable.problem(query):
            raise InvalidInput(f"search query {found}")
        if limit <= 0:
            raise InvalidInput("limit must be positive")
        if limit > MAX_SEARCH_HITS:
            raise InvalidInput(f"limit must be at most {MAX_SEARCH_HITS:,} (to read every memory, page through list())")
        if context < 0:
            raise InvalidInput("context must be zero or positive")
        try:
            method = SearchMethod(method)
        except ValueError as exc:
            raise InvalidInput(f"unknown search method {method!r}: use {[m.value for m in SearchMethod]}") from exc
        if method is SearchMethod.string and len(query) > MAX_SUBSTRING:
            raise InvalidInput(f"a string search is at most {MAX_SUBSTRING:,} characters (this one is {len(query):,})")
        asked_types = frozenset(MemoryType(t).value for t in memory_types) if memory_types else None
        types, left_out = self._types_filter(user_id, asked_types)
        if types == []:
            return []
        if (start is not None or end is not None) and not self.store.holds_between(
                user_id=user_id, memory_types=types or sorted(self.store.types_held(user_id=user_id)), start=start, end=end):
            return []  # nothing in the time range: every leg would come back empty
        filters = Filters(user_id=user_id, memory_types=types, start=start, end=end, left_out=left_out)

        if method in (SearchMethod.hybrid, SearchMethod.embedding) and not self.vector_ready:
            if not self._warned:
                log.warning("no embedder loaded: %s search runs on full text (BM25) only", method.value)
                self._warned = True
            method_used = SearchMethod.bm25
        else:
            method_used = method

        depth = max(limit * 3, 30)
        pool = limit + QUESTION_POOL  # a few more, so facts weighed against chat questions can move up
        if method_used is SearchMethod.bm25:
            ranked = self._bm25(query, filters, pool)
        elif method_used is SearchMethod.embedding:
            ranked = self._vector(query, filters, pool)
        elif method_used is SearchMethod.string:
            ranked = self._substring(query, filters, pool)
        else:
            actors = self.store.actors(user_id=user_id) if self.name_legs else []  # whom a question can name
            if parts := question_parts(query):  # a question joining questions: each searched, rankings fused
                ranked = fuse_parts([self._hybrid(p, filters, depth, pool, actors) for p in parts])[:pool]
            else:
                ranked = self._hybrid(query, filters, depth, pool, actors)
        records = self.store.get_many([i for i, _ in ranked], user_id=user_id)
        # a memory past its expiry (not deleted yet) or a vector whose row is gone: the next ones take its place
        ranked = [(i, score) for i, score in ranked if i in records]
        tags = self.store.input_tags.cited((m.source_ids for m in records.values()), user_id=user_id)
        ranked = weigh_down_other_subjects(weigh_down(ranked, records, tags), records, query)[:limit]
        asked = self._moment_asked(query, user_id, actors if method_used is SearchMethod.hybrid and self.name_legs else None)
        hits: list[SearchHit] = []
        for memory_id, score in ranked:
            memory = records.get(memory_id)
            if memory is None:  # a vector whose row is gone: skip, `doctor` cleans it
                continue
            if asked_types is not None and memory.memory_type.value not in asked_types:
                continue  # written since `_types_filter` found the user had none of its type
            whole = len(hits) < self.whole_hits
            hits.append(SearchHit(text=hit_text(memory, query, whole=whole, asked=None if whole else asked),
                                  score=score, memory=memory, method=method))
        return with_context(self.store, hits, context, start=start, end=end) if context else hits

    def _types_filter(self, user_id: str, asked: frozenset[str] | None) -> tuple[list[str] | None, frozenset[str] | None]:
        """The memory types to filter the legs on, and the ids that filter leaves out when they are at
        most LEFT_OUT_IDS (`Filters.left_out`): no filter when `asked` is None or holds every type the
        user has (a filter that leaves nothing out still costs the vector leg a wider fetch), [] when
        the user has none of them (nothing to search), else the asked types the user has."""
        if asked is None:
            return None, None
        held = self.store.types_held(user_id=user_id)
        if held <= asked:
            return (None if held else []), None
        types = sorted(asked & held)
        if not types:
            return [], None
        left_out = self.store.ids_of_types(user_id=user_id, memory_types=sorted(held - asked), at_most=LEFT_OUT_IDS)
        return types, None if left_out is None else frozenset(left_out)

    def _moment_asked(self, query: str, user_id: str, actors: Sequence[str] | None) -> frozenset[str] | None:
        """For a question asking for one moment (`text.moments`), the words a chat turn's sentence
        must share with it to be shown past the first `whole_hits`: the question's without
        the names of the user's actors it holds (`actors`, read here when not given). None for any
        other question."""
        if not asks_one_moment(query):
            return None
        named = named_actors(query, self.store.actors(user_id=user_id) if actors is None else actors)
        return asked_stems(without_names(query, named) if named else query)

    def _hybrid(self, query: str, filters: Filters, depth: int, pool: int,
                actors: Sequence[str]) -> list[tuple[str, float]]:
        """The first `pool` of the fusion of the full-text and vector legs (and the session leg, when
        on), or with the name-free legs of `fuse_named` when the query names one of the `actors`
        (whom the user's episodes were said by, `MemoryStore.actors`; [] with the name legs off).

        The legs run side by side: the full-text legs in worker threads (SQLite releases the GIL), the
        query embedding here on one thread (the MiniLM embedder uses one for a short text; with two the
        legs fought over both cores). A query that names someone is embedded without the names only:
        its own vector leg is not part of the fusion. Each leg reads what its candidates cite and who
        said them (`MemoryStore.provenance_of`) as soon as it is back, on its own thread."""
        assert self.embedder is not None
        workers = self._workers()
        user_id = filters.user_id
        session_fetch = workers.submit(self._sessions, query, filters) if self._with_sessions(filters) else None
        named = named_actors(query, actors)
        rest = without_names(query, named) if named else ""
        lexical_legs = workers.submit(self._lexical_legs, query, rest, filters, depth)
        try:
            semantic = [i for i, _ in self._vector(rest or query, filters, depth)]
            provenance = self.store.provenance_of(semantic, user_id=user_id)
        finally:
            lexical, rest_lexical, lexical_provenance = lexical_legs.result()
            found = session_fetch.result() if session_fetch is not None else None
        provenance.update(lexical_provenance)
        session = [session_leg(found[0], found[1], [i for i, _ in rrf_fuse([lexical, semantic])])] \
            if found and found[0] else []
        if not rest:
            legs = [lexical, semantic, *session]
            weights = [1.0] * (len(legs) - len(session)) + [SESSION_WEIGHT] * len(session)
            return fuse_apart(lambda ls: rrf_fuse(ls, weights=weights), legs,
                              self._restating(legs, user_id, provenance))[:pool]
        return self._fuse_named([lexical, *session], [1.0] + [SESSION_WEIGHT] * len(session),
                                [rest_lexical, semantic], named, user_id, pool, provenance)

    def _lexical(self, query: str, filters: Filters, depth: int,
                 split: bool) -> tuple[list[str], dict[str, Provenance]]:
        """The full-text leg's ranking and its memories' provenance."""
        ranked = [i for i, _ in self._bm25(query, filters, depth, split)]
        return ranked, self.store.provenance_of(ranked, user_id=filters.user_id)

    def _lexical_legs(self, query: str, rest: str, filters: Filters,
                      depth: int) -> tuple[list[str], list[str], dict[str, Provenance]]:
        """The full-text legs of the question and of its name-free form `rest` ([] when it names
        nobody), with their memories' provenance. A named question's two come from one index query
        where the index offers one (`FullTextIndex.search_named`), else side by side, each whole (two
        legs already take both cores), the second on the parts pool (whose tasks wait on nothing, so
        this wait cannot deadlock it)."""
        if not rest:
            lexical, provenance = self._lexical(query, filters, depth, True)
            return lexical, [], provenance
        with self.store.engine.connect() as conn:
            both = self.store.fulltext.search_named(conn, query, rest, filters, depth)
        if both is None:
            rest_leg = self._part_workers().submit(self._lexical, rest, filters, depth, False)
            lexical, provenance = self._lexical(query, filters, depth, False)
            rest_lexical, rest_provenance = rest_leg.result()
            return lexical, rest_lexical, {**provenance, **rest_provenance}
        lexical, rest_lexical = ([i for i, _ in ranked] for ranked in both)
        ids = list(dict.fromkeys([*lexical, *rest_lexical]))
        return lexical, rest_lexical, self.store.provenance_of(ids, user_id=filters.user_id)

    def _restating(self, legs: Sequence[Sequence[str]], user_id: str, provenance: dict[str, Provenance]) -> set[str]:
        """The memories in these legs that restate others (`restatements`); `provenance` gains any
        the legs' threads did not read (a session leg's)."""
        self._complete(provenance, {i for leg in legs for i in leg}, user_id)
        cited = {i: p.source_ids for i, p in provenance.items()}
        return restating(cited, self.store.input_tags.cited(cited.values(), user_id=user_id))

    def _complete(self, provenance: dict[str, Provenance], ids: Iterable[str], user_id: str) -> None:
        missing = [i for i in ids if i not in provenance]
        if missing:
            provenance.update(self.store.provenance_of(missing, user_id=user_id))

    def _fuse_named(self, legs: list[list[str]], weights: list[float], name_free: list[list[str]],
                    named: Sequence[str], user_id: str, pool: int,
                    provenance: dict[str, Provenance]) -> list[tuple[str, float]]:
        """The first `pool` of `fuse_named` over the question's `legs` (its vector leg left out) and
        the `name_free` legs."""
        def actors(ids: Sequence[str]) -> dict[str, str | None]:
            self._complete(provenance, ids, user_id)
            return {i: provenance[i].actor for i in ids if i in provenance}

        def fuse(ranked: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
            return fuse_named(ranked[:len(legs)], weights, ranked[len(legs):], actors, named, pool)

        every = [*legs, *name_free]
        return fuse_apart(fuse, every, self._restating(every, user_id, provenance))[:pool]

    def _with_sessions(self, filters: Filters) -> bool:
        return self.session_leg and (not filters.memory_types or MemoryType.episodic.value in filters.memory_types)

    def _sessions(self, query: str, filters: Filters) -> tuple[list[str], dict[str, list[str]]]:
        """The query's top sessions (with an episode inside the time window, when there is one) and
        their episodes in time order."""
        timed = filters.start is not None or filters.end is not None
        fetch = SESSION_TOP * (SESSION_TIMED_FETCH if timed else 2)  # twice: equal scores settled by id
        with self.store.engine.connect() as conn:
            candidates = top_sessions(self.store.sessions.search(conn, query, filters.user_id, fetch), fetch)
            ranked: list[str] = []
            listed: dict[str, list[str]] = {}
            for input_id in candidates:
                found = sessions.members(conn, filters.user_id, input_id, start=filters.start, end=filters.end,
                                         limit=SESSION_MEMBERS)
                if found:
                    ranked.append(input_id)
                    listed[input_id] = [m.memory_id for m in found]
                if len(ranked) == SESSION_TOP:
                    break
        return ranked, listed

    def _bm25(self, query: str, filters: Filters, k: int, split: bool = True) -> list[tuple[str, float]]:
        """The best `k` by BM25; the index orders equal scores as `tie_key` does. A large user's
        search runs in parts side by side (`FullTextIndex.parts`; `split` False: whole, the same
        ranking): one here, the others on the parts pool, which runs nothing that waits on another
        task, so searches cannot deadlock it."""
        if filters.left_out is not None:  # unfiltered, that many more, dropped: a type filter costs a scan
            found = self._bm25(query, dataclasses.replace(filters, memory_types=None, left_out=None), k + len(filters.left_out), split)
            return [hit for hit in found if hit[0] not in filters.left_out][:k]
        fulltext = self.store.fulltext
        with self.store.engine.connect() as conn:
            count = fulltext.parts(conn, query, filters) if split else 1
            if count == 1:
                return fulltext.search(conn, query, filters, k)
        others = [self._part_workers().submit(self._bm25_part, query, filters, k, (i, count)) for i in range(1, count)]
        first = self._bm25_part(query, filters, k, (0, count))
        return merge_parts([first] + [f.result() for f in others], k)

    def _bm25_part(self, query: str, filters: Filters, k: int, part: Part) -> list[PartHit]:
        with self.store.engine.connect() as conn:
            return self.store.fulltext.search_part(conn, query, filters, k, part)

    def _vector(self, query: str, filters: Filters, k: int,
                embedding: list[float] | None = None) -> list[tuple[str, float]]:
        assert self.embedder is not None and self.store.vectors is not None
        vectors = self.store.vectors
        embedding = self.embedder.embed_query(query, user_id=filters.user_id) if embedding is None else embedding
        timed = filters.start is not None or filters.end is not None

        def fetch(n: int) -> list[tuple[str, float]]:
            if filters.left_out is not None:
                hits = vectors.query(filters.user_id, embedding, (n * 4 if timed else n) + len(filters.left_out))
                hits = [h for h in hits if h[0] not in filters.left_out]
            else:
                hits = vectors.query(filters.user_id, embedding, n * 4 if timed else n, filters.memory_types)
            if timed and hits:
                allowed = self._within_time([i for i, _ in hits], filters)
                hits = [h for h in hits if h[0] in allowed]
            return hits[:n]

        return self._settled(fetch, k, VECTOR_OVERFETCH)

    def _settled(self, fetch: Callable[[int], list[tuple[str, float]]], k: int,
                 overfetch: int) -> list[tuple[str, float]]:
        """The best `k` of a leg, fetched `overfetch` times over (more while a tied group runs past the
        fetch), with ties ordered by `tie_key` (see `settle_ties`)."""
        n = k * overfetch
        scored = fetch(n)
        while cut_is_open(scored, k, n) and n < k * MAX_OVERFETCH:
            n = min(n * 4, k * MAX_OVERFETCH)
            scored = fetch(n)
        tied = tied_ids(scored, k)
        return settle_ties(scored, self._tie_keys(tied) if tied else {}, k)

    def _tie_keys(self, ids: set[str]) -> dict[str, tuple]:
        with self.store.engine.connect() as conn:
            return {i: tie_key(when, text) for i, when, text in conn.execute(_TIE_KEYS_BY_ID, {"ids": sorted(ids)})}

    def _within_time(self, ids: list[str], filters: Filters) -> set[str]:
        with self.store.engine.connect() as conn:
            rows = conn.execute(_TIMES_BY_ID, {"ids": ids}).all()
        return {i for i, user, when in rows if user == filters.user_id and when is not None
                and (filters.start is None or when >= filters.start) and (filters.end is None or when < filters.end)}

    def _substring(self, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        stmt = select(col(MemoryRow.id)).where(col(MemoryRow.user_id) == filters.user_id, col(MemoryRow.text).ilike(
            "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%", escape="\\"))
        if filters.memory_types:
            stmt = stmt.where(col(MemoryRow.memory_type).in_(list(filters.memory_types)))
        if filters.start is not None:
            stmt = stmt.where(col(MemoryRow.occurred_at) >= filters.start)
        if filters.end is not None:
            stmt = stmt.where(col(MemoryRow.occurred_at) < filters.end)
        stmt = stmt.order_by(col(MemoryRow.occurred_at).desc()).limit(k)
        with Session(self.store.engine) as session:
            ids = list(session.execute(stmt).scalars())
        return [(i, 1.0 / rank) for rank, i in enumerate(ids, start=1)]


CORE_LINES_SHOWN = 3  # a core block's lines shown in a hit when none shares a word with the query


def hit_text(memory: Memory, query: str, *, whole: bool = True, asked: frozenset[str] | None = None) -> str:
    """What a hit shows: the memory's search text, but of a core block only the lines that share a word with the
    query ("Jon: likes dance" for "what does Jon dance?"; a word inside Chinese or Thai text by its pairs, as full
    text finds it), or its first lines: a block holds every fact of a user,
    and whole it would fill a reader's context with facts the question did not ask about. Not `whole` (a hit
    past the searcher's first `whole_hits`, `WHOLE_HITS` by default), a chat turn is shown without its small
    talk (`text.small_talk`), so a reader's context of so many words holds more of what was said. With `asked`
    (`Searcher` gives it past its first `whole_hits` to a question asking for one moment), a chat turn is shown
    as its sentences that share one of those words (`text.moments`). `hit.memory` keeps it all."""
    if (not whole or asked) and isinstance(memory, EpisodicMemory) and memory.event_type == TURN_EVENT:
        said = memory.summary if whole else without_small_talk(memory.summary)
        if asked:
            said = sentences_asked(said, asked)
        if said != memory.summary:
            return memory.model_copy(update={"summary": said}).search_text()
    text = memory.search_text()
    if not isinstance(memory, CoreMemory):
        return text
    lines = [ln for ln in memory.value.splitlines() if ln.strip()]
    if len(lines) <= CORE_LINES_SHOWN:
        return text
    # words beyond ASCII as full text takes them on both sides: a Chinese or Thai run as its pairs (`text_terms`)
    words = {w for w in re.findall(r"[a-z0-9]+", query.lower()) if w not in STOPWORDS and len(w) > 2}
    words |= {t for t in query_terms(query) if not t.isascii()}
    matching = [ln for ln in lines if words & set(re.findall(r"[a-z0-9]+", ln.lower()))
                or words & {t for t in text_terms(ln) if not t.isascii()}]
    return f"[core:{memory.label}] " + "\n".join(matching or lines[:CORE_LINES_SHOWN])
