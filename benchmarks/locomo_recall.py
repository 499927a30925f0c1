"""LoCoMo evidence recall inside a word budget: the engine beside three raw-turn baselines.

For every question with evidence, search its conversation's user with the question (limit 60),
keep hits in rank order while they fit the budget (stop at the first that does not), and score the
share of the question's evidence turns (dia_ids) found in the kept hits' `source_ids`. Recall is
averaged over categories 1-4 (760 questions on the dev split); category 5 is reported apart.

Engine variants: hybrid (default), bm25-only, embedding-only. Baselines over the same
conversation's raw turns, each "Speaker: text": BM25 (Okapi k1=1.5 b=0.75, rank_bm25's idf),
MiniLM cosine (the engine's embedder), and RRF (k=60) of both.

Each conversation is ingested into a data dir of its own, as one user's memory is and as
`mirix eval locomo` does (full-text statistics are a store's: see benchmarks/docs/locomo_eval.md).
The data dirs are cached under ./.bench-cache/, keyed by the data file's hash, the conversation, the
embedder and a hash of the engine's source (so a change to the rules re-ingests); --fresh forces it.

    .venv/bin/python benchmarks/locomo_recall.py /work/shared/data/locomo/locomo_dev.json --budget-words 750
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _common as C

CACHE_VERSION = 1
DESIGN_REFERENCE = {"raw BM25": 0.64, "raw MiniLM": 0.64, "raw RRF": 0.72}  # DESIGN.md, 750 words


def clear_query_cache(mx: Any) -> None:
    """Empty the searcher's query-embedding cache (a private detail: skipped if it is not there)."""
    cache = getattr(getattr(mx.searcher, "embedder", None), "_cache", None)
    if hasattr(cache, "clear"):
        cache.clear()


