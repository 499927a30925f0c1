"""Recall@10 of the pgvector leg scoped by user, against an exact scan, at N vectors.

Why: one HNSW graph holds every user's vectors; a `WHERE user_id = ...` filter applied after the
graph walk leaves a small tenant with fewer than k hits (or none). pgvector 0.8's iterative scans
walk on until enough rows pass; a B-tree on user_id lets the planner scan a small tenant exactly.
This measures which settings reach recall@10 >= 0.98 and what each costs, per tenant size.

Data (no embedding of 100k texts): vectors drawn from a mixture that looks like MiniLM's on short
texts: 384-d, unit length, clustered (topics -> subtopics -> items). The script prints the mean
cosine of an item to its nearest neighbour and to a random item, the two numbers that make a
vector set easy or hard for HNSW, beside the same numbers for MiniLM on synthetic memory texts
when `--calibrate` is given. Tenants: one with 20% of N, ten with 5% each, the rest in tenants
of 0.3% (at 100k: 20,000 / 5,000 / 300 vectors). Queries: held-out draws from the tenant's own
topics, `--queries` per tenant class; ground truth by exact cosine over the tenant's vectors.

The rows go through the engine's own schema (migrations) and `PgVectorIndex` (same SQL as search),
loaded with COPY; the HNSW index is built after the load by `PgVectorIndex.ensure`.

    .venv/bin/python benchmarks/tenant_recall.py --url $MIRIX_TEST_PGVECTOR_URL --size 100000
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

import _common as C

DIM = 384
K = 10


def make_vectors(n: int, rng: np.random.Generator, topics: int = 64, subtopics: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """(n x DIM unit vectors, their topic ids): item = topic + subtopic + item noise, normalised."""
    topic_centres = rng.normal(size=(topics, DIM))
    sub_centres = topic_centres[:, None, :] + 0.9 * rng.normal(size=(topics, subtopics, DIM))
    topic = rng.integers(0, topics, size=n)
    sub = rng.integers(0, subtopics, size=n)
    x = sub_centres[topic, sub] + 1.1 * rng.normal(size=(n, DIM))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), topic


def neighbour_stats(x: np.ndarray, rng: np.random.Generator, sample: int = 500) -> dict[str, float]:
    """Mean cosine of a sampled item to its nearest other item, and to a random item."""
    idx = rng.choice(len(x), size=min(sample, len(x)), replace=False)
    sims = x[idx] @ x.T
    sims[np.arange(len(idx)), idx] = -1.0
    rand = x[idx] @ x[rng.choice(len(x), size=len(idx))].T
    return {"nearest_cos": round(float(sims.max(axis=1).mean()), 3), "random_cos": round(float(np.diag(rand).mean()), 3)}


def minilm_stats(n: int, rng: np.random.Generator) -> dict[str, float]:
    """The same numbers for MiniLM on the search-latency benchmark's synthetic memory texts."""
    import search_latency as SL

    from mirix_py.store.embeddings import SentenceTransformerEmbedder

    texts = [SL.to_memory(rec, "calibration").embedding_text() for rec in SL.pool_records(n, seed=7)]
    x = np.asarray(SentenceTransformerEmbedder().embed(texts), dtype=np.float32)
    return neighbour_stats(x, rng)


def tenants(n: int) -> list[tuple[str, int]]:
    """(user id, vector count): one 20% tenant, ten 5% tenants, the rest in 0.3% tenants."""
    big, mid, small = int(n * 0.2), int(n * 0.05), max(int(n * 0.003), 20)
    out = [("big", big)] + [(f"mid{i}", mid) for i in range(10)]
    rest = n - big - 10 * mid
    i = 0
    while rest > 0:
        out.append((f"small{i}", min(small, rest)))
        rest -= small
        i += 1
    return out


def load(engine, users: list[tuple[str, int]], x: np.ndarray) -> list[str]:
    """COPY memory rows and their vectors; returns the memory ids in the order of `x`."""
    ids, owners = [], []
    for user, count in users:
        for _ in range(count):
            ids.append("sem_" + uuid.uuid4().hex)
            owners.append(user)
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        with cur.copy("COPY memory (id, user_id, memory_type, text, created_at, updated_at, source_ids, tags, fields) "
                      "FROM STDIN") as copy:
            for mid, user in zip(ids, owners):
                copy.write_row((mid, user, "semantic", "x", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "[]", "[]", "{}"))
        with cur.copy("COPY memory_vector (memory_id, user_id, memory_type, embedding) FROM STDIN") as copy:
            for start in range(0, len(ids), 5000):
                buf = io.StringIO()
                for mid, user, vec in zip(ids[start:start + 5000], owners[start:start + 5000], x[start:start + 5000]):
                    buf.write(f"{mid}\t{user}\tsemantic\t[{','.join(f'{v:.6g}' for v in vec)}]\n")
                copy.write(buf.getvalue())
        raw.commit()
    finally:
        raw.close()
    return ids


