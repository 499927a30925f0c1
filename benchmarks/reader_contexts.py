"""What each reader's context holds on LoCoMo: the prompt chat, REST `/context` and the framework adapters
build (`integrations.context.retrieve_context`, chat's coarse retrieval) beside `Mirix.search`.

Per question (categories 1-4), the evidence recall of the hits each path hands a reader, with no word
budget (the paths return what they return), the hits and words it takes, and each call's time (p50 and
p95 in ms, the paths taking turns question by question):

- `context`: `retrieve_context(mx, user, question, max_items=N)`, the engine's coarse retrieval;
- `search`: `mx.search(question, limit=N)`, the SDK's call (`mirix eval locomo` measures it cut to 750 words);
- `offline chat's answer`: the memories `Mirix.chat` cites when no model is configured (its lines
  are those memories; words counted as their search text);
- **baseline in the same run** for it, `offline answer, core lines first (before)`: the answer offline
  chat gave before, rebuilt (the matching core lines first, then the matching hits re-ranked by shared
  words and cosine; its time is not the chat call's);
- **baseline in the same run**, `type by type`: the coarse retrieval the engine had before, each memory
  type searched on its own with the question's offline keywords (6 episodes, 5 facts, 2 procedures, 2
  resources, 2 vault entries), merged by score and cut to N matches.

Ingestion is `mirix eval locomo`'s (a store per conversation, cached the same way).

    .venv/bin/python benchmarks/reader_contexts.py ../shared/data/locomo/locomo_dev.json [--items 10] --out FILE
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirix_py.agents.chat import (  # noqa: E402
    OFFLINE_ANSWER_ITEMS, _relevance, cosines, matching_lines, offline_topics, restatements)
from mirix_py.eval.locomo import CATEGORY_NAMES, evidence_recall, load_locomo  # noqa: E402
from mirix_py.eval.cache import default_cache_dir  # noqa: E402
from mirix_py.eval.locomo_eval import (  # noqa: E402
    SCORED_CATEGORIES, LocomoEvalConfig, close_engines, open_engines, selected_questions)
from mirix_py.integrations.context import first_matches, retrieve_context  # noqa: E402
from mirix_py.records import MemoryType, SearchHit  # noqa: E402

# the coarse retrieval before one ranking: each type's own search, these many matches of it
TYPE_BY_TYPE = {MemoryType.episodic: 6, MemoryType.semantic: 5, MemoryType.procedural: 2, MemoryType.resource: 2,
                MemoryType.knowledge_vault: 2}

ReaderPath = Callable[[Any, str, str, int], list[SearchHit]]


def by_context(mx: Any, user_id: str, question: str, items: int) -> list[SearchHit]:
    return retrieve_context(mx, user_id, question, max_items=items).hits


def by_search(mx: Any, user_id: str, question: str, items: int) -> list[SearchHit]:
    return mx.search(question, user_id=user_id, limit=items)


def type_by_type(mx: Any, user_id: str, question: str, items: int) -> list[SearchHit]:
    topics = offline_topics(question, datetime.now(timezone.utc))
    query = " ".join(topics.keywords) or question
    hits: list[SearchHit] = []
    for memory_type, limit in TYPE_BY_TYPE.items():
        found = mx.search(query, user_id=user_id, limit=limit, memory_types=[memory_type],
                          start=topics.start, end=topics.end)
        if not found and (topics.start or topics.end):
            found = mx.search(query, user_id=user_id, limit=limit, memory_types=[memory_type])
        hits.extend(found)
    hits.sort(key=lambda h: -h.score)
    return first_matches(hits, items)


def by_offline_chat(mx: Any, user_id: str, question: str, items: int) -> list[SearchHit]:
    """The memories offline chat's answer cites (`Mirix.chat` without a model; `items` does not apply)."""
    response = mx.chat(question, user_id=user_id, remember=False)
    cited = mx.store.get_many(response.memory_ids, user_id=user_id)
    return [SearchHit(text=cited[i].search_text(), score=0.0, memory=cited[i], method="hybrid")
            for i in response.memory_ids if i in cited]