def open_engines(data_path: str, convs: list, cache_root: Path, embedder_spec: str, fresh: bool,
                 use_cache: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each conversation's user -> an engine on the conversation's own data dir, and the ingestions."""
    from mirix_py.eval.locomo_eval import close_engines
    from mirix_py.store.embeddings import load_embedder

    t0 = time.perf_counter()
    embedder = load_embedder(embedder_spec)
    if embedder_spec != "none" and embedder is None:
        raise SystemExit("the embedder did not load (see the warning above)")
    loaded = time.perf_counter() - t0
    engines: dict[str, Any] = {}
    infos: dict[str, dict[str, Any]] = {}
    try:
        for conv in convs:
            engines[conv.user_id], infos[conv.sample_id] = open_engine(data_path, conv, cache_root, embedder_spec,
                                                                       embedder, fresh, use_cache)
    except BaseException:
        close_engines(engines)
        raise
    memories: Counter = Counter()
    for info in infos.values():
        memories.update(info["memories"])
    seconds = [i.get("ingest_seconds") for i in infos.values()]
    return engines, {"store": "per_conversation", "embedder_load_seconds": loaded,
                     "data_dirs": {k: i["data_dir"] for k, i in infos.items()},
                     "reused": all(i["reused"] for i in infos.values()),
                     "ingest_seconds": None if None in seconds else sum(seconds),
                     "turns": sum(i.get("turns", 0) for i in infos.values()),
                     "sessions": sum(i.get("sessions", 0) for i in infos.values()),
                     "failed_sessions": [s for i in infos.values() for s in i.get("failed_sessions", [])],
                     "memories": dict(sorted(memories.items()))}


def open_engine(data_path: str, conv: Any, cache_root: Path, embedder_spec: str, embedder: Any, fresh: bool,
                use_cache: bool) -> tuple[Any, dict[str, Any]]:
    """An engine on one conversation's data dir, ingested unless the cache holds it."""
    from mirix_py.engine import Mirix
    from mirix_py.eval.cache import engine_fingerprint
    from mirix_py.eval.locomo import file_digest, ingest_conversations
    from mirix_py.eval.locomo_eval import check_reused_store, refuse_held_users, store_outside
    from mirix_py.settings import Settings

    convs = [conv]
    # a database or Chroma server named by the environment is part of what was ingested where
    outside = store_outside(Settings.from_env())
    store_tag = "" if outside is None else "-" + hashlib.sha256(json.dumps(outside, sort_keys=True).encode()).hexdigest()[:8]
    key = (f"locomo-{file_digest(data_path)}-{conv.sample_id}-{embedder_spec}{store_tag}-{engine_fingerprint()}"
           f"-v{CACHE_VERSION}")
    data_dir = cache_root / key
    marker = data_dir / "ingested.json"
    info: dict[str, Any] = {"data_dir": str(data_dir), "cache_key": key}
    reuse = use_cache and not fresh and marker.exists()
    if not reuse and data_dir.exists():
        shutil.rmtree(data_dir)  # a partial or stale ingestion
    if not reuse:  # ingestions of the same data by older engine sources are stale: drop them
        prefix = key.rsplit("-", 2)[0] + "-"
        for old in cache_root.glob(prefix + "*"):
            if old.is_dir() and old != data_dir:
                shutil.rmtree(old, ignore_errors=True)
    mx = Mirix(data_dir=data_dir, embedder=embedder)
    if reuse:
        info.update(json.loads(marker.read_text()), reused=True)
        print(f"reusing ingested data dir {data_dir}", flush=True)
    else:
        refuse_held_users(mx, convs)
        print(f"ingesting {sum(len(c.turns) for c in convs)} turns into {data_dir} ...", flush=True)
        t1 = time.perf_counter()
        stats = ingest_conversations(mx, convs)
        info.update(reused=False, ingest_seconds=time.perf_counter() - t1, turns=stats.turns, sessions=stats.sessions,
                    failed_sessions=stats.failed_sessions)
        marker.write_text(json.dumps({k: info[k] for k in ("ingest_seconds", "turns", "sessions", "failed_sessions")}))
        print(f"ingested in {info['ingest_seconds']:.1f}s", flush=True)
    if reuse:
        check_reused_store(mx, convs, info)  # an outside database may have been emptied since
    info["memories"] = dict(sorted(mx.store.count(user_id=conv.user_id).items()))
    return mx, info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="LoCoMo JSON (the original format)")
    ap.add_argument("--budget-words", type=int, nargs="+", default=[750],
                    help="context budget(s) in words (len(text.split())); several budgets share one retrieval")
    ap.add_argument("--limit", type=int, default=60, help="engine hits fetched per question (default 60)")
    ap.add_argument("--methods", nargs="+", default=["hybrid", "bm25", "embedding"],
                    choices=["hybrid", "bm25", "embedding", "string"], help="engine search methods to score")
    ap.add_argument("--context", type=int, default=None,
                    help="engine search context: turns around the first N matches (default: the engine's own, "
                         "Settings.search_context, as `mirix eval locomo`)")
    ap.add_argument("--memory-types", nargs="+", help="restrict engine search to these memory types")
    ap.add_argument("--embedder", choices=["minilm", "none"], default="minilm")
    ap.add_argument("--cache-dir", default=".bench-cache", help="where ingested data dirs are kept (default ./.bench-cache)")
    ap.add_argument("--no-cache", action="store_true", help="ingest into the cache dir but do not reuse it")
    ap.add_argument("--fresh", action="store_true", help="re-ingest even when a cached data dir exists")
    ap.add_argument("--no-baselines", action="store_true", help="skip the raw-turn baselines")
    ap.add_argument("--baseline-stopwords", action="store_true",
                    help="drop mirix_py.text.words.STOPWORDS in the BM25 baseline (default: keep them, as DESIGN.md's figures)")
    ap.add_argument("--baseline-idf", choices=["okapi", "lucene"], default="okapi",
                    help="okapi: rank_bm25's idf with the epsilon floor (default); lucene: ln(1 + ...)")
    ap.add_argument("--torch-threads", type=int, help="torch.set_num_threads before loading the embedder")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    C.add_quiet_args(ap)
    args = ap.parse_args()
    C.quiet_logs()

    from mirix_py.eval.locomo_eval import close_engines
    from mirix_py.eval.locomo import (
        BASELINE_NAMES, CATEGORY_NAMES, ENGINE_RRF_K, SCORED_CATEGORIES, EvidenceReport, RawTurnBaselines, collect,
        full_context_words, load_locomo, score,
    )
    from mirix_py.text.words import STOPWORDS

    env = C.environment()
    env["torch_threads"] = C.set_torch_threads(args.torch_threads)
    t_start = time.perf_counter()
    evidence = EvidenceReport()
    convs = load_locomo(args.data, evidence)
    counts = Counter(q.category for c in convs for q in c.questions if q.evidence)
    print(f"{len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, "
          f"{sum(len(c.questions) for c in convs)} questions; scored (cats 1-4 with evidence): "
          f"{sum(counts[c] for c in SCORED_CATEGORIES)}; full context "
          f"{min(map(full_context_words, convs))}-{max(map(full_context_words, convs))} words per conversation")
    print(f"evidence: {evidence.entries} entries, {len(evidence.malformed)} malformed {evidence.malformed}, "
          f"{len(evidence.dropped)} dropped, {len(evidence.unknown)} naming no turn {evidence.unknown}, "
          f"{evidence.no_evidence} questions without evidence (not scored)", flush=True)

    cache_root = C.cache_root(args.cache_dir)
    engines, engine_info = open_engines(args.data, convs, cache_root, args.embedder, args.fresh, not args.no_cache)
    embedder = next(iter(engines.values())).store.embedder

    systems: list[tuple[str, list]] = []
    waits = {"searches": C.wait_for_quiet(args.wait_quiet, args.wait_timeout)}
    load_searches = C.loadavg()
    kept_types: dict[str, Counter] = {}
    for method in args.methods:
        if method in ("hybrid", "embedding") and embedder is None:
            print(f"skipping engine {method}: no embedder")
            continue
        types_by_q: dict[tuple[str, int], list[str]] = {}
        for mx in engines.values():
            clear_query_cache(mx)  # every method pays for its own query embeddings in ms/q
        def retrieve(conv, q, _method=method, _types=types_by_q):
            # as mirix_py.eval.locomo.engine_retriever, also noting the memory types of the hits
            hits = engines[conv.user_id].search(q.question, user_id=conv.user_id, limit=args.limit, method=_method,
                             memory_types=args.memory_types, context=args.context)
            _types[(conv.sample_id, q.index)] = [h.memory.memory_type.value for h in hits]
            return [(h.text, tuple(h.memory.source_ids)) for h in hits]

        t0 = time.perf_counter()
        got = collect(convs, retrieve)
        print(f"engine {method}: {len(got)} searches in {time.perf_counter() - t0:.1f}s", flush=True)
        systems.append((f"engine {method}", got))
        kept_types[f"engine {method}"] = types_by_q  # type: ignore[assignment]

    baseline_info: dict[str, Any] = {}
    if not args.no_baselines:
        t0 = time.perf_counter()
        baselines = RawTurnBaselines(convs, embedder, stopwords=STOPWORDS if args.baseline_stopwords else None,
                                     idf=args.baseline_idf)
        baseline_info = {"build_seconds": time.perf_counter() - t0, "stopwords": bool(args.baseline_stopwords),
                         "idf": args.baseline_idf, "tokenizer": "lowercase [a-z0-9]+ runs", "k1": 1.5, "b": 0.75,
                         "rrf_k": [60, ENGINE_RRF_K], "document": "Speaker: text [shares a photo: caption]", "depth": "all turns"}
        names = BASELINE_NAMES
        for method in RawTurnBaselines.METHODS:
            if method != "bm25" and embedder is None:
                continue
            systems.append((names[method], collect(convs, baselines.retriever(method))))
        print(f"baselines built and run in {time.perf_counter() - t0:.1f}s", flush=True)

    results: dict[str, Any] = {}
    cat_headers = [f"{c} {CATEGORY_NAMES[c]}" for c in SCORED_CATEGORIES]
    for budget in args.budget_words:
        rows = []
        results[str(budget)] = {}
        for name, got in systems:
            report = score(got, budget, name)
            by_cat = report.by_category()
            overall = report.overall()
            cat5 = by_cat.get(5, {})
            rows.append([name, *[by_cat.get(c, {}).get("recall", float("nan")) for c in SCORED_CATEGORIES],
                         overall["recall"], cat5.get("recall", float("nan")), overall["words"], overall["mean_ms"]])
            entry = report.as_dict()
            entry["category_5"] = cat5
            if name in kept_types:
                mix: Counter = Counter()
                for r in report.results:
                    mix.update(kept_types[name][(r.conversation_id, r.index)][: r.hits_kept])  # type: ignore[index]
                entry["kept_hit_types"] = dict(mix)
                entry["questions_with_nothing_kept"] = sum(1 for r in report.results if r.hits_kept == 0)
            results[str(budget)][name] = entry
        rows.append(["questions", *[counts[c] for c in SCORED_CATEGORIES], sum(counts[c] for c in SCORED_CATEGORIES),
                     counts[5], "", ""])
        print()
        print(C.table(["system", *cat_headers, "overall 1-4", "5 adversarial", "words", "ms/q"], rows,
                      title=f"LoCoMo evidence recall inside {budget} words (limit {args.limit}; mean over questions)"))
        print("ms/q: engine rows include embedding each question (cache emptied per method); raw rows rank "
              "precomputed vectors (questions embedded in one batch), so they exclude it.")
        if budget == 750:
            print("DESIGN.md reference at 750 words (other runs): raw BM25 0.64, raw MiniLM 0.64, raw RRF 0.72; "
                  "mem0 2.2.1 without LLM 0.640 (plain) / 0.725 (nlp,extras)")
        for name, entry in results[str(budget)].items():
            if "kept_hit_types" in entry:
                print(f"  {name}: kept hits by type {entry['kept_hit_types']}; "
                      f"questions with nothing kept: {entry['questions_with_nothing_kept']}")

    print(f"\nengine memories: {engine_info['memories']}; total run {time.perf_counter() - t_start:.0f}s; "
          f"load average before searches {load_searches}, at end {C.loadavg()} (ms/q is sensitive to it)")
    C.write_json(args.out, {
        "benchmark": "locomo_recall", "data": str(args.data), "environment": env, "limit": args.limit,
        "context": next(iter(engines.values())).settings.search_context if args.context is None else args.context,
        "memory_types": args.memory_types, "question_counts": {str(k): v for k, v in sorted(counts.items())},
        "evidence": evidence.as_dict(), "engine": engine_info, "baselines": baseline_info, "results": results,
        "design_reference_750": DESIGN_REFERENCE, "total_seconds": time.perf_counter() - t_start,
        "loadavg_before_searches": load_searches, "loadavg_at_end": C.loadavg(), "waits": waits,
    })
    close_engines(engines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
