"""What leaving out a large user's very common query words does to the BM25 leg: its time, and how
much of its ranking it moves.

For a user of `PARALLEL_MIN_DOCS` memories or more, the query words held in the own text of more
than `LEFT_OUT_SHARE` of them select no rows as long as a rarer word stays (`sqlite_fulltext.left_out_terms`);
they still score the best `RESCORE_WITHIN` x k rows the rarer words select. This runs the leg (FTS5,
whole, depth k) two ways on the same store, alternating per query:

- `all terms` (the baseline: the rule off, LEFT_OUT_SHARE = 1);
- `left out` (the rule as shipped);

and reports each one's latency and the overlap of the two top 10s and top 30s.

The store is fts_ranking.py's: search_latency.py's synthetic pool in the engine's FTS table, a target
user of N memories and nine others of N/10, through `SQLiteFullText.upsert` (no neighbours' words).
With `--min-docs M` the rule applies to users of M memories or more (default: the engine's), so a
tiny run exercises it.

    .venv/bin/python benchmarks/left_out_terms.py --size 100000 --queries 200 --out left_out.json
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import _common as C
from fts_ranking import TARGET, alternately, build, store_arguments, warmed_up

import mirix_py.store.sqlite_fulltext as sqlite_fulltext
from mirix_py.store.db import make_engine
from mirix_py.store.fulltext import Filters
from mirix_py.store.sqlite_fulltext import SQLiteFullText

VARIANTS = ("all terms", "left out")  # the baseline first


def overlap(a: list[tuple[str, float]], b: list[tuple[str, float]], n: int) -> float:
    top = {i for i, _ in a[:n]}
    return len(top & {i for i, _ in b[:n]}) / max(1, len(top))


def main() -> int:
    ap = store_arguments(__doc__)
    ap.add_argument("--min-docs", type=int, default=sqlite_fulltext.PARALLEL_MIN_DOCS,
                    help="users this large take the rule (default: the engine's PARALLEL_MIN_DOCS)")
    args = ap.parse_args()
    C.quiet_logs()
    sqlite_fulltext.PARALLEL_MIN_DOCS = args.min_docs
    shipped = sqlite_fulltext.LEFT_OUT_SHARE

    scratch = Path(tempfile.mkdtemp(prefix="mirix-leftout-"))
    try:
        t0 = time.perf_counter()
        counts = build(scratch / "store.db", args.size, args.other_users, args.seed)
        print(f"{sum(counts.values())} memories ({args.size} for the target user) indexed in "
              f"{time.perf_counter() - t0:.1f}s", flush=True)
        engine = make_engine(f"sqlite:///{scratch / 'store.db'}")
        fts = SQLiteFullText()
        filters = Filters(user_id=TARGET)

        def run(variant: str, query: str) -> list[tuple[str, float]]:
            sqlite_fulltext.LEFT_OUT_SHARE = 1.0 if variant == "all terms" else shipped
            with engine.connect() as conn:
                return fts.search(conn, query, filters, args.k)

        rng, queries, load_before = warmed_up(args, run, VARIANTS)
        seconds: dict[str, list[float]] = {v: [] for v in VARIANTS}
        top10, top30, same10, shortened = [], [], 0, 0
        for q, found in alternately(rng, queries, run, VARIANTS, seconds):
            base, rule = found["all terms"], found["left out"]
            top10.append(overlap(base, rule, 10))
            top30.append(overlap(base, rule, 30))
            same10 += [i for i, _ in base[:10]] == [i for i, _ in rule[:10]]
            with engine.connect() as conn:
                sqlite_fulltext.LEFT_OUT_SHARE = 1.0
                whole = fts._match(conn, q, filters)
                sqlite_fulltext.LEFT_OUT_SHARE = shipped
                shortened += fts._match(conn, q, filters) != whole
        engine.dispose()
    finally:
        sqlite_fulltext.LEFT_OUT_SHARE = shipped
        shutil.rmtree(scratch, ignore_errors=True)

    n = len(top10)
    results = {v: C.latency_summary(seconds[v]) for v in VARIANTS}
    print(C.table(["variant", "p50 ms", "p95 ms", "mean ms", "p99 ms"],
                  [[v, r["p50_ms"], r["p95_ms"], r["mean_ms"], r["p99_ms"]] for v, r in results.items()],
                  title=f"BM25 leg, top {args.k}, target user of {args.size} memories, {n} queries "
                        f"(LEFT_OUT_SHARE {shipped}, rule from {args.min_docs} memories)"))
    print(f"queries whose match lost a word: {shortened}/{n}; top 10 the same: {same10}/{n}; "
          f"overlap of the top 10: {sum(top10) / max(1, n):.3f}, of the top 30: {sum(top30) / max(1, n):.3f}")
    C.write_json(args.out, {
        "benchmark": "left_out_terms", "environment": C.environment(), "args": vars(args),
        "left_out_share": shipped, "memories": counts, "queries": n, "loadavg_before": load_before,
        "queries_shortened": shortened, "same_top10": same10,
        "overlap_top10": sum(top10) / max(1, n), "overlap_top30": sum(top30) / max(1, n), "results": results,
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
