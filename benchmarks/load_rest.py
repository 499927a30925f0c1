"""Load test of the REST API: N concurrent clients on loopback for T seconds, mixed add and search.

    python benchmarks/load_rest.py --backend sqlite
    python benchmarks/load_rest.py --backend postgres --database-url postgresql+psycopg://postgres@127.0.0.1:55432/mirix_test
    python benchmarks/load_rest.py --backend postgres --chroma-url http://127.0.0.1:58000     # + a Chroma server
    python benchmarks/load_rest.py --backend pgvector       # MIRIX_TEST_PGVECTOR_URL: vectors in PostgreSQL
    python benchmarks/load_rest.py --backend pgvector --read-url URL   # searches on a streaming replica of it

The server is a separate `mirix serve` process (uvicorn, one worker, API keys on) over a fresh data
directory (and, for PostgreSQL, a fresh schema), so the load generator does not share its GIL.
Each client loops: with probability --add-ratio it adds a short note (accepted with 202, processed in
the background), otherwise it runs a hybrid search. Afterwards every acknowledged add is checked:
its input must end `processed`, and a memory must carry its input id in `source_ids` and be found
by a search for the note's unique token. Prints errors, throughput and p50/p95 latency per operation.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, environment, latency_summary, loadavg, table, write_json  # noqa: E402

import httpx  # noqa: E402

PEOPLE = ["Tom", "Anna", "Ravi", "Mei", "Lucas", "Sofia", "Kwame", "Ines"]
ACTIVITIES = ["went climbing", "cooked a curry", "read a novel", "fixed the bike", "planted tomatoes",
              "watched a film", "ran 10 km", "visited the museum", "painted the fence", "learned a song"]
PLACES = ["in Lisbon", "at the lake", "near the office", "in the park", "at home", "downtown"]
QUERIES = ["who went climbing", "what did Anna cook", "bike repair", "tomatoes garden", "museum visit",
           "running distance", "films watched", "songs learned", "what happened in Lisbon", "fence painting"]


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"add": [], "search": []})
    errors: dict[str, int] = field(default_factory=dict)
    acked: list[tuple[str, str, str]] = field(default_factory=list)  # (user, input id, token)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_schema(url: str, public: bool = False) -> tuple[str, str]:
    from sqlalchemy import create_engine, text

    schema = "load_" + uuid.uuid4().hex[:8]
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    sep = "&" if "?" in url else "?"
    return schema, f"{url}{sep}options=-csearch_path%3D{schema}" + ("%2Cpublic" if public else "")


def drop_schema(url: str, schema: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


def start_server(data_dir: Path, database_url: str | None, port: int, threads: int,
                 layout_env: dict[str, str] | None = None) -> subprocess.Popen:
    env = {**os.environ, "MIRIX_DATA_DIR": str(data_dir), **(layout_env or {})}
    env.pop("MIRIX_LLM_PROVIDER", None)
    env.pop("MIRIX_LLM_MODEL", None)
    if database_url:
        env["MIRIX_DATABASE_URL"] = database_url
    log = open(data_dir / "server.log", "ab")
    return subprocess.Popen([sys.executable, "-m", "mirix_py.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--threads", str(threads), "--log-level", "warning"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)


def create_key(data_dir: Path, database_url: str | None, users: list[str]) -> str:
    env = {**os.environ, "MIRIX_DATA_DIR": str(data_dir)}
    if database_url:
        env["MIRIX_DATABASE_URL"] = database_url
    args = [sys.executable, "-m", "mirix_py.cli", "keys", "create", "--name", "load"]
    for u in users:
        args += ["--user", u]
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.strip().splitlines()[-1]


async def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}")
            try:
                if (await client.get(url + "/health", timeout=2)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.3)
    raise RuntimeError("server did not become healthy")


def note(rng: random.Random, token: str) -> str:
    return (f"{rng.choice(PEOPLE)} {rng.choice(ACTIVITIES)} {rng.choice(PLACES)} today. "
            f"Reference code {token}.")


async def client_loop(i: int, http: httpx.AsyncClient, users: list[str], stop_at: float, add_ratio: float,
                      stats: Stats, rng: random.Random) -> None:
    user = users[i % len(users)]
    while time.monotonic() < stop_at:
        if rng.random() < add_ratio:
            token = f"zq{uuid.uuid4().hex[:10]}"
            t0 = time.perf_counter()
            try:
                r = await http.post(f"/v1/users/{user}/memories", json={"content": note(rng, token)})
                dt = time.perf_counter() - t0
                if r.status_code == 202:
                    stats.latencies["add"].append(dt)
                    stats.acked.append((user, r.json()["input_ids"][0], token))
                else:
                    stats.error(f"add {r.status_code}")
            except httpx.HTTPError as exc:
                stats.error(f"add {type(exc).__name__}")
        else:
            t0 = time.perf_counter()
            try:
                r = await http.post(f"/v1/users/{user}/search", json={"query": rng.choice(QUERIES), "limit": 10})
                dt = time.perf_counter() - t0
                if r.status_code == 200:
                    stats.latencies["search"].append(dt)
                else:
                    stats.error(f"search {r.status_code}")
            except httpx.HTTPError as exc:
                stats.error(f"search {type(exc).__name__}")


async def verify(http: httpx.AsyncClient, stats: Stats, timeout: float, replica_wait: float = 0.0) -> dict[str, object]:
    """Every acknowledged add: processed, present as a memory's source, found by searching its token
    (within `replica_wait` seconds, when searches read a replica)."""
    t0 = time.monotonic()
    pending = {input_id: (user, token) for user, input_id, token in stats.acked}
    failed: dict[str, str] = {}
    sem = asyncio.Semaphore(16)

    async def status(input_id: str, user: str) -> tuple[str, str | None]:
        async with sem:
            body = (await http.get(f"/v1/users/{user}/inputs/{input_id}")).json()
            return body["status"], body.get("error")

    while pending and time.monotonic() - t0 < timeout:
        items = list(pending.items())
        results = await asyncio.gather(*(status(i, u) for i, (u, _) in items))
        for (input_id, _), (state, error) in zip(items, results):
            if state == "processed":
                pending.pop(input_id)
            elif state == "failed":
                failed[input_id] = error or "failed"
                pending.pop(input_id)
        if pending:
            await asyncio.sleep(1.0)
    drained = time.monotonic() - t0

    # provenance: list each user's memories and collect the input ids they carry
    sources: dict[str, set[str]] = {}
    for user in sorted({u for u, _, _ in stats.acked}):
        seen: set[str] = set()
        offset = 0
        while True:
            page = (await http.get(f"/v1/users/{user}/memories",
                                   params={"limit": 1000, "offset": offset})).json()
            for memory in page:
                seen.update(memory["source_ids"])
            if len(page) < 1000:
                break
            offset += 1000
        sources[user] = seen
    missing = [i for u, i, _ in stats.acked if i not in sources[u]]

    # search: each acknowledged note is found by its unique token (string search over the text)
    not_found = 0

    async def find(user: str, input_id: str, token: str) -> bool:
        async with sem:
            hits = (await http.post(f"/v1/users/{user}/search",
                                    json={"query": token, "method": "string", "limit": 5})).json()
            return any(input_id in h["memory"]["source_ids"] for h in hits)

    unfound = list(stats.acked)
    deadline = time.monotonic() + replica_wait
    while True:  # searches on a replica see an add once it has replayed it: wait for that, not longer
        found = await asyncio.gather(*(find(u, i, t) for u, i, t in unfound))
        unfound = [a for a, ok in zip(unfound, found) if not ok]
        if not unfound or time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.5)
    not_found = len(unfound)
    return {"acknowledged": len(stats.acked), "processed": len(stats.acked) - len(pending) - len(failed),
            "failed": len(failed), "still_pending": len(pending), "missing_from_memories": len(missing),
            "not_found_by_search": not_found, "drain_seconds": round(drained, 2),
            "failed_examples": list(failed.values())[:3]}


async def run(args: argparse.Namespace) -> dict[str, object]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"mirix-load-{args.backend}-"))
    schema = None
    database_url = None
    layout_env = {"MIRIX_VECTOR_STORE": "pgvector" if args.backend == "pgvector" else "chroma"}
    base = None
    if args.backend in ("postgres", "pgvector"):
        default = "MIRIX_TEST_PGVECTOR_URL" if args.backend == "pgvector" else "MIRIX_TEST_PG_URL"
        base = args.database_url or os.environ.get(default)
        if not base:
            raise SystemExit(f"--database-url or {default} is needed for --backend {args.backend} "
                             "(scripts/services.sh start writes one to .services/env)")
        schema, database_url = pg_schema(base, public=args.backend == "pgvector")
    if args.read_url:  # the same schema on the replica, which replays the primary's CREATE SCHEMA
        if not database_url:
            raise SystemExit("--read-url needs --backend postgres or pgvector")
        layout_env["MIRIX_DATABASE_READ_URL"] = args.read_url + database_url[len(base or ""):]
        layout_env["MIRIX_READ_YOUR_WRITES"] = "0" if args.no_read_your_writes else "1"
    if args.chroma_url:  # a Chroma database of this run's own on the server
        layout_env["MIRIX_CHROMA_URL"] = args.chroma_url.rstrip("/") + "/" + (schema or "load_" + uuid.uuid4().hex[:8])
    users = [f"load-user-{i}" for i in range(args.users)]
    key = create_key(data_dir, database_url, users)
    port = free_port()
    proc = start_server(data_dir, database_url, port, args.threads, layout_env)
    url = f"http://127.0.0.1:{port}"
    try:
        await wait_healthy(url, proc)
        limits = httpx.Limits(max_connections=args.clients + 8, max_keepalive_connections=args.clients + 8)
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120,
                                     limits=limits) as http:
            # warm up: model loaded, collections created, connections open
            for user in users:
                await http.post(f"/v1/users/{user}/memories", json={"content": "Warm-up note.", "wait": True})
                await http.post(f"/v1/users/{user}/search", json={"query": "warm up"})
            stats = Stats()
            load_before = loadavg()
            started = time.monotonic()
            stop_at = started + args.duration
            rngs = [random.Random(args.seed * 1000 + i) for i in range(args.clients)]
            await asyncio.gather(*(client_loop(i, http, users, stop_at, args.add_ratio, stats, rngs[i])
                                   for i in range(args.clients)))
            elapsed = time.monotonic() - started
            # how many of the load's searches the server sent to the primary: a user's own writes not yet replayed
            served = (await http.get(f"/v1/users/{users[0]}/stats")).json().get("searches_kept_on_primary")
            checks = await verify(http, stats, args.drain_timeout, replica_wait=30.0 if args.read_url else 0.0)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        if schema and base:
            drop_schema(base, schema)

    requests = sum(len(v) for v in stats.latencies.values()) + sum(stats.errors.values())
    ops = {op: latency_summary(v) for op, v in stats.latencies.items()}
    return {
        "backend": args.backend, "searches_read": "replica" if args.read_url else "primary",
        "read_your_writes": bool(args.read_url) and not args.no_read_your_writes,
        "searches_kept_on_primary": served, "vectors": "pgvector" if args.backend == "pgvector" else
        ("chroma-server" if args.chroma_url else "chroma-embedded"), "clients": args.clients, "duration_s": round(elapsed, 1), "users": args.users,
        "add_ratio": args.add_ratio, "requests": requests, "errors": sum(stats.errors.values()),
        "error_kinds": stats.errors, "throughput_rps": round(requests / elapsed, 1),
        "adds_per_s": round(len(stats.latencies["add"]) / elapsed, 1),
        "searches_per_s": round(len(stats.latencies["search"]) / elapsed, 1),
        "latency": ops, "verify": checks, "loadavg_before": load_before, "loadavg_after": loadavg(),
        "environment": environment(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "pgvector"], default="sqlite")
    parser.add_argument("--database-url", help="PostgreSQL URL (default: MIRIX_TEST_PG_URL, for pgvector "
                                               "MIRIX_TEST_PGVECTOR_URL)")
    parser.add_argument("--chroma-url", help="a Chroma server for the vectors (default: embedded Chroma)")
    parser.add_argument("--read-url", help="a streaming replica of the database (its base URL, as --database-url): "
                                           "searches read there (MIRIX_DATABASE_READ_URL)")
    parser.add_argument("--no-read-your-writes", action="store_true",
                        help="with --read-url: every search reads the replica, a user's own unreplayed writes "
                             "included (MIRIX_READ_YOUR_WRITES=0)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--users", type=int, default=8, help="users the clients spread over")
    parser.add_argument("--add-ratio", type=float, default=0.3, help="share of requests that are adds")
    parser.add_argument("--threads", type=int, default=48, help="server thread pool for engine calls")
    parser.add_argument("--drain-timeout", type=float, default=600.0, help="seconds to wait for queued adds")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    lat = result["latency"]
    rows = [[op, s["n"], round(s["n"] / result["duration_s"], 1), s["p50_ms"], s["p95_ms"], s["p99_ms"], s["max_ms"]]
            for op, s in lat.items()]
    print(table(["operation", "ok", "per s", "p50 ms", "p95 ms", "p99 ms", "max ms"], rows,
                title=f"{result['backend']} + {result['vectors']}, searches on the {result['searches_read']}: {result['clients']} clients for {result['duration_s']} s on loopback"))
    v = result["verify"]
    print(f"requests {result['requests']}, errors {result['errors']} {result['error_kinds'] or ''}, "
          f"throughput {result['throughput_rps']} req/s")
    print(f"acknowledged adds {v['acknowledged']}: processed {v['processed']}, failed {v['failed']}, "
          f"still pending {v['still_pending']}, missing from memories {v['missing_from_memories']}, "
          f"not found by search {v['not_found_by_search']} (queue drained {v['drain_seconds']} s after the load)")
    write_json(args.json, result)


if __name__ == "__main__":
    main()
