"""Offline ingestion of LoCoMo into a fresh data dir, beside the bare floor of the same work.

Engine: one user per conversation, one `Mirix.add` per session (messages: role user, name = speaker,
id = dia_id), embedded SQLite + embedded Chroma + MiniLM, offline rules. Twice, each into a fresh data
dir: each add waited on (the default `wait=True`: an add returns once its memories are stored), and
queued (`wait=False`, then `flush()` after each conversation: a history imported at once, processed in
per-user batches of `batch_size` sessions). Both store the same memories.

Floors, same run, same loaded embedder, same texts ("Speaker: text"):
- per session (the engine's granularity): embed the session's turns in one call, upsert them into a
  bare `chromadb.PersistentClient` collection (one per conversation, cosine), insert them into a
  plain sqlite3 table, one commit per session. The gap to the engine is its own overhead: input
  log, rules, history, FTS5, validation.
- bulk: all 2,760 turns embedded in one call (the embedder's length-sorted batches of 64), then one
  upsert and one insert per conversation: the least work that stores the same thing.

    .venv/bin/python benchmarks/ingest_locomo.py /work/shared/data/locomo/locomo_dev.json --out ingest.json
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C
import chromadb  # at import, so the floors' open time does not include importing it
from chromadb.config import Settings as ChromaSettings

TARGET_SECONDS = 30.0


def run_engine(convs: list, workdir: Path, embedder: Any | None, *, wait: bool = True) -> dict[str, Any]:
    from mirix_py.engine import Mirix
    from mirix_py.eval.locomo import ingest_conversations

    timing = C.TimingEmbedder(embedder) if embedder is not None else None
    data_dir = workdir / ("engine" if wait else "engine-queued")
    t0 = time.perf_counter()
    mx = Mirix(data_dir=data_dir, embedder=timing)
    open_s = time.perf_counter() - t0
    per_conv: list[dict[str, Any]] = []
    last = [time.perf_counter()]

    def progress(conv, stats) -> None:
        now = time.perf_counter()
        per_conv.append({"conversation": conv.sample_id, "turns": len(conv.turns), "seconds": now - last[0]})
        last[0] = now

    t1 = time.perf_counter()
    stats = ingest_conversations(mx, convs, progress=progress, wait=wait)
    ingest_s = time.perf_counter() - t1
    counts = mx.store.count()
    mx.close()
    return {
        "open_seconds": open_s,
        "ingest_seconds": ingest_s,
        "turns": stats.turns,
        "sessions": stats.sessions,
        "failed_sessions": stats.failed_sessions,
        "turns_per_second": stats.turns / ingest_s,
        "ms_per_turn": 1000 * ingest_s / stats.turns,
        "embed_seconds": timing.seconds if timing else 0.0,
        "embed_calls": timing.calls if timing else 0,
        "embedded_texts": timing.texts if timing else 0,
        "memories": dict(sorted(counts.items())),
        "memories_total": sum(counts.values()),
        "per_conversation": per_conv,
        "data_dir_mb": sum(p.stat().st_size for p in data_dir.rglob("*") if p.is_file()) / 1e6,
    }


def open_floor_stores(workdir: Path, name: str) -> tuple[Any, sqlite3.Connection]:
    """A bare Chroma client and a plain sqlite3 database with the floors' turn table."""
    client = chromadb.PersistentClient(path=str(workdir / f"{name}-chroma"),
                                       settings=ChromaSettings(anonymized_telemetry=False))
    db = sqlite3.connect(workdir / f"{name}.db")
    db.execute("CREATE TABLE turn (id TEXT PRIMARY KEY, user_id TEXT, speaker TEXT, text TEXT, occurred_at TEXT)")
    return client, db


