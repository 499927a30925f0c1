"""Replay the engine's hybrid ranking on one LoCoMo ingestion, to measure ranking ideas without
re-ingesting: each question's two legs (the engine's own full-text and vector searches, as
`Searcher.search` runs them) are computed once, then fused, weighed, expanded with context and
scored at the budget the way `mirix eval locomo` does, per variant and per conversation.

Variants: the engine as it is (`base`), and a third RRF leg of whole sessions: each input's episodes
(one LoCoMo session) as one BM25 document, the turns of the question's top S sessions (by session
rank, then the fused order) fused at weight w, for S in 1-3 and w in 0.25/0.5/1, with a
leave-one-conversation-out pick over them. With `--compare-cache-dir`, a second ingestion's legs
are matched to the first's memories by text, to show whether two ingestions rank alike.

    .venv/bin/python benchmarks/locomo_replay.py ../shared/data/locomo/locomo_dev.json \
        [--cache-dir DIR] [--compare-cache-dir DIR2] [--out replay.json]

Ingestions come from (or go into) the same cache as `mirix eval locomo`'s offline mode.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirix_py.eval.cache import default_cache_dir  # noqa: E402
from mirix_py.eval.locomo import load_locomo  # noqa: E402
from mirix_py.eval.locomo_eval import (  # noqa: E402
    SCORED_CATEGORIES, Hit, LocomoEvalConfig, context_scores, open_engine, question_key, selected_questions)
from mirix_py.records import EpisodicMemory, SearchHit, SearchMethod  # noqa: E402
from mirix_py.store.fulltext import Filters  # noqa: E402
from mirix_py.store.questions import QUESTION_POOL  # noqa: E402
from mirix_py.store.restatements import weigh_down  # noqa: E402
from mirix_py.store.search import Searcher, rrf_fuse, with_context  # noqa: E402
from mirix_py.text.words import STOPWORDS  # noqa: E402

SESSIONS = (1, 2, 3)
WEIGHTS = (0.25, 0.5, 1.0)


def words(text: str) -> list[str]:
    return [t for t in "".join(c if c.isalnum() else " " for c in text.lower()).split()
            if len(t) > 1 and t not in STOPWORDS]


def bm25_rank(docs: dict[str, collections.Counter], query: str, k1: float = 1.2, b: float = 0.75) -> list[str]:
    """Document ids by Okapi BM25 of `query`, best first (documents matching nothing left out)."""
    if not docs:
        return []
    df = collections.Counter(t for doc in docs.values() for t in doc)
    avg = statistics.mean(sum(d.values()) for d in docs.values()) or 1.0
    n, terms, scores = len(docs), set(words(query)), {}
    for doc_id, doc in docs.items():
        length = sum(doc.values())
        s = sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * doc[t] * (k1 + 1)
                / (doc[t] + k1 * (1 - b + b * length / avg)) for t in terms if doc[t])
        if s > 0:
            scores[doc_id] = s
    return sorted(scores, key=lambda d: (-scores[d], d))


def session_leg(sessions: dict[str, list[str]], docs: dict[str, collections.Counter], query: str,
                fused: Sequence[str], top: int) -> list[str]:
    """The episodes of the query's `top` best sessions, by session rank and then their fused order."""
    position = {m: i for i, m in enumerate(fused)}
    leg: list[str] = []
    for session in bm25_rank(docs, query)[:top]:
        leg += sorted(sessions[session], key=lambda m: (position.get(m, len(position)), m))
    return leg


