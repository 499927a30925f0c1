"""The three deployment layouts side by side, in one run: SQLite + embedded Chroma, PostgreSQL + a
Chroma server, PostgreSQL + pgvector. Ingestion, search latency and (optionally) the REST load test.

Per size N, each layout gets a fresh store (data dir; PostgreSQL schema; Chroma database) holding
the same memories: a target user with N and `--other-users` users with `--other-share` x N each,
from search_latency's synthetic pool and its cached MiniLM vectors (benchmarks/search_latency.py
builds the cache; missing vectors are computed here). Timed:

- ingestion: the store's write path (`store.apply`, InsertOp batches of 1000, vectors precomputed:
  SQL rows, full-text, history and the vector index), memories per second;
- ingestion through `add` (offline flow, live embedding, one input at a time), `--adds` inputs;
- search latency: hybrid, embedding and BM25 for the target user, `--queries` distinct queries per
  method, interleaved layout by layout and query by query so all three see the same machine load
  (which layout goes first rotates query by query); the PostgreSQL layouts are VACUUM ANALYZEd
  after the load, as autovacuum would do, the large pgvector user gets their own graph as `doctor
  --repair` builds it (the vector query timed on the shared graph before and on their own after;
  `--no-tenant-index`: not built), and the plan of pgvector's vector query is recorded;
  every engine search embeds its own query with MiniLM (no query vector is precomputed).

`--rest-duration S` then runs benchmarks/load_rest.py (32 clients) on each layout for S seconds.

    .venv/bin/python benchmarks/layouts.py --sizes 10000 --out benchmarks/results/layouts.json
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import _common as C
import search_latency as SL

LAYOUTS = ("sqlite", "postgres", "pgvector")
METHODS = ("hybrid", "embedding", "bm25")
BATCH = 1000


def schema_url(base: str, schema: str, public: bool) -> str:
    from sqlalchemy import create_engine, text

    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    admin.dispose()
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}" + ("%2Cpublic" if public else "")


def drop_schema(base: str, schema: str) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
    admin.dispose()


def open_layout(layout: str, args: argparse.Namespace, workdir: Path, embedder: Any, tag: str):
    """(engine, cleanup) for a fresh store of this layout."""
    from mirix_py.engine import Mirix

    data = workdir / f"{layout}-{tag}"
    if layout == "sqlite":
        return Mirix(data, embedder=embedder, vector_store="chroma", resume=False), lambda: None
    schema = f"bench_{tag}_{uuid.uuid4().hex[:6]}"
    if layout == "postgres":
        url = schema_url(args.pg_url, schema, public=False)
        mx = Mirix(data, embedder=embedder, database_url=url, chroma_url=f"{args.chroma_url.rstrip('/')}/{schema}",
                   vector_store="chroma", resume=False)
        return mx, lambda: drop_schema(args.pg_url, schema)
    url = schema_url(args.pgvector_url, schema, public=True)
    mx = Mirix(data, embedder=embedder, database_url=url, vector_store="pgvector", resume=False)
    return mx, lambda: drop_schema(args.pgvector_url, schema)


def insert_all(mx: Any, users: dict[str, list[int]], pool: list) -> float:
    """Round-robin InsertOp batches through `store.apply`; returns seconds."""
    from mirix_py.tools.ops import InsertOp

    t0 = time.perf_counter()
    cursors = {u: 0 for u in users}
    while any(cursors[u] < len(idx) for u, idx in users.items()):
        for u, idx in users.items():
            chunk = idx[cursors[u]:cursors[u] + BATCH]
            if not chunk:
                continue
            mx.store.apply([InsertOp(memory=SL.to_memory(pool[i], f"bench-{u}")) for i in chunk],
                           user_id=f"bench-{u}", actor="benchmark")
            cursors[u] += len(chunk)
    return time.perf_counter() - t0


def vector_query_ms(mx: Any, vectors: list[list[float]], k: int = 120) -> dict[str, float]:
    """p50 / p95 of the target user's vector query alone (the store's, with its settings), ms."""
    times = []
    for v in vectors:
        t0 = time.perf_counter()
        mx.store.vectors.query("bench-target", v, k)
        times.append(time.perf_counter() - t0)
    return C.latency_summary(times)


def analyze(mx: Any, embedder: Any, tenant_index: bool = True) -> dict[str, Any]:
    """VACUUM ANALYZE after the bulk load, as autovacuum does within a minute on a server after
    inserts (PostgreSQL 13 and later): without statistics the planner guesses every user small and
    scans the target user's vectors exactly, and without the visibility map the BM25 postings'
    index-only scans read the heap. On pgvector, then what `mirix doctor --repair` does for a large
    user: build their own graph, with the vector query timed on the shared graph before and on the
    user's own after (the search leg's 120 candidates, 40 queries). Returns the seconds each took
    and the plan of the target user's vector query."""
    from sqlalchemy import text

    t0 = time.perf_counter()
    with mx.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))
    out: dict[str, Any] = {"analyze_seconds": round(time.perf_counter() - t0, 1)}
    if mx.describe()["vectors"] == "pgvector" and tenant_index:
        probes = embedder.embed(SL.distinct_queries(40, 4242, set()))
        shared = vector_query_ms(mx, probes)
        t0 = time.perf_counter()
        built = [mx.store.vectors.index_tenant(u) for u in mx.store.vectors.tenants_without_index()]
        seconds = time.perf_counter() - t0
        with mx.store.engine.begin() as conn:
            conn.execute(text("ANALYZE"))
        out["tenant_indexes"] = {"built": len(built), "seconds": round(seconds, 1),
                                 "vector_query_shared_graph": shared, "vector_query_own_graph": vector_query_ms(mx, probes)}
    if mx.describe()["vectors"] == "pgvector":
        from mirix_py.store.pgvectors import vector_literal

        q = vector_literal(embedder.embed_query("what did I do at the lake") if hasattr(embedder, "embed_query")
                           else embedder.embed(["what did I do at the lake"])[0])
        with mx.store.engine.connect() as conn:
            mx.store.vectors.apply_settings(conn)
            plan = conn.execute(text("EXPLAIN " + mx.store.vectors.query_sql("bench-target")),
                                {"q": q, "u": "bench-target", "k": 120}).scalars().all()
        out["vector_plan"] = next((line.strip() for line in plan if "Scan" in line), plan[0]).split("  (")[0]
    return out


