"""Multi-hop and open-domain ranking ideas replayed on one LoCoMo ingestion, each beside the engine's
default path in the same run, on dev and by leave-one-conversation-out.

Each question's two legs (the engine's own full-text and vector searches, as `Searcher.search` runs
them at `limit` 60) are computed once; every variant then ranks the same candidates, and the hits are
scored inside the budget the way `mirix eval locomo` does. `base` is `Searcher.search` with
`name_legs` off (RRF of the two legs, `weigh_down`, context 0), so its figures
are the eval's with MIRIX_NAME_LEGS=0; the default (`name_legs` on) is `DEFAULT` (`unnamed lexical=QUESTION_SHARE actor=ACTOR_WEIGHT`).
Variants:

- `spread`: diversity across sessions. Walking down the fused ranking, a candidate's score is
  multiplied by `decay` once for every candidate of its session already taken (a soft per-session
  cap; `decay` 0 is a hard cap of `cap` turns a session before the rest).
- `form spread`: `spread` only for questions whose form does not ask for one moment ("when", "how
  long", "what date", "... first"), decided from the question's words, not from dataset labels.
- `feedback`: pseudo-relevance feedback. A second full-text and vector search, seeded by the
  question and the text of the first `k` hits, fused as two more legs at weight `w`.
- `unnamed`: a second search on the question without the names of the people it asks about. The
  names are the actors (who said an episode) of the first legs' episodes that the question names as
  a word; a question naming nobody keeps the base ranking. The two legs of the name-free question are
  fused at weight 1 with the original legs at `orig` (0: instead of them) and an `actor` leg at
  `actor`: the named actors' own episodes, in the order the other legs give them.
- `unnamed lexical`: the same, the question's own full-text leg kept (at `lexical`) and its vector
  leg left out, the actor leg drawn from the first `limit` + QUESTION_POOL of the fusion: a name
  weighs on a sentence's embedding, not on a BM25 score.
- `actor`: the actor leg alone, beside the original legs.
- `entities`: a second full-text and vector search seeded by the other things the first hits name:
  the capitalised words (not a sentence's first) of the engine ranking's first `k` hits that the
  question, the speakers and the stopwords do not hold, fused beside the engine's legs at `w`.
- `small talk`: the engine's ranking (`DEFAULT`) with the chat turns past the first `whole` hits
  shown without their small talk (`search.hit_text`, `text.small_talk`: sentences of fewer than two
  content words, such as "Thanks, Maria!"), for `whole` from 20 down to 0; judged against the same
  ranking with every hit shown whole (`shown whole`). Every other variant is shown as the engine
  shows it (`search.WHOLE_HITS`).
- `cut`: the engine's ranking (`DEFAULT`) with every episode past the first
  `full` matches cut to its sentences that share a word with the question (names of the people it
  asks about aside; words matched on their first five letters), under its day without the clock
  time; an episode with one sentence or none sharing a word stays whole (`cut_episode`). Shorter
  hits fit more of the ranking into the budget. `cut named`: the same, also keeping sentences with a
  digit or a capitalised word after their first. Judged against the engine's ranking shown whole.

Leave-one-conversation-out, per mechanism (its grid and base) and over every variant: per fold, the
variant best on the other four conversations (evidence recall, then answer tokens, then the earlier
variant) is scored on the held-out one; the pooled held-out figure, and each fold's gain over base,
say whether a choice generalises. A mechanism passes when its dev pick gains, the held-out picks gain
pooled, and no fold loses evidence or answer tokens.

    .venv/bin/python benchmarks/locomo_hops.py ../shared/data/locomo/locomo_dev.json [--cache-dir DIR] \
        [--out benchmarks/results/locomo_hops.json]

Ingestions come from (or go into) the same cache as `mirix eval locomo`'s offline mode, a store per
conversation by default as there (`--store shared`: one for all, as these variants were first chosen on).
"""

from __future__ import annotations

import heapq
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from locomo_replay import replay_arguments  # noqa: E402