def exact_top(xq: np.ndarray, xs: np.ndarray, ids: list[str]) -> list[str]:
    order = np.argsort(-(xs @ xq), kind="stable")[:K]
    return [ids[i] for i in order]


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sqlalchemy import create_engine, text

    from mirix_py.store.migrations import upgrade
    from mirix_py.store.db import make_engine
    from mirix_py.store.pgvectors import PgVectorIndex

    rng = np.random.default_rng(args.seed)
    users = tenants(args.size)
    x, topic = make_vectors(args.size, rng)
    result: dict[str, Any] = {"size": args.size, "dim": DIM, "k": K, "tenants": {
        "big": users[0][1], "mid": users[1][1], "small": users[-2][1] if len(users) > 12 else None,
        "count": len(users)}, "vectors": neighbour_stats(x, rng)}
    if args.calibrate:
        result["minilm_reference"] = minilm_stats(args.calibrate, rng)
    print(json.dumps(result), flush=True)

    schema = "bench_" + uuid.uuid4().hex[:8]
    admin = create_engine(args.url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in args.url else "?"
    engine = make_engine(f"{args.url}{sep}options=-csearch_path%3D{schema}%2Cpublic")
    try:
        upgrade(engine)
        index = PgVectorIndex(engine)
        t0 = time.perf_counter()
        ids = load(engine, users, x)
        result["load_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        _build_index(engine, index)
        result["hnsw_build_s"] = round(time.perf_counter() - t0, 1)
        print(f"loaded {args.size} in {result['load_s']}s, HNSW built in {result['hnsw_build_s']}s", flush=True)

        owner_rows: dict[str, list[int]] = {}
        offset = 0
        for user, count in users:
            owner_rows[user] = list(range(offset, offset + count))
            offset += count
        classes = {"big": ["big"], "mid": [f"mid{i}" for i in range(10)],
                   "small": [u for u, _ in users if u.startswith("small")]}
        queries: list[tuple[str, str, np.ndarray, list[str]]] = []
        for cls, names in classes.items():
            for i in range(args.queries):
                user = names[i % len(names)]
                rows = owner_rows[user]
                q, _ = make_vectors(1, np.random.default_rng(args.seed * 1000 + len(queries)))
                # a query near this tenant's own data: an item of the tenant, moved a little
                q = x[rows[int(rng.integers(len(rows)))]] + 0.8 * q[0]
                q /= np.linalg.norm(q)
                queries.append((cls, user, q, exact_top(q, x[rows], [ids[r] for r in rows])))

        strategies = {
            "post-filter (iterative off, ef 40)": {"hnsw.iterative_scan": "off", "hnsw.ef_search": "40"},
            "iterative relaxed, ef 40": {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "40"},
            "iterative relaxed, ef 100": {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "100"},
            "iterative strict, ef 100": {"hnsw.iterative_scan": "strict_order", "hnsw.ef_search": "100"},
            "exact (index scans off)": {"enable_indexscan": "off"},
        }
        # the planner picks an exact scan through the user B-tree where it thinks that cheaper; these
        # force the graph (no bitmap, seq scan or sort) to measure what it returns where it is used
        forced = {"enable_bitmapscan": "off", "enable_seqscan": "off", "enable_sort": "off"}
        strategies.update({
            "graph forced: post-filter, ef 40": {"hnsw.iterative_scan": "off", "hnsw.ef_search": "40", **forced},
            "graph forced: iterative relaxed, ef 40": {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "40",
                                                       **forced},
            "graph forced: iterative relaxed, ef 100": {"hnsw.iterative_scan": "relaxed_order",
                                                        "hnsw.ef_search": "100", **forced},
            "graph forced: iterative relaxed, ef 200": {"hnsw.iterative_scan": "relaxed_order",
                                                        "hnsw.ef_search": "200", **forced},
        })
        result["strategies"] = {}
        for name, settings in strategies.items():
            index.settings = {**settings, "hnsw.max_scan_tuples": "20000"} if "hnsw.ef_search" in settings else settings
            per: dict[str, dict[str, list[float]]] = {}
            for cls, user, q, truth in queries:
                t0 = time.perf_counter()
                got = [i for i, _ in index.query(user, q.tolist(), K)]
                ms = (time.perf_counter() - t0) * 1000
                rec = len(set(got) & set(truth)) / K
                d = per.setdefault(cls, {"recall": [], "ms": []})
                d["recall"].append(rec)
                d["ms"].append(ms)
            row = {cls: {"recall_at_10": round(statistics.fmean(v["recall"]), 4),
                         "min_recall": round(min(v["recall"]), 2),
                         "p50_ms": round(statistics.median(v["ms"]), 2),
                         "p95_ms": round(float(np.percentile(v["ms"], 95)), 2)} for cls, v in per.items()}
            row["plans"] = _plans(engine, index, queries)
            result["strategies"][name] = row
            print(name, json.dumps(row), flush=True)
    finally:
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()
    return result


def _build_index(engine, index) -> None:
    """`PgVectorIndex.ensure(DIM)` with maintenance_work_mem raised for the whole build."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _mem(dbapi_conn, _record):
        with dbapi_conn.cursor() as cur:
            cur.execute("SET maintenance_work_mem = '1GB'")
        dbapi_conn.commit()

    engine.pool.dispose()
    index.ensure(DIM)
    event.remove(engine, "connect", _mem)
    engine.pool.dispose()


def _plans(engine, index, queries) -> dict[str, str]:
    """Which scan the planner picked for one query of each tenant class."""
    from sqlalchemy import text

    seen: dict[str, str] = {}
    for cls, user, q, _ in queries:
        if cls in seen:
            continue
        with engine.connect() as conn:
            for n, v in index.settings.items():
                conn.execute(text("SELECT set_config(:n, :v, true)"), {"n": n, "v": v})
            plan = conn.execute(text(
                "EXPLAIN SELECT memory_id, embedding <=> CAST(:q AS vector) AS d FROM memory_vector "
                "WHERE user_id = :u ORDER BY d LIMIT 10"), {"q": "[" + ",".join(map(str, q.tolist())) + "]", "u": user}).scalars().all()
        seen[cls] = next((line.strip() for line in plan if "Scan" in line), plan[0]).split("  (")[0]
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="PostgreSQL URL of a database with the vector extension")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100, help="queries per tenant class")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--calibrate", type=int, default=0, help="also embed this many texts with MiniLM for reference")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    C.quiet_logs()
    result = {"benchmark": "tenant_recall", "environment": C.environment(), **run(args)}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["strategies"], indent=1))


if __name__ == "__main__":
    main()
