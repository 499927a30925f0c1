"""The BM25 leg's FTS5 query on a large user, three ways in one run, alternating per query:

- `stdlib`: Python's sqlite3 (the system's SQLite: 3.40 on Debian 12), one query (the baseline:
  what the engine ran before);
- `pysqlite3`: pysqlite3-binary's newer SQLite, one query;
- `pysqlite3, as the engine`: the same, the user's rowid range in two halves side by side on two
  connections (`merge_parts`) whenever `FullTextIndex.parts` says two, as the engine searches a user
  of `PARALLEL_MIN_DOCS` memories or more; one query when it says one (a query whose very common
  words are left out, `left_out_terms`: its rows are few and its rescoring runs whole).

The store holds only what the leg reads (the engine's FTS5 table and the `memory` columns ties are
ordered by), filled through `SQLiteFullText.upsert` with search_latency.py's synthetic pool: a target
user of N memories and nine others of N/10. Each library opens a file copy of its own (one SQLite
per file in a process). Every query's three results must be equal; the run fails otherwise.

    .venv/bin/python benchmarks/fts_ranking.py --size 100000 --queries 200 --out fts_ranking.json
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import _common as C
from search_latency import make_query, pool_records, to_memory

from mirix_py.store.db import make_engine, sqlite_dbapi
from mirix_py.store.fulltext import Filters, merge_parts
from mirix_py.store.sqlite_fulltext import SQLiteFullText

VARIANTS = ("stdlib", "pysqlite3", "pysqlite3, as the engine")  # the baseline first
TARGET = "bench-target"


def build(path: Path, n: int, others: int, seed: int) -> dict[str, int]:
    """The FTS table and `memory` rows of the layout; memories per user."""
    from sqlalchemy import text

    pool = pool_records(n, seed)
    rng = random.Random(seed + n)
    users = {TARGET: list(range(n))} | {f"bench-other{u}": rng.sample(range(n), max(1, n // 10)) for u in range(others)}
    engine = make_engine(f"sqlite:///{path}", "stdlib")
    fts = SQLiteFullText()
    with engine.begin() as conn:
        conn.execute(text("CREATE VIRTUAL TABLE memory_fts USING fts5("
                          "text, near, ukey, mtype, memory_id UNINDEXED, tokenize='porter unicode61')"))
        conn.execute(text("CREATE TABLE memory (id TEXT PRIMARY KEY, user_id TEXT, memory_type TEXT, "
                          "occurred_at TEXT, text TEXT)"))
        for user, picks in users.items():
            for start in range(0, len(picks), 2000):
                memories = [to_memory(pool[i], user).model_copy(update={"id": f"{user}:{i}"})
                            for i in picks[start:start + 2000]]
                fts.upsert(conn, [(m.id, user, m.memory_type.value, m.search_text()) for m in memories])
                conn.execute(text("INSERT INTO memory VALUES (:id, :user, :type, :at, :text)"), [
                    {"id": m.id, "user": user, "type": m.memory_type.value, "text": m.search_text(),
                     "at": m.occurred_at.strftime("%Y-%m-%d %H:%M:%S.%f") if m.occurred_at else None}
                    for m in memories])
    engine.dispose()
    return {u: len(p) for u, p in users.items()}


def warmed_up(args: argparse.Namespace, run: Callable[[str, str], Any],
              variants: Sequence[str]) -> tuple[random.Random, list[str], list[float]]:
    """The run's random source, its distinct timed queries (after every variant has run the first
    `--warmup` ones untimed) and the load average once the machine is quiet enough to time them."""
    rng = random.Random(args.seed)
    queries = list(dict.fromkeys(make_query(rng) for _ in range(args.queries * 3)))[:args.queries + args.warmup]
    for q in queries[:args.warmup]:
        for v in variants:
            run(v, q)
    C.wait_for_quiet(args.wait_quiet, args.wait_timeout)
    return rng, queries[args.warmup:], C.loadavg()


def alternately(rng: random.Random, queries: Sequence[str], run: Callable[[str, str], Any], variants: Sequence[str],
                seconds: dict[str, list[float]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each query and what every variant found for it, the variants run in a fresh random order per
    query and each run's time appended to `seconds[variant]`."""
    order = list(variants)
    for q in queries:
        rng.shuffle(order)
        found = {}
        for v in order:
            t = time.perf_counter()
            found[v] = run(v, q)
            seconds[v].append(time.perf_counter() - t)
        yield q, found