from mirix_py.eval.locomo import CATEGORY_NAMES, load_locomo  # noqa: E402
from mirix_py.eval.locomo_eval import (  # noqa: E402
    SCORED_CATEGORIES, Hit, LocomoEvalConfig, close_engines, context_scores, open_engines, question_key,
    selected_questions)
from mirix_py.records import EpisodicMemory, Memory, SearchHit, SearchMethod  # noqa: E402
from mirix_py.store.fulltext import Filters  # noqa: E402
from mirix_py.store.names import actor_leg, named_actors, without_names  # noqa: E402
from mirix_py.store.questions import QUESTION_POOL  # noqa: E402
from mirix_py.store.search import ACTOR_WEIGHT, QUESTION_SHARE, WHOLE_HITS, Searcher, hit_text, rrf_fuse  # noqa: E402
from mirix_py.store.sessions import input_of  # noqa: E402
from mirix_py.store.restatements import weigh_down  # noqa: E402
from mirix_py.text.moments import asks_one_moment  # noqa: E402
from mirix_py.text.words import STOPWORDS  # noqa: E402

METRICS = ("evidence_recall", "answer_token_recall")
Ranked = list[tuple[str, float]]


def spread(ranked: Sequence[tuple[str, float]], session_of: Mapping[str, str | None], decay: float,
           cap: int = 0) -> Ranked:
    """`ranked` re-ordered greedily: each candidate's score times `decay` per candidate of its session
    taken before it (after the first `cap` of that session); candidates of no session keep theirs."""
    heads: list[tuple[float, int, str, float, str | None]] = []
    queues: dict[str | None, list[tuple[int, str, float]]] = {}
    for pos, (i, s) in enumerate(ranked):
        key = session_of.get(i)
        if key is None:
            heapq.heappush(heads, (-s, pos, i, s, None))
        else:
            queues.setdefault(key, []).append((pos, i, s))
    taken: dict[str, int] = {}
    for key, queue in queues.items():
        queue.reverse()
        pos, i, s = queue.pop()
        heapq.heappush(heads, (-s, pos, i, s, key))
    out: Ranked = []
    while heads:
        adjusted, pos, i, s, key = heapq.heappop(heads)
        out.append((i, -adjusted))
        if key is None:
            continue
        taken[key] = taken.get(key, 0) + 1
        queue = queues[key]
        if queue:
            pos, i, s = queue.pop()
            factor = decay ** max(0, taken[key] - cap + 1) if taken[key] >= cap else 1.0
            heapq.heappush(heads, (-s * factor, pos, i, s, key))
    return out