def vector_recall(mx: Any, embedder: Any, queries: list[str], k: int = 10) -> dict[str, Any]:
    """recall@k of the pgvector leg as searches run it (planner's plan, the store's settings)
    against an exact scan of the same user's vectors (index scans off: every vector compared)."""
    from sqlalchemy import text

    from mirix_py.store.pgvectors import TABLE, vector_literal

    recalls = []
    for q in queries:
        vec = embedder.embed([q])[0]
        got = {i for i, _ in mx.store.vectors.query("bench-target", vec, k)}
        with mx.store.engine.begin() as conn:
            conn.execute(text("SET LOCAL enable_indexscan = off"))
            exact = set(conn.execute(text(f"SELECT memory_id FROM {TABLE} WHERE user_id = :u "
                                          "ORDER BY embedding <=> CAST(:q AS vector), memory_id LIMIT :k"),
                                     {"u": "bench-target", "q": vector_literal(vec), "k": k}).scalars())
        recalls.append(len(got & exact) / k)
    return {"queries": len(queries), "recall_at_10": round(sum(recalls) / len(recalls), 4),
            "min_recall": min(recalls)}


def run_size(n: int, args: argparse.Namespace, embedder: Any, pool: list, vectors: Any, texts: list[str],
             workdir: Path) -> dict[str, Any]:
    rng = random.Random(args.seed + n)
    users = {"target": list(range(n))}
    for u in range(args.other_users):
        users[f"other{u}"] = rng.sample(range(n), max(1, int(n * args.other_share)))
    total = sum(len(v) for v in users.values())
    out: dict[str, Any] = {"size": n, "total_memories": total, "layouts": {}}
    engines, cleanups = {}, []
    try:
        for layout in args.layouts:
            lookup = SL.LookupEmbedder(embedder, {texts[i]: i for i in range(n)}, vectors)
            mx, cleanup = open_layout(layout, args, workdir, lookup, f"n{n}")
            cleanups.append(cleanup)
            engines[layout] = mx
            print(f"[{n}] {layout}: inserting {total} memories ...", flush=True)
            seconds = insert_all(mx, users, pool)
            if lookup.misses:
                raise RuntimeError(f"{layout}: {lookup.misses} texts missed the precomputed vectors")
            out["layouts"][layout] = {"vectors": mx.describe()["vectors"], "insert_seconds": round(seconds, 1),
                                      "insert_per_second": round(total / seconds)}
            print(f"  {seconds:.1f}s ({total / seconds:.0f}/s)", flush=True)
            if layout != "sqlite":
                out["layouts"][layout].update(analyze(mx, embedder, tenant_index=not args.no_tenant_index))

        used: set[str] = set()
        queries = {m: SL.distinct_queries(args.queries + args.warmup, args.seed * 100 + k, used)
                   for k, m in enumerate(METHODS)}
        for i in range(args.warmup):
            for m in METHODS:
                for layout, mx in engines.items():
                    mx.search(queries[m][args.queries + i], user_id="bench-target", limit=10, method=m)
        times: dict[str, dict[str, list[float]]] = {lay: {m: [] for m in METHODS} for lay in engines}
        loads = C.loadavg()
        print(f"[{n}] timing {args.queries} queries x {len(METHODS)} methods x {len(engines)} layouts ...", flush=True)
        order = list(engines.items())
        for i in range(args.queries):
            for m in METHODS:
                # the layout that goes first rotates: in a fixed order the last one measured slower
                # (pgvector's BM25 p50 17.5 ms last, 11.6 ms first, the same SQL on the same server)
                for layout, mx in order[i % len(order):] + order[:i % len(order)]:
                    # the same query text on every layout: the searcher's query cache is per engine
                    t0 = time.perf_counter()
                    mx.search(queries[m][i], user_id="bench-target", limit=10, method=m)
                    times[layout][m].append(time.perf_counter() - t0)
        for layout in engines:
            out["layouts"][layout]["latency"] = {m: C.latency_summary(times[layout][m]) for m in METHODS}
        out["loadavg_before_queries"], out["loadavg_after_queries"] = loads, C.loadavg()
        if "pgvector" in engines and args.recall_queries:
            timed = queries["embedding"][:min(args.queries, args.recall_queries)]  # the first timed ones
            recall = vector_recall(engines["pgvector"], embedder, timed)
            out["layouts"]["pgvector"]["vector_recall"] = recall
            print(f"[{n}] pgvector recall@10 against an exact scan: {recall}", flush=True)
    finally:
        for mx in engines.values():
            mx.close()
        for cleanup in cleanups:
            cleanup()
    return out