def run_floor(convs: list, workdir: Path, embedder: Any | None) -> dict[str, Any]:
    """Per session: one embed call, one chroma upsert, one sqlite3 insert + commit (the engine's granularity)."""
    parts: dict[str, float] = {}
    t0 = time.perf_counter()
    client, db = open_floor_stores(workdir, "floor")
    open_s = time.perf_counter() - t0
    turns = 0
    t1 = time.perf_counter()
    for conv in convs:
        coll = client.get_or_create_collection(f"floor_{conv.sample_id}".replace(":", "_"),
                                               configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
        for session in conv.sessions:
            texts = [t.document for t in session.turns]
            ids = [f"{conv.sample_id}/{t.dia_id}" for t in session.turns]
            if embedder is not None:
                with C.timed(parts, "embed"):
                    vectors = embedder.embed(texts)
                with C.timed(parts, "chroma"):
                    coll.upsert(ids=ids, embeddings=vectors)
            with C.timed(parts, "sqlite"):
                db.executemany("INSERT INTO turn VALUES (?, ?, ?, ?, ?)",
                               [(i, conv.user_id, t.speaker, t.content, session.date.isoformat())
                                for i, t in zip(ids, session.turns)])
                db.commit()
            turns += len(texts)
    total = time.perf_counter() - t1
    db.close()
    return {"open_seconds": open_s, "ingest_seconds": total, "turns": turns, "turns_per_second": turns / total,
            "ms_per_turn": 1000 * total / turns, "embed_seconds": parts.get("embed", 0.0),
            "chroma_seconds": parts.get("chroma", 0.0), "sqlite_seconds": parts.get("sqlite", 0.0)}


def run_floor_bulk(convs: list, workdir: Path, embedder: Any | None) -> dict[str, Any]:
    """All turns embedded in one call (the embedder's own length-sorted batches of 64), then one chroma
    upsert and one sqlite3 insert per conversation: the least work that stores the same thing."""
    parts: dict[str, float] = {}
    t0 = time.perf_counter()
    client, db = open_floor_stores(workdir, "bulk")
    open_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    rows = [(conv, session, t) for conv in convs for session in conv.sessions for t in session.turns]
    vectors: list = []
    if embedder is not None:
        with C.timed(parts, "embed"):
            vectors = embedder.embed([t.document for _, _, t in rows])
    for conv in convs:
        idx = [i for i, (c, _, _) in enumerate(rows) if c is conv]
        ids = [f"{conv.sample_id}/{rows[i][2].dia_id}" for i in idx]
        if embedder is not None:
            coll = client.get_or_create_collection(f"bulk_{conv.sample_id}", configuration={"hnsw": {"space": "cosine"}},
                                                   embedding_function=None)
            with C.timed(parts, "chroma"):
                coll.upsert(ids=ids, embeddings=[vectors[i] for i in idx])
        with C.timed(parts, "sqlite"):
            db.executemany("INSERT INTO turn VALUES (?, ?, ?, ?, ?)",
                           [(mid, conv.user_id, rows[i][2].speaker, rows[i][2].content, rows[i][1].date.isoformat())
                            for mid, i in zip(ids, idx)])
            db.commit()
    total = time.perf_counter() - t1
    db.close()
    return {"open_seconds": open_s, "ingest_seconds": total, "turns": len(rows), "turns_per_second": len(rows) / total,
            "ms_per_turn": 1000 * total / len(rows), "embed_seconds": parts.get("embed", 0.0),
            "chroma_seconds": parts.get("chroma", 0.0), "sqlite_seconds": parts.get("sqlite", 0.0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="LoCoMo JSON (the original format), e.g. /work/shared/data/locomo/locomo_dev.json")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    ap.add_argument("--embedder", choices=["minilm", "minilm:int8", "none"], default="minilm",
                    help="minilm:int8: MiniLM's int8 graph; none: full-text only (no vectors); for both engine and floor")
    ap.add_argument("--workdir", help="where the fresh data dirs go (default: a new temp dir, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the data dirs")
    ap.add_argument("--floor-first", action="store_true", help="run the floor before the engine (default: after)")
    ap.add_argument("--torch-threads", type=int, help="torch.set_num_threads before loading the embedder (default: torch's)")
    C.add_quiet_args(ap)
    args = ap.parse_args()
    C.quiet_logs()

    from mirix_py.eval.locomo import EvidenceReport, load_locomo
    from mirix_py.store.embeddings import load_embedder

    env = C.environment()
    env["torch_threads"] = C.set_torch_threads(args.torch_threads)
    convs = load_locomo(args.data, EvidenceReport())
    n_turns = sum(len(c.turns) for c in convs)
    t0 = time.perf_counter()
    embedder = load_embedder(args.embedder)
    load_s = time.perf_counter() - t0
    if args.embedder != "none" and embedder is None:
        raise SystemExit("the embedder did not load (see the warning above)")
    if embedder is not None:  # warm-up: the first encode pays one-off costs that neither side should carry
        embedder.embed(["warm up the model", "a second sentence to warm up"])

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="mirix-ingest-"))
    if workdir.exists() and any(workdir.iterdir()):
        raise SystemExit(f"{workdir} is not empty: the engine must start from a fresh data dir")
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        print(f"{len(convs)} conversations, {sum(len(c.sessions) for c in convs)} sessions, {n_turns} turns; "
              f"embedder {getattr(embedder, 'name', None)} loaded in {load_s:.1f}s; workdir {workdir}; "
              f"load average {C.loadavg()}", flush=True)
        waits = []
        runners = {"engine": run_engine, "queued": lambda *a: run_engine(*a, wait=False), "floor": run_floor,
                   "bulk": run_floor_bulk}
        order = ("floor", "bulk", "engine", "queued") if args.floor_first else ("engine", "queued", "floor", "bulk")
        out: dict[str, dict[str, Any]] = {}
        for side in order:
            waits.append({side: C.wait_for_quiet(args.wait_quiet, args.wait_timeout)})
            load_before = C.loadavg()
            out[side] = runners[side](convs, workdir, embedder)
            out[side]["loadavg_before"], out[side]["loadavg_after"] = load_before, C.loadavg()
        engine, queued, floor, bulk = out["engine"], out["queued"], out["floor"], out["bulk"]
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    def row(label: str, side: dict[str, Any]) -> list[Any]:
        return [label, side["ingest_seconds"], side["turns_per_second"], side["ms_per_turn"], side["embed_seconds"],
                side["ingest_seconds"] - side["embed_seconds"], side["open_seconds"]]

    rows = [row("engine (Mirix.add per session)", engine), row("engine, queued (add wait=False, flush)", queued),
            row("floor per session (embed + bare chroma + sqlite3)", floor),
            row("floor bulk (one embed call for all turns)", bulk)]
    print()
    print(C.table(["", "seconds", "turns/s", "ms/turn", "embed s", "non-embed s", "open s"], rows,
                  title=f"LoCoMo ingestion, {n_turns} turns, {len(convs)} users, one add per session"))
    overhead = engine["ingest_seconds"] - floor["ingest_seconds"]
    print(f"\nengine over the per-session floor: {overhead:+.1f}s ({engine['ingest_seconds'] / floor['ingest_seconds']:.2f}x); "
          f"outside the embedder: engine {engine['ingest_seconds'] - engine['embed_seconds']:.1f}s vs floor "
          f"{floor['ingest_seconds'] - floor['embed_seconds']:.1f}s (chroma {floor['chroma_seconds']:.1f}s, "
          f"sqlite {floor['sqlite_seconds']:.2f}s); embedding per session vs in one call: "
          f"{floor['embed_seconds']:.1f}s vs {bulk['embed_seconds']:.1f}s")
    print("(the engine embeds an input's episodes while its rules run, so its 'non-embed s' is wall time minus "
          "embedding time, not the rules' own time)")
    print(f"target <= {TARGET_SECONDS:.0f}s: {'met' if engine['ingest_seconds'] <= TARGET_SECONDS else 'NOT met'} "
          f"with each add waited on ({engine['ingest_seconds']:.1f}s), "
          f"{'met' if queued['ingest_seconds'] <= TARGET_SECONDS else 'NOT met'} queued ({queued['ingest_seconds']:.1f}s)")
    if queued["memories"] != engine["memories"]:
        print(f"queued and waited stores differ: {queued['memories']} against {engine['memories']}")
    print()
    print(C.table(["memory type", "count"], [[k, v] for k, v in engine["memories"].items()] +
                  [["total", engine["memories_total"]]]))
    for name, side in (("waited", engine), ("queued", queued)):
        if side["failed_sessions"]:
            print(f"\n{len(side['failed_sessions'])} sessions failed ({name}): {side['failed_sessions'][:3]}")
    print("\nload average (1/5/15 min) " + "; ".join(f"{k} before {v['loadavg_before']} after {v['loadavg_after']}"
                                                  for k, v in out.items())
          + f"; {env['cpus']} cpus, torch threads {env['torch_threads']} (other processes skew timings)")
    C.write_json(args.out, {
        "benchmark": "ingest_locomo", "data": str(args.data), "environment": env, "embedder_load_seconds": load_s,
        "engine": engine, "engine_queued": queued, "floor": floor, "floor_bulk": bulk, "overhead_seconds": overhead, "target_seconds": TARGET_SECONDS,
        "target_met": engine["ingest_seconds"] <= TARGET_SECONDS,
        "queued_target_met": queued["ingest_seconds"] <= TARGET_SECONDS, "loadavg_at_end": C.loadavg(), "waits": waits,
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