def offline_answer_before(mx: Any, user_id: str, question: str, items: int) -> list[SearchHit]:
    """**Baseline in the same run** for offline chat: the answer it gave before (the core lines that
    match first, then the matching hits re-ranked by the question's words they hold plus their cosine
    to it), rebuilt from chat's coarse retrieval and match rule, up to the same 5 lines."""
    flow = mx.chat_flow
    retrieval = flow.retrieve(user_id, question, offline_topics(question, datetime.now(timezone.utc)),
                              mx.core_memory(user_id=user_id))
    lines = [line for block in retrieval.core.values() for line in block.value.splitlines() if line.strip()]
    similar = cosines(mx.store.embedder.embed, question, lines + [h.memory.embedding_text() for h in retrieval.hits]) or []
    blocks = {line: block for block in retrieval.core.values() for line in block.value.splitlines()}
    shown: list[SearchHit] = [
        SearchHit(text=line, score=0.0, memory=blocks[line], method="hybrid")
        for line in matching_lines(question, lines, similar[:len(lines)] or None)]
    scored = []
    for i, h in enumerate(retrieval.hits):
        value = _relevance(question, h.text, similar[len(lines) + i] if similar else None,
                           by_words=bool(restatements(h.memory.source_ids, retrieval.tags)))
        if value is not None:
            scored.append((restatements(h.memory.source_ids, retrieval.tags), -value, -h.score, i, h))
    shown += [h for *_, h in sorted(scored, key=lambda x: x[:4])]
    return shown[:OFFLINE_ANSWER_ITEMS]


PATHS: dict[str, ReaderPath] = {"context": by_context, "search": by_search, "type by type (before)": type_by_type,
                                "offline chat's answer": by_offline_chat,
                                "offline answer, core lines first (before)": offline_answer_before}


def mean(values: Sequence[float]) -> float:
    return statistics.mean(values) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def measure(engines: Any, convs: Sequence[Any], items: int) -> dict[str, Any]:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in PATHS}
    for conv, q in selected_questions(convs):
        if q.category not in SCORED_CATEGORIES:
            continue
        mx = engines[conv.user_id]
        for name, path in PATHS.items():
            started = time.perf_counter()
            hits = path(mx, conv.user_id, q.question, items)
            ms = 1000 * (time.perf_counter() - started)
            rows[name].append({"conversation": conv.sample_id, "category": q.category,
                               "evidence_recall": evidence_recall(q.evidence, {s for h in hits for s in h.memory.source_ids}),
                               "hits": len(hits), "words": sum(len(h.text.split()) for h in hits), "ms": ms})
    names = [c.sample_id for c in convs]
    return {name: {"evidence_recall": mean([r["evidence_recall"] for r in rs]),
                   "hits": mean([r["hits"] for r in rs]), "words": mean([r["words"] for r in rs]),
                   "ms_p50": percentile([r["ms"] for r in rs], 0.50), "ms_p95": percentile([r["ms"] for r in rs], 0.95),
                   "by_category": {str(k): mean([r["evidence_recall"] for r in rs if r["category"] == k])
                                   for k in SCORED_CATEGORIES},
                   "per_conversation": {c: mean([r["evidence_recall"] for r in rs if r["conversation"] == c])
                                        for c in names}}
            for name, rs in rows.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=default_cache_dir("locomo"))
    ap.add_argument("--items", type=int, nargs="+", default=[10], help="matches a reader is handed (max_items, limit)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from mirix_py.store.embeddings import load_embedder

    convs = load_locomo(args.data)
    config = LocomoEvalConfig(data=args.data, mode="offline", cache_dir=args.cache_dir, baselines=False)
    engines, info = open_engines(config, convs, embedder=load_embedder("minilm"), model_client=None)
    result: dict[str, Any] = {"benchmark": "reader_contexts", "store": info["store"],
                              "categories": {str(k): CATEGORY_NAMES[k] for k in SCORED_CATEGORIES}, "runs": {}}
    try:
        for items in args.items:
            figures = measure(engines, convs, items)
            result["runs"][str(items)] = figures
            print(f"\n{items} matches a reader  evidence  hits  words  ms p50  p95 | "
                  + " ".join(CATEGORY_NAMES[k][:10] for k in SCORED_CATEGORIES) + " | "
                  + " ".join(c.sample_id for c in convs))
            for name, f in figures.items():
                print(f"{name:22s} {f['evidence_recall']:.4f} {f['hits']:5.1f} {f['words']:6.0f} "
                      f"{f['ms_p50']:6.1f} {f['ms_p95']:5.1f} | "
                      + " ".join(f"{f['by_category'][str(k)]:.3f}" for k in SCORED_CATEGORIES) + " | "
                      + " ".join(f"{v:.3f}" for v in f["per_conversation"].values()), flush=True)
    finally:
        close_engines(engines)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