class Replay:
    """One ingestion's legs per question, fused and scored under variants."""

    def __init__(self, mx: Any, convs: Sequence[Any], limit: int, context: int, budget: int) -> None:
        self.mx, self.limit, self.context, self.budget = mx, limit, context, budget
        self.questions = [(c, q) for c, q in selected_questions(convs) if q.category in SCORED_CATEGORIES]
        searcher = Searcher(mx.store)
        depth = max(limit * 3, 30)  # as `Searcher.search`
        self.legs: dict[str, tuple[list[str], list[str]]] = {}
        for conv, q in self.questions:
            f = Filters(user_id=conv.user_id)
            self.legs[question_key(q)] = ([i for i, _ in searcher._bm25(q.question, f, depth)],
                                          [i for i, _ in searcher._vector(q.question, f, depth)])
        searcher.close()
        self.sessions: dict[str, dict[str, list[str]]] = {}
        self.docs: dict[str, dict[str, collections.Counter]] = {}
        for conv in convs:
            by_input: dict[str, list[str]] = collections.defaultdict(list)
            texts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
            for m in mx.store.list(user_id=conv.user_id, memory_types=["episodic"], limit=1_000_000):
                if isinstance(m, EpisodicMemory) and m.source_ids:
                    by_input[m.source_ids[0]].append(m.id)
                    texts[m.source_ids[0]].update(words(m.search_text()))
            self.sessions[conv.user_id], self.docs[conv.user_id] = dict(by_input), dict(texts)

    def run(self, third: Callable[[Any, Any, list[str]], list[str]] | None = None, weight: float = 1.0,
            legs: dict[str, tuple[list[str], list[str]]] | None = None) -> dict[str, dict[str, Any]]:
        out = {}
        for conv, q in self.questions:
            lexical, semantic = (legs or self.legs)[question_key(q)]
            rankings, weights = [lexical, semantic], [1.0, 1.0]
            if third is not None:
                rankings.append(third(conv, q, [i for i, _ in rrf_fuse([lexical, semantic])]))
                weights.append(weight)
            ranked = rrf_fuse(rankings, weights=weights)[: self.limit + QUESTION_POOL]
            records = self.mx.store.get_many([i for i, _ in ranked], user_id=conv.user_id)
            ranked = weigh_down(ranked, records)[: self.limit]
            hits = [SearchHit(text=records[i].search_text(), score=s, memory=records[i], method=SearchMethod.hybrid)
                    for i, s in ranked if i in records]
            hits = with_context(self.mx.store, hits, self.context) if self.context else hits
            scored = [Hit(id=h.memory.id, score=float(h.score), text=h.text, source_ids=list(h.memory.source_ids))
                      for h in hits]
            out[question_key(q)] = context_scores(q, scored, self.budget)
        return out


def mean_of(scores: dict[str, dict[str, Any]], metric: str, conv: str | None = None,
            without: str | None = None) -> float:
    values = [s[metric] for key, s in scores.items()
              if (conv is None or key.startswith(conv + "#")) and (without is None or not key.startswith(without + "#"))
              and not math.isnan(s[metric])]
    return statistics.mean(values) if values else math.nan


def summary(scores: dict[str, dict[str, Any]], convs: Sequence[str]) -> dict[str, Any]:
    return {"evidence_recall": mean_of(scores, "evidence_recall"),
            "answer_token_recall": mean_of(scores, "answer_token_recall"),
            "per_conversation": {c: [mean_of(scores, "evidence_recall", c), mean_of(scores, "answer_token_recall", c)]
                                 for c in convs}}


def leave_one_out(results: dict[str, dict[str, dict[str, Any]]], convs: Sequence[str]) -> list[dict[str, Any]]:
    """Per conversation: the variant the others score best on (evidence recall), and its held-out gain."""
    folds = []
    for conv in convs:
        best = max(results, key=lambda v: mean_of(results[v], "evidence_recall", without=conv))
        folds.append({"held_out": conv, "picked": best, "gain": mean_of(results[best], "evidence_recall", conv)
                      - mean_of(results["base"], "evidence_recall", conv)})
    return folds


def replay_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The arguments every LoCoMo replay takes: the data, the ingestion cache, how the eval scores."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=default_cache_dir("locomo"))
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--context", type=int, default=3)
    ap.add_argument("--budget-words", type=int, default=750)
    ap.add_argument("--out", type=Path)
    return ap