def add_throughput(args: argparse.Namespace, workdir: Path, embedder: Any) -> dict[str, Any]:
    """`add` one input at a time (offline flow, live MiniLM embedding) on each layout."""
    rng = random.Random(args.seed)
    notes = [f"{rng.choice(SL.NAMES)} {rng.choice(SL.ACTIVITIES)[1]} at {rng.choice(SL.PLACES)} on day {i}."
             for i in range(args.adds)]
    out = {}
    for layout in args.layouts:
        mx, cleanup = open_layout(layout, args, workdir, embedder, "adds")
        try:
            mx.add("warm up", user_id="adder")
            t0 = time.perf_counter()
            for text in notes:
                mx.add(text, user_id="adder")
            seconds = time.perf_counter() - t0
            out[layout] = {"adds": len(notes), "seconds": round(seconds, 1), "adds_per_second": round(len(notes) / seconds, 1),
                           "doctor_clean": mx.doctor().clean}
            print(f"add x{len(notes)} on {layout}: {seconds:.1f}s ({len(notes) / seconds:.1f}/s)", flush=True)
        finally:
            mx.close()
            cleanup()
    return out


def rest_load(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    out = {}
    for layout in args.layouts:
        target = workdir / f"rest-{layout}.json"
        cmd = [sys.executable, str(Path(__file__).with_name("load_rest.py")), "--clients", str(args.rest_clients),
               "--duration", str(args.rest_duration), "--json", str(target)]
        if layout == "sqlite":
            cmd += ["--backend", "sqlite"]
        elif layout == "postgres":
            cmd += ["--backend", "postgres", "--database-url", args.pg_url, "--chroma-url", args.chroma_url]
        else:
            cmd += ["--backend", "pgvector", "--database-url", args.pgvector_url]
        print(f"REST load on {layout}: {args.rest_clients} clients for {args.rest_duration}s ...", flush=True)
        subprocess.run(cmd, check=True, cwd=C.ROOT)
        r = json.loads(target.read_text())
        out[layout] = {k: r[k] for k in ("vectors", "clients", "duration_s", "requests", "errors", "throughput_rps",
                                         "adds_per_s", "searches_per_s", "latency", "verify")}
    return out


def main() -> None:
    import os

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    ap.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--other-users", type=int, default=9)
    ap.add_argument("--other-share", type=float, default=0.1)
    ap.add_argument("--recall-queries", type=int, default=40,
                    help="queries for pgvector's recall@10 against an exact scan (0: skip)")
    ap.add_argument("--adds", type=int, default=100, help="inputs for the `add` throughput (0: skip)")
    ap.add_argument("--rest-duration", type=float, default=0, help="seconds of REST load per layout (0: skip)")
    ap.add_argument("--rest-clients", type=int, default=32)
    ap.add_argument("--no-tenant-index", action="store_true",
                    help="pgvector: leave the large user on the shared graph (no graph of their own)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache-dir", default=".bench-cache")
    ap.add_argument("--pg-url", default=os.environ.get("MIRIX_TEST_PG_URL"))
    ap.add_argument("--pgvector-url", default=os.environ.get("MIRIX_TEST_PGVECTOR_URL"))
    ap.add_argument("--chroma-url", default=os.environ.get("MIRIX_TEST_CHROMA_URL"))
    ap.add_argument("--out")
    args = ap.parse_args()
    needs = {"postgres": ("pg_url", "chroma_url"), "pgvector": ("pgvector_url",)}
    for layout in args.layouts:
        for name in needs.get(layout, ()):
            if not getattr(args, name):
                raise SystemExit(f"--{name.replace('_', '-')} is needed for {layout} (source .services/env)")
    C.quiet_logs()
    from mirix_py.store.embeddings import load_embedder

    started = time.perf_counter()
    embedder = load_embedder("minilm")
    pool = SL.pool_records(max(args.sizes), args.seed)
    texts = [SL.to_memory(r, "bench-x").embedding_text() for r in pool]
    vectors, vec_info = SL.pool_vectors(texts, embedder, C.cache_root(args.cache_dir), args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="mirix-layouts-"))
    result: dict[str, Any] = {"benchmark": "layouts", "environment": C.environment(), "args": vars(args),
                              "pool": vec_info}
    try:
        result["sizes"] = [run_size(n, args, embedder, pool, vectors, texts, workdir) for n in sorted(args.sizes)]
        if args.adds:
            result["add"] = add_throughput(args, workdir, embedder)
        if args.rest_duration:
            result["rest"] = rest_load(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result["total_seconds"] = round(time.perf_counter() - started, 1)
    for size in result["sizes"]:
        rows = [[lay, r["vectors"], r["insert_per_second"], *[r["latency"][m][p] for m in METHODS for p in ("p50_ms", "p95_ms")]]
                for lay, r in size["layouts"].items()]
        print(C.table(["layout", "vectors", "insert/s", *[f"{m} {p}" for m in METHODS for p in ("p50", "p95")]], rows,
                      title=f"N = {size['size']} for the target user ({size['total_memories']} memories in all)"))
    C.write_json(args.out, result)


if __name__ == "__main__":
    main()
