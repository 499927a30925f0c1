"""Replay of the neighbours' words in the full-text index (`fulltext.near_texts`) on one LoCoMo
ingestion: for each window (turns before, turns after) and weight, every user's memories go into an
FTS5 table of their own layout (the engine's tokenizer, a `near` column weighed in bm25(), users in
rowid ranges as in the engine), and each question's full-text leg from it is fused with the engine's
own vector leg, weighed, expanded with context and scored as `mirix eval locomo` does. Window (0, 0)
is the same table without neighbours: the baseline of the same run. Ends with a leave-one-
conversation-out pick over the grid (the variant the other four conversations score best on, and its
gain on the held-out one).

    .venv/bin/python benchmarks/locomo_near.py ../shared/data/locomo/locomo_dev.json \
        [--cache-dir DIR] [--grid small] [--out near.json]

Ingestions come from (or go into) the same cache as `mirix eval locomo`'s offline mode, with `store="shared"`:
one store for all conversations, the layout its figures were measured on (SQLite's full-text statistics
then count every conversation; see benchmarks/docs/locomo_eval.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from locomo_replay import leave_one_out, replay_arguments, summary  # noqa: E402

from mirix_py.eval.locomo import load_locomo  # noqa: E402
from mirix_py.eval.locomo_eval import (  # noqa: E402
    SCORED_CATEGORIES, Hit, LocomoEvalConfig, context_scores, open_engine, question_key, selected_questions)
from mirix_py.records import EpisodicMemory, SearchHit, SearchMethod  # noqa: E402
from mirix_py.store.db import sqlite_dbapi  # noqa: E402
from mirix_py.store.fulltext import Filters  # noqa: E402
from mirix_py.text.words import query_terms  # noqa: E402
from mirix_py.store.near import near_texts  # noqa: E402
from mirix_py.store.questions import QUESTION_POOL  # noqa: E402
from mirix_py.store.restatements import weigh_down  # noqa: E402
from mirix_py.store.search import Searcher, rrf_fuse, with_context  # noqa: E402

FULL_GRID = [((0, 0), 0.0)] + [((b, a), w) for b, a, ws in (
    (1, 1, (0.2, 0.3, 0.5, 0.7, 1.0)), (2, 2, (0.3, 0.4, 0.5, 0.6, 0.7)), (3, 3, (0.3, 0.5, 0.7)),
    (1, 0, (0.5,)), (0, 1, (0.5,)), (2, 1, (0.5,)), (3, 2, (0.5,))) for w in ws]
SMALL_GRID = [((0, 0), 0.0), ((3, 2), 0.5)]
FETCH = 180  # each leg's depth, as `Searcher.search` at the eval's limit 60


def user_turns(mx: Any, user_id: str) -> tuple[list[list[tuple[str, str]]], list[tuple[str, str]]]:
    """A user's episodes per input in the order the engine reads them (time, then creation), and
    every other memory, as (id, search text)."""
    inputs: dict[str, list[tuple[Any, Any, str, str]]] = {}
    others: list[tuple[str, str]] = []
    for m in mx.store.list(user_id=user_id, limit=1_000_000, newest_first=False):
        if isinstance(m, EpisodicMemory) and m.source_ids:
            inputs.setdefault(m.source_ids[0], []).append((m.occurred_at, m.created_at, m.id, m.search_text()))
        else:
            others.append((m.id, m.search_text()))
    return [[(i, t) for _, _, i, t in sorted(turns, key=lambda x: (x[0], x[1], x[2]))] for turns in inputs.values()], \
        others


class NearIndex:
    """An in-memory FTS5 table with a `near` column, one rowid range per user."""

    def __init__(self, users: dict[str, tuple[list[list[tuple[str, str]]], list[tuple[str, str]]]],
                 before: int, after: int) -> None:
        self.db = sqlite_dbapi().connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE f USING fts5(text, near, id UNINDEXED, tokenize='porter unicode61')")
        self.ranges: dict[str, tuple[int, int]] = {}
        for n, (user_id, (inputs, others)) in enumerate(sorted(users.items())):
            low = (n + 1) << 32
            self.ranges[user_id] = (low, low + (1 << 32) - 1)
            rows: list[tuple[int, str, str, str]] = []
            for turns in inputs:
                near = near_texts(turns, before, after) if before or after else {}
                rows += [(low + len(rows) + k, text, near.get(i, ""), i) for k, (i, text) in enumerate(turns)]
            rows += [(low + len(rows) + k, text, "", i) for k, (i, text) in enumerate(others)]
            self.db.executemany("INSERT INTO f(rowid, text, near, id) VALUES (?, ?, ?, ?)", rows)

    def ranked(self, user_id: str, question: str, weight: float) -> list[str]:
        terms = query_terms(question)
        if not terms:
            return []
        low, high = self.ranges[user_id]
        rows = self.db.execute(
            f"SELECT id, bm25(f, 1.0, {float(weight)}, 0.0) AS s FROM f WHERE f MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY s, rowid LIMIT ?", ("(" + " OR ".join(f'"{t}"' for t in terms) + ")", low, high, FETCH)).fetchall()
        return [r[0] for r in rows]


def score(mx: Any, questions: Sequence[Any], lexical: dict[str, list[str]], semantic: dict[str, list[str]],
          limit: int, context: int, budget: int) -> dict[str, dict[str, Any]]:
    out = {}
    for conv, q in questions:
        key = question_key(q)
        ranked = rrf_fuse([lexical[key], semantic[key]])[: limit + QUESTION_POOL]
        records = mx.store.get_many([i for i, _ in ranked], user_id=conv.user_id)
        ranked = weigh_down(ranked, records)[:limit]
        hits = [SearchHit(text=records[i].search_text(), score=s, memory=records[i], method=SearchMethod.hybrid)
                for i, s in ranked if i in records]
        hits = with_context(mx.store, hits, context) if context else hits
        out[key] = context_scores(q, [Hit(id=h.memory.id, score=float(h.score), text=h.text,
                                          source_ids=list(h.memory.source_ids)) for h in hits], budget)
    return out


def main() -> int:
    ap = replay_arguments(__doc__)
    ap.add_argument("--conversations", type=int, help="only the first N conversations")
    ap.add_argument("--grid", choices=["full", "small"], default="full",
                    help="full: the windows and weights measured; small: none and the engine's (CI)")
    args = ap.parse_args()

    from mirix_py.store.embeddings import load_embedder

    convs = load_locomo(args.data)[: args.conversations]
    config = LocomoEvalConfig(data=args.data, mode="offline", cache_dir=args.cache_dir, baselines=False,
                              conversations=args.conversations, store="shared")
    mx, info = open_engine(config, convs, embedder=load_embedder("minilm"), model_client=None)
    names = [c.sample_id for c in convs]
    grid = FULL_GRID if args.grid == "full" else SMALL_GRID
    result: dict[str, Any] = {"benchmark": "locomo_near", "data_dir": info["data_dir"], "limit": args.limit,
                              "context": args.context, "budget_words": args.budget_words, "variants": {}}
    try:
        questions = [(c, q) for c, q in selected_questions(convs) if q.category in SCORED_CATEGORIES]
        searcher = Searcher(mx.store)
        semantic = {question_key(q): [i for i, _ in searcher._vector(q.question, Filters(user_id=c.user_id), FETCH)]
                    for c, q in questions}
        searcher.close()
        users = {c.user_id: user_turns(mx, c.user_id) for c in convs}
        results: dict[str, dict[str, dict[str, Any]]] = {}
        indexes: dict[tuple[int, int], NearIndex] = {}
        for window, weight in grid:
            index = indexes.setdefault(window, NearIndex(users, *window))
            lexical = {question_key(q): index.ranked(c.user_id, q.question, weight) for c, q in questions}
            name = "no neighbours" if window == (0, 0) else f"before {window[0]} after {window[1]} w={weight}"
            results[name] = scores = score(mx, questions, lexical, semantic, args.limit, args.context,
                                           args.budget_words)
            s = summary(scores, names)
            result["variants"][name] = s
            per = " ".join(f"{c} {e:.3f}/{a:.3f}" for c, (e, a) in s["per_conversation"].items())
            print(f"{name:26s} {s['evidence_recall']:.4f} / {s['answer_token_recall']:.4f} | {per}", flush=True)
        if len(names) > 1:
            results["base"] = results["no neighbours"]
            folds = leave_one_out(results, names)
            result["leave_one_conversation_out"] = folds
            print("leave one conversation out:", "; ".join(f"{f['held_out']} -> {f['picked']} {f['gain']:+.3f}"
                                                          for f in folds))
    finally:
        mx.close()
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