def main() -> int:
    ap = replay_arguments(__doc__)
    ap.add_argument("--compare-cache-dir", type=Path, help="a second ingestion to compare the legs with")
    args = ap.parse_args()

    from mirix_py.store.embeddings import load_embedder

    embedder = load_embedder("minilm")
    convs = load_locomo(args.data)
    config = LocomoEvalConfig(data=args.data, mode="offline", cache_dir=args.cache_dir, baselines=False,
                              store="shared")  # one store, as `open_engine` of every conversation gives
    mx, info = open_engine(config, convs, embedder=embedder, model_client=None)
    names = [c.sample_id for c in convs]
    result: dict[str, Any] = {"benchmark": "locomo_replay", "data_dir": info["data_dir"], "limit": args.limit,
                              "context": args.context, "budget_words": args.budget_words, "variants": {}}
    try:
        replay = Replay(mx, convs, args.limit, args.context, args.budget_words)
        results = {"base": replay.run()}
        for top in SESSIONS:
            def third(conv: Any, q: Any, fused: list[str], top: int = top) -> list[str]:
                return session_leg(replay.sessions[conv.user_id], replay.docs[conv.user_id], q.question, fused, top)

            for weight in WEIGHTS:
                results[f"session S={top} w={weight}"] = replay.run(third, weight)
        for name, scores in results.items():
            s = summary(scores, names)
            result["variants"][name] = s
            per = " ".join(f"{c} {e:.3f}/{a:.3f}" for c, (e, a) in s["per_conversation"].items())
            print(f"{name:22s} {s['evidence_recall']:.4f} / {s['answer_token_recall']:.4f} | {per}", flush=True)
        result["leave_one_conversation_out"] = folds = leave_one_out(results, names)
        print("leave one conversation out:", "; ".join(f"{f['held_out']} -> {f['picked']} {f['gain']:+.3f}"
                                                      for f in folds))
        if args.compare_cache_dir:
            other_config = config.model_copy(update={"cache_dir": args.compare_cache_dir})
            other, _ = open_engine(other_config, convs, embedder=embedder, model_client=None)
            try:
                result["compare"] = compare(replay, Replay(other, convs, args.limit, args.context, args.budget_words),
                                            names)
            finally:
                other.close()
            print("compare:", json.dumps(result["compare"]))
    finally:
        mx.close()
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, default=str))
    return 0


def compare(first: Replay, second: Replay, names: Sequence[str]) -> dict[str, Any]:
    """How often the second ingestion's legs differ from the first's (memories matched by user, type
    and text), and the first store scored with each ingestion's legs."""
    def keyed(replay: Replay) -> dict[str, tuple]:
        ids: dict[str, set[str]] = collections.defaultdict(set)
        for conv, q in replay.questions:
            ids[conv.user_id].update(i for leg in replay.legs[question_key(q)] for i in leg)
        found: dict[str, tuple] = {}
        for user, wanted in ids.items():
            for i, m in replay.mx.store.get_many(sorted(wanted), user_id=user).items():
                found[i] = (m.user_id, m.memory_type.value, m.search_text())
        return found

    key1, key2 = keyed(first), keyed(second)
    id_of = {k: i for i, k in key1.items()}
    mapped = {q: ([id_of[key2[i]] for i in lex if key2[i] in id_of], [id_of[key2[i]] for i in vec if key2[i] in id_of])
              for q, (lex, vec) in second.legs.items()}
    differ = [sum(1 for q in first.legs if first.legs[q][n] != mapped[q][n]) for n in (0, 1)]
    return {"questions": len(first.legs), "full_text_leg_differs": differ[0], "vector_leg_differs": differ[1],
            "first": summary(first.run(), names), "second_legs_on_first_store": summary(first.run(legs=mapped), names)}


if __name__ == "__main__":
    raise SystemExit(main())