def store_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The arguments of a run on this store: its size, its queries, the leg's depth."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=100_000, help="memories of the target user")
    ap.add_argument("--other-users", type=int, default=9)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--k", type=int, default=30, help="the leg's depth (hybrid search asks max(3 x limit, 30))")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=None)
    C.add_quiet_args(ap)
    return ap


def main() -> int:
    args = store_arguments(__doc__).parse_args()
    C.quiet_logs()
    try:
        sqlite_dbapi("pysqlite3")
    except ImportError:
        print("pysqlite3-binary is not installed (it has wheels for Linux x86_64 only): nothing to compare")
        return 2

    scratch = Path(tempfile.mkdtemp(prefix="mirix-fts-"))
    try:
        t0 = time.perf_counter()
        counts = build(scratch / "stdlib.db", args.size, args.other_users, args.seed)
        build_s = time.perf_counter() - t0
        shutil.copy(scratch / "stdlib.db", scratch / "pysqlite3.db")
        print(f"{sum(counts.values())} memories ({args.size} for the target user) indexed in {build_s:.1f}s", flush=True)
        engines = {"stdlib": make_engine(f"sqlite:///{scratch / 'stdlib.db'}", "stdlib"),
                   "pysqlite3": make_engine(f"sqlite:///{scratch / 'pysqlite3.db'}", "pysqlite3")}
        fts = SQLiteFullText()
        filters = Filters(user_id=TARGET)
        workers = ThreadPoolExecutor(max_workers=1)

        def part(engine: Any, query: str, index: int) -> list:
            with engine.connect() as conn:
                return fts.search_part(conn, query, filters, args.k, (index, 2))

        split: set[str] = set()  # the queries the engine searches in two parts

        def run(variant: str, query: str) -> list[tuple[str, float]]:
            engine = engines["stdlib" if variant == "stdlib" else "pysqlite3"]
            with engine.connect() as conn:
                if not variant.endswith("engine") or fts.parts(conn, query, filters) == 1:
                    return fts.search(conn, query, filters, args.k)
            split.add(query)
            other = workers.submit(part, engine, query, 1)
            return merge_parts([part(engine, query, 0), other.result()], args.k)

        rng, queries, load_before = warmed_up(args, run, VARIANTS)
        seconds: dict[str, list[float]] = {v: [] for v in VARIANTS}
        differ = 0
        for _, found in alternately(rng, queries, run, VARIANTS, seconds):
            differ += len({tuple(found[v]) for v in VARIANTS}) > 1
        workers.shutdown()
        with engines["pysqlite3"].connect() as conn:
            from sqlalchemy import text

            matches = sorted(conn.execute(text(
                "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH :m"), {"m": fts.match_expression(q, filters)}).scalar_one()
                for q in queries)
        versions = {name: sqlite_dbapi(name).sqlite_version for name in ("stdlib", "pysqlite3")}
        for engine in engines.values():
            engine.dispose()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    results = {v: C.latency_summary(seconds[v]) for v in VARIANTS}
    print()
    print(C.table(["variant", "p50 ms", "p95 ms", "mean ms", "p99 ms"],
                  [[f"{v} ({versions['stdlib' if v == 'stdlib' else 'pysqlite3']})", r["p50_ms"], r["p95_ms"],
                    r["mean_ms"], r["p99_ms"]] for v, r in results.items()],
                  title=f"BM25 leg's FTS5 query, k={args.k}, {len(seconds['stdlib'])} queries, user of {args.size} "
                        f"memories; matches per query (all users) p50 {matches[len(matches) // 2]}, max {matches[-1]}"))
    base = results["stdlib"]
    for v in VARIANTS[1:]:
        print(f"{v} vs stdlib: p50 x{base['p50_ms'] / results[v]['p50_ms']:.2f}, "
              f"p95 x{base['p95_ms'] / results[v]['p95_ms']:.2f}")
    print(f"queries searched in two parts by the engine's rule: {len(split & set(queries))} of {len(queries)}")
    print(f"queries whose results differed between the variants: {differ}; load average before "
          f"{load_before}, after {C.loadavg()}")
    C.write_json(args.out, {"benchmark": "fts_ranking", "environment": C.environment(), "args": vars(args),
                            "sqlite_versions": versions, "memories": counts, "build_seconds": build_s,
                            "matches_per_query": {"p50": matches[len(matches) // 2], "max": matches[-1]},
                            "results": results, "differing_queries": differ,
                            "queries_in_two_parts": len(split & set(queries))})
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