WORD = re.compile(r"[a-z0-9]+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
STAMP = re.compile(r"\[[^\]]*\] ")
CLOCK = re.compile(r", \d{1,2}:\d{2}\]")
NAMING = re.compile(r"(?<=\s)[A-Z][a-z]+|\d")  # a digit, or a capitalised word after the sentence's first


CAPITALISED = re.compile(r"(?<=[^.!?\s]\s)([A-Z][a-zA-Z]+)")


def named_things(texts: Sequence[str], question: str, speakers: set[str]) -> list[str]:
    """Capitalised words of `texts` (stamp and speaker cut off; not a sentence's first word) that are
    not in the question, not a speaker and not a stopword, lower-cased, each once, in order."""
    asked = {w.lower() for w in re.findall(r"\w+", question)}
    out: list[str] = []
    for text in texts:
        for word in CAPITALISED.findall(re.sub(r"^\[[^\]]*\]\s*[^:]{1,40}:\s*", "", text)):
            w = word.lower()
            if w not in asked and w not in speakers and w not in STOPWORDS and w not in out:
                out.append(w)
    return out


def terms(text: str) -> set[str]:
    """Content words (no stopwords, three letters or more), each cut to its first five letters."""
    return {w[:5] for w in WORD.findall(text.lower()) if len(w) > 2 and w not in STOPWORDS}


def cut_episode(memory: EpisodicMemory, text: str, asked: set[str], naming: bool = False) -> str:
    """`text` (the episode's search text) as its day, speaker and the sentences sharing a word with
    `asked` (with `naming`, also those with a digit or a capitalised word); `text` itself when it has
    one sentence, no sentence sharing a word, or another shape."""
    stamp = STAMP.match(text)
    speaker = f"{memory.actor}: "
    if stamp is None or not text.startswith(speaker, stamp.end()):
        return text
    sentences = SENTENCE_END.split(text[stamp.end() + len(speaker):])
    if len(sentences) < 2 or not any(asked & terms(s) for s in sentences):
        return text
    kept = [s for s in sentences if asked & terms(s) or (naming and NAMING.search(s))]
    return CLOCK.sub("]", stamp.group(), count=1) + speaker + " ".join(kept)


def cut_hits(hits: Sequence[SearchHit], query: str, full: int, naming: bool = False) -> list[SearchHit]:
    """`hits` with every episode after the first `full` cut to the question (`cut_episode`); the
    question's words without the names of the hits' speakers it names."""
    actors = [h.memory.actor for h in hits if isinstance(h.memory, EpisodicMemory)]
    asked = terms(without_names(query, named_actors(query, actors)) or query)
    return [h.model_copy(update={"text": cut_episode(h.memory, h.text, asked, naming)})
            if n >= full and isinstance(h.memory, EpisodicMemory) else h for n, h in enumerate(hits)]


class Candidates:
    """One question's legs and the records they name."""

    def __init__(self, lexical: list[str], semantic: list[str]) -> None:
        self.lexical, self.semantic = lexical, semantic
        self.extra: dict[str, tuple[list[str], list[str]]] = {}
        self.records: dict[str, Memory] = {}
        self.named: list[str] = []


class Hops:
    def __init__(self, engines: Mapping[str, Any], convs: Sequence[Any], limit: int, budget: int) -> None:
        """`engines`: each conversation's user -> the engine holding it (`open_engines`)."""
        self.engines, self.limit, self.budget = engines, limit, budget
        self.questions = [(c, q) for c, q in selected_questions(convs) if q.category in SCORED_CATEGORIES]
        searchers = {id(mx): Searcher(mx.store) for mx in engines.values()}
        self.searchers = {user: searchers[id(mx)] for user, mx in engines.items()}
        self.depth = max(limit * 3, 30)  # as `Searcher.search`
        self.pool = limit + QUESTION_POOL
        self.cands: dict[str, Candidates] = {}
        started = time.perf_counter()
        for conv, q in self.questions:
            f = Filters(user_id=conv.user_id)
            c = Candidates([i for i, _ in self.searchers[conv.user_id]._bm25(q.question, f, self.depth)],
                           [i for i, _ in self.searchers[conv.user_id]._vector(q.question, f, self.depth)])
            self.cands[question_key(q)] = c
            self.load(conv, c, c.lexical + c.semantic)
        self.legs_ms = 1000 * (time.perf_counter() - started) / max(1, len(self.questions))

    def close(self) -> None:
        for searcher in {id(s): s for s in self.searchers.values()}.values():
            searcher.close()

    def load(self, conv: Any, c: Candidates, ids: Sequence[str]) -> None:
        wanted = [i for i in dict.fromkeys(ids) if i not in c.records]
        c.records.update(self.engines[conv.user_id].store.get_many(wanted, user_id=conv.user_id))

    def feedback_legs(self, k: int) -> float:
        """Second legs seeded by the question and the first `k` base hits; ms per question."""
        started = time.perf_counter()
        for conv, q in self.questions:
            c = self.cands[question_key(q)]
            top = [c.records[i].search_text() for i, _ in self.base(c)[:k] if i in c.records]
            query = " ".join([q.question, *top])
            f = Filters(user_id=conv.user_id)
            c.extra[f"feedback{k}"] = ([i for i, _ in self.searchers[conv.user_id]._bm25(query, f, self.depth)],
                                       [i for i, _ in self.searchers[conv.user_id]._vector(query, f, self.depth)])
            self.load(conv, c, c.extra[f"feedback{k}"][0] + c.extra[f"feedback{k}"][1])
        return 1000 * (time.perf_counter() - started) / max(1, len(self.questions))

    def actors(self, c: Candidates) -> dict[str, str | None]:
        return {i: getattr(m, "actor", None) if m.memory_type.value == "episodic" else None
                for i, m in c.records.items()}

    def unnamed_legs(self) -> float:
        """Second legs on the question without the actors it names (those of the full-text leg's
        first `pool` matches, as `Searcher` finds them), for questions that name one; ms per question."""
        started = time.perf_counter()
        for conv, q in self.questions:
            c = self.cands[question_key(q)]
            actors = self.actors(c)
            c.named = named_actors(q.question, [a for i in c.lexical[: self.pool] if (a := actors.get(i))])
            query = without_names(q.question, c.named)
            if not c.named or not query:
                continue
            f = Filters(user_id=conv.user_id)
            c.extra["unnamed"] = ([i for i, _ in self.searchers[conv.user_id]._bm25(query, f, self.depth)],
                                  [i for i, _ in self.searchers[conv.user_id]._vector(query, f, self.depth)])
            self.load(conv, c, c.extra["unnamed"][0] + c.extra["unnamed"][1])
        self.naming = sum(1 for c in self.cands.values() if c.named)
        return 1000 * (time.perf_counter() - started) / max(1, len(self.questions))

    def default_fused(self, c: Candidates, extra: Sequence[list[str]] = (), w: float = 0.0) -> Ranked:
        """The engine's fusion (`DEFAULT`, or both legs when nobody is named), with the `extra` legs at `w`."""
        if "unnamed" not in c.extra:
            return rrf_fuse([c.lexical, c.semantic, *extra], weights=[1.0, 1.0, *[w] * len(extra)])
        legs, weights = [c.lexical, *c.extra["unnamed"]], [QUESTION_SHARE, 1.0, 1.0]
        first = [i for i, _ in rrf_fuse(legs, weights=weights)[: self.pool]]
        return rrf_fuse([*legs, actor_leg(first, self.actors(c), c.named), *extra],
                        weights=[*weights, ACTOR_WEIGHT, *[w] * len(extra)])

    def entity_legs(self, k: int) -> float:
        """Second legs seeded by what the engine ranking's first `k` hits name (`named_things`); ms
        per question."""
        started = time.perf_counter()
        for conv, q in self.questions:
            c = self.cands[question_key(q)]
            speakers = {(a or "").lower() for a in self.actors(c).values()}
            top = [c.records[i].search_text() for i, _ in self.finish(self.default_fused(c), c)[:k]]
            things = named_things(top, q.question, speakers)
            if not things:
                continue
            f = Filters(user_id=conv.user_id)
            query = " ".join(things)
            c.extra[f"entities{k}"] = ([i for i, _ in self.searchers[conv.user_id]._bm25(query, f, self.depth)],
                                       [i for i, _ in self.searchers[conv.user_id]._vector(query, f, self.depth)])
            self.load(conv, c, c.extra[f"entities{k}"][0] + c.extra[f"entities{k}"][1])
        return 1000 * (time.perf_counter() - started) / max(1, len(self.questions))

    def finish(self, ranked: Ranked, c: Candidates) -> Ranked:
        """What `Searcher.search` does after fusion: weigh chat questions, sources before summaries, cut."""
        return weigh_down(ranked[: self.pool], c.records)[: self.limit]

    def base(self, c: Candidates) -> Ranked:
        return self.finish(rrf_fuse([c.lexical, c.semantic]), c)

    def sessions(self, c: Candidates) -> dict[str, str | None]:
        return {i: input_of(m.memory_type.value, m.source_ids) for i, m in c.records.items()}

    def score(self, rank: Callable[[Any, Candidates], Ranked], full: int | None = None,
              naming: bool = False, whole: float = WHOLE_HITS,
              moment_whole: float = WHOLE_HITS) -> dict[str, dict[str, Any]]:
        """Each question's figures inside the budget, the hits past the first `whole` shown as the
        engine shows them there (`hit_text`), and to a question asking for one moment, past the first
        `moment_whole` (the engine's: `whole_hits`), as their sentences sharing a word with it
        (`Searcher._moment_asked`); with `full`, the hits past the first `full` cut to the question
        (`cut_hits`)."""
        out = {}
        for conv, q in self.questions:
            c = self.cands[question_key(q)]
            asked = self.searchers[conv.user_id]._moment_asked(q.question, conv.user_id, None)
            found: list[SearchHit] = []
            for i, s in rank(q, c):
                if i in c.records:
                    n = len(found)
                    text = hit_text(c.records[i], q.question, whole=n < whole, asked=asked if n >= moment_whole else None)
                    found.append(SearchHit(text=text, score=s, memory=c.records[i], method=SearchMethod.hybrid))
            if full is not None:
                found = cut_hits(found, q.question, full, naming)
            hits = [Hit(id=h.memory.id, score=h.score, text=h.text, source_ids=list(h.memory.source_ids))
                    for h in found]
            out[question_key(q)] = {"conversation": conv.sample_id, "category": q.category,
                                    **context_scores(q, hits, self.budget)}
        return out


Rank = Callable[[Any, Candidates], Ranked]
DEFAULT = f"unnamed lexical={QUESTION_SHARE} actor={ACTOR_WEIGHT}"  # the engine's ranking (`name_legs` on)
ACTOR_FAMILY = "the actor leg's weight, against the default"
CUT_FULL = (4, 6, 8, 10, 12, 15)  # matches shown whole before the cut ones
# hits shown whole before the ones without small talk; the smaller change first, so a fold whose
# other conversations score two settings alike takes the one that shows more hits whole
SMALL_TALK_WHOLE = (20, 15, 12, 10, 8, 6, 5, 4, 3, 2, 1, 0)
SHOWN_WHOLE = "shown whole"
SMALL_TALK_FAMILY = "small talk past the first hits"
# hits shown to a question asking for one moment as to any other before its chat turns hold only the
# sentences sharing a word with it; the smaller change first (see SMALL_TALK_WHOLE)
MOMENT_WHOLE = (20, 15, 12, 10, 8, 6, 4, 2, 0)
MOMENT_NONE = "one-moment questions as any other"
MOMENT_FAMILY = "one-moment questions cut past the first hits"


def variants(h: Hops) -> dict[str, tuple[str, Rank]]:
    """Variant name -> (its mechanism, its ranking); each mechanism is judged on its own grid."""
    out: dict[str, tuple[str, Rank]] = {"base": ("base", lambda q, c: h.base(c))}

    def spread_of(decay: float, cap: int, only_lists: bool = False) -> Rank:
        def rank(q: Any, c: Candidates) -> Ranked:
            if only_lists and asks_one_moment(q.question):
                return h.base(c)
            fused = rrf_fuse([c.lexical, c.semantic])
            return h.finish(spread(fused, h.sessions(c), decay, cap), c)
        return rank

    for decay in (0.5, 0.7, 0.85):
        out[f"spread d={decay}"] = ("session spread", spread_of(decay, 1))
        out[f"form spread d={decay}"] = ("session spread by form", spread_of(decay, 1, True))
    for cap in (2, 3, 5):
        out[f"spread cap={cap}"] = ("session spread", spread_of(0.0, cap))
        out[f"form spread cap={cap}"] = ("session spread by form", spread_of(0.0, cap, True))

    def feedback_of(k: int, w: float) -> Rank:
        def rank(q: Any, c: Candidates) -> Ranked:
            lex2, sem2 = c.extra[f"feedback{k}"]
            return h.finish(rrf_fuse([c.lexical, c.semantic, lex2, sem2], weights=[1.0, 1.0, w, w]), c)
        return rank

    for k in (1, 3):
        for w in (0.25, 0.5):
            out[f"feedback k={k} w={w}"] = ("feedback", feedback_of(k, w))

    def unnamed_of(w_orig: float, w_actor: float) -> Rank:
        def rank(q: Any, c: Candidates) -> Ranked:
            if "unnamed" not in c.extra:
                return h.base(c)
            lex2, sem2 = c.extra["unnamed"]
            legs, weights = [lex2, sem2], [1.0, 1.0]
            if w_orig:
                legs, weights = [c.lexical, c.semantic, *legs], [w_orig, w_orig, *weights]
            if w_actor:
                fused = [i for i, _ in rrf_fuse(legs, weights=weights)]
                legs, weights = [*legs, actor_leg(fused, h.actors(c), c.named)], [*weights, w_actor]
            return h.finish(rrf_fuse(legs, weights=weights), c)
        return rank

    def actor_of(w: float) -> Rank:
        def rank(q: Any, c: Candidates) -> Ranked:
            if not c.named:
                return h.base(c)
            fused = [i for i, _ in rrf_fuse([c.lexical, c.semantic])]
            return h.finish(rrf_fuse([c.lexical, c.semantic, actor_leg(fused, h.actors(c), c.named)],
                                     weights=[1.0, 1.0, w]), c)
        return rank

    def lexical_of(w_lex: float, w_actor: float) -> Rank:
        def rank(q: Any, c: Candidates) -> Ranked:
            if "unnamed" not in c.extra:
                return h.base(c)
            legs, weights = [c.lexical, *c.extra["unnamed"]], [w_lex, 1.0, 1.0]
            first = [i for i, _ in rrf_fuse(legs, weights=weights)[: h.pool]]
            return h.finish(rrf_fuse([*legs, actor_leg(first, h.actors(c), c.named)],
                                     weights=[*weights, w_actor]), c)
        return rank

    for w_lex in (0.25, 0.5, 1.0):
        for w_actor in (0.5, 1.0, 1.5, 2.0):
            out[f"unnamed lexical={w_lex} actor={w_actor}"] = ("unnamed beside the question's full text",
                                                               lexical_of(w_lex, w_actor))
    for w_actor in (1.0, 1.5, 2.0, 3.0, 4.0):  # the default's actor weight alone, against the default
        out[f"actor weight {w_actor}"] = (ACTOR_FAMILY, lexical_of(QUESTION_SHARE, w_actor))

    def by_form(w_moment: float) -> Rank:  # the actor weight of a question asking for one moment
        default, moment = lexical_of(QUESTION_SHARE, ACTOR_WEIGHT), lexical_of(QUESTION_SHARE, w_moment)
        return lambda q, c: moment(q, c) if asks_one_moment(q.question) else default(q, c)

    for w_moment in (0.5, 1.0):
        out[f"actor weight {ACTOR_WEIGHT}, {w_moment} for one moment"] = (ACTOR_FAMILY, by_form(w_moment))
    for w_orig in (0.0, 0.5, 1.0):
        family = "unnamed instead of the question" if w_orig == 0 else "unnamed beside the question"
        for w_actor in (0.0, 0.5, 1.0):
            out[f"unnamed orig={w_orig} actor={w_actor}"] = (family, unnamed_of(w_orig, w_actor))
    for w in (0.25, 0.5, 1.0):
        out[f"actor w={w}"] = ("actor leg", actor_of(w))

    def entities_of(k: int, w: float) -> Rank:
        def rank(q: Any, c: Candidates) -> Ranked:
            return h.finish(h.default_fused(c, c.extra.get(f"entities{k}", ()), w), c)
        return rank

    for k in (3, 5):
        for w in (0.25, 0.5, 1.0):
            out[f"entities k={k} w={w}"] = ("entities of the first hits", entities_of(k, w))
    return out


def mean_of(scores: Mapping[str, Mapping[str, Any]], metric: str, *, only: str | None = None,
            without: str | None = None, category: int | None = None) -> float:
    values = [s[metric] for s in scores.values()
              if (only is None or s["conversation"] == only) and (without is None or s["conversation"] != without)
              and (category is None or s["category"] == category) and not math.isnan(s[metric])]
    return statistics.mean(values) if values else math.nan


def figures(scores: Mapping[str, Mapping[str, Any]], convs: Sequence[str]) -> dict[str, Any]:
    return {"overall": {m: mean_of(scores, m) for m in METRICS},
            "by_category": {str(k): {m: mean_of(scores, m, category=k) for m in METRICS} for k in SCORED_CATEGORIES},
            "per_conversation": {c: {m: mean_of(scores, m, only=c) for m in METRICS} for c in convs}}


def leave_one_out(results: Mapping[str, Mapping[str, Mapping[str, Any]]], convs: Sequence[str]) -> dict[str, Any]:
    """Per fold the variant best on the other conversations, scored on the held-out one; pooled held-out."""
    order = list(results)

    def key(v: str, without: str) -> tuple:
        return (round(mean_of(results[v], "evidence_recall", without=without), 6),
                round(mean_of(results[v], "answer_token_recall", without=without), 6), -order.index(v))

    folds, pooled = [], {}
    for conv in convs:
        picked = max(order, key=lambda v: key(v, conv))
        held = {m: mean_of(results[picked], m, only=conv) for m in METRICS}
        base = {m: mean_of(results["base"], m, only=conv) for m in METRICS}
        folds.append({"held_out": conv, "picked": picked, "held_out_scores": held, "base": base,
                      "gain": {m: held[m] - base[m] for m in METRICS}})
        pooled.update({k: s for k, s in results[picked].items() if s["conversation"] == conv})
    return {"folds": folds, "pooled": figures(pooled, convs)}


def verdict(results: Mapping[str, Mapping[str, Mapping[str, Any]]], loo: Mapping[str, Any],
            convs: Sequence[str]) -> dict[str, Any]:
    """The dev pick, and whether it passes: dev gain, pooled held-out gain, no fold below base in
    evidence or in answer tokens."""
    base = mean_of(results["base"], "evidence_recall")
    dev_pick = max(results, key=lambda v: (round(mean_of(results[v], "evidence_recall"), 6),
                                           round(mean_of(results[v], "answer_token_recall"), 6),
                                           -list(results).index(v)))
    held = loo["pooled"]["overall"]["evidence_recall"]
    lost = [f["held_out"] for f in loo["folds"] if f["gain"]["evidence_recall"] < -1e-9]
    tokens_lost = [f["held_out"] for f in loo["folds"] if f["gain"]["answer_token_recall"] < -1e-9]
    return {"dev_pick": dev_pick, "dev_gain": mean_of(results[dev_pick], "evidence_recall") - base,
            "held_out_gain": held - base, "folds_lost": lost, "folds_lost_answer_tokens": tokens_lost,
            "held_out_answer_token_gain": loo["pooled"]["overall"]["answer_token_recall"]
            - mean_of(results["base"], "answer_token_recall"),
            "passes": dev_pick != "base" and held > base + 1e-9 and not lost and not tokens_lost}


def table(name: str, f: Mapping[str, Any], convs: Sequence[str]) -> str:
    cats = " ".join(f"{f['by_category'][str(k)]['evidence_recall']:.3f}" for k in SCORED_CATEGORIES)
    per = " ".join(f"{f['per_conversation'][c]['evidence_recall']:.3f}/{f['per_conversation'][c]['answer_token_recall']:.3f}"
                   for c in convs)
    o = f["overall"]
    return f"{name:24s} {o['evidence_recall']:.4f} / {o['answer_token_recall']:.4f} | {cats} | {per}"


def main() -> int:
    ap = replay_arguments(__doc__)
    ap.add_argument("--store", choices=("per_conversation", "shared"), default="per_conversation",
                    help="a store per conversation, as `mirix eval locomo` ingests by default, or one for all")
    args = ap.parse_args()
    from mirix_py.store.embeddings import load_embedder

    convs = load_locomo(args.data)
    names = [c.sample_id for c in convs]
    config = LocomoEvalConfig(data=args.data, mode="offline", cache_dir=args.cache_dir, baselines=False,
                              store=args.store)
    engines, info = open_engines(config, convs, embedder=load_embedder("minilm"), model_client=None)
    result: dict[str, Any] = {"benchmark": "locomo_hops", "store": info["store"],
                              "data_dirs": info.get("data_dirs") or info["data_dir"], "limit": args.limit,
                              "context": 0, "budget_words": args.budget_words,
                              "categories": {str(k): CATEGORY_NAMES[k] for k in SCORED_CATEGORIES}}
    try:
        h = Hops(engines, convs, args.limit, args.budget_words)
        result["legs_ms_per_question"] = round(h.legs_ms, 2)
        result["feedback_legs_ms_per_question"] = {k: round(h.feedback_legs(k), 2) for k in (1, 3)}
        result["unnamed_legs_ms_per_question"] = round(h.unnamed_legs(), 2)
        result["entity_legs_ms_per_question"] = {k: round(h.entity_legs(k), 2) for k in (3, 5)}
        result["questions"], result["questions_naming_an_actor"] = len(h.questions), h.naming
        print(f"{'variant':24s} evidence / answer tokens | categories {' '.join(map(str, SCORED_CATEGORIES))} | "
              + " ".join(names), flush=True)
        results: dict[str, dict[str, dict[str, Any]]] = {}
        families: dict[str, list[str]] = {}
        result["variants"] = {}
        ranks = variants(h)
        # (name, mechanism, ranking, cut past `full`, naming, small talk past `whole`, one moment past `moment`)
        scored = [(name, family, rank, None, False, WHOLE_HITS, WHOLE_HITS) for name, (family, rank) in ranks.items()]
        scored += [(f"cut full={n}", "cut past the first hits", ranks[DEFAULT][1], n, False, WHOLE_HITS, WHOLE_HITS)
                   for n in CUT_FULL]
        scored += [(f"cut named full={n}", "cut, keeping sentences that name something", ranks[DEFAULT][1], n, True,
                    WHOLE_HITS, WHOLE_HITS) for n in CUT_FULL]
        scored += [(SHOWN_WHOLE, SMALL_TALK_FAMILY, ranks[DEFAULT][1], None, False, math.inf, math.inf)]
        scored += [(f"small talk whole={n}", SMALL_TALK_FAMILY, ranks[DEFAULT][1], None, False, n, WHOLE_HITS)
                   for n in SMALL_TALK_WHOLE]
        scored += [(name, MOMENT_FAMILY, ranks[DEFAULT][1], None, False, WHOLE_HITS, n)
                   for name, n in [(MOMENT_NONE, math.inf), *((f"moment whole={n}", n) for n in MOMENT_WHOLE)]]
        for name, family, rank, full, naming, whole, moment_whole in scored:
            results[name] = h.score(rank, full, naming, whole, moment_whole)
            families.setdefault(family, []).append(name)
            result["variants"][name] = {"mechanism": family, **figures(results[name], names)}
            print(table(name, result["variants"][name], names), flush=True)
        h.close()
        families["every variant"] = [v for v in results if not v.startswith(("cut ", "entities ", "small talk ", "moment "))
                                     and v not in (SHOWN_WHOLE, MOMENT_NONE)]
        families["every cut"] = [v for v in results if v.startswith("cut ")]
        result["leave_one_conversation_out"] = {}
        for family, grid in families.items():
            if family == "base":
                continue
            # the cut is judged against the ranking it cuts, shown whole (under the name "base")
            reference = DEFAULT if family.startswith(("cut", "entities")) or family in ("every cut", ACTOR_FAMILY) \
                else SHOWN_WHOLE if family == SMALL_TALK_FAMILY else MOMENT_NONE if family == MOMENT_FAMILY else "base"
            chosen = {"base": results[reference], **{v: results[v] for v in grid if v not in ("base", reference)}}
            loo = leave_one_out(chosen, names)
            loo["verdict"] = verdict(chosen, loo, names)
            loo["reference"] = reference
            result["leave_one_conversation_out"][family] = loo
            print(f"\n{family} (against {reference}): {json.dumps(loo['verdict'])}")
            print(table("  held out (pooled)", loo["pooled"], names))
            for fold in loo["folds"]:
                print(f"  {fold['held_out']}: picked {fold['picked']}, held-out "
                      f"{fold['held_out_scores']['evidence_recall']:.3f} against base "
                      f"{fold['base']['evidence_recall']:.3f} ({fold['gain']['evidence_recall']:+.3f}; "
                      f"answer tokens {fold['gain']['answer_token_recall']:+.3f})")
    finally:
        close_engines(engines)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
