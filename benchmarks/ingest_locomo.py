"""Offline ingestion of LoCoMo into a fresh data dir, beside the bare floor of the same work.

Engine: one user per conversation, one `Mirix.add` per session (messages: role user, name = speaker,
id = dia_id), embedded SQLite + embedded Chroma + MiniLM, offline rules.

Floor, same run, same loaded embedder: for each session, embed its turn texts in one call, upsert
them into a bare `chromadb.PersistentClient` collection (one per conversation, cosine), and insert
them into a plain sqlite3 table, one commit per session. The difference is the engine's overhead:
input log, rules, history, FTS5, validation.

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

TARGET_SECONDS = 30.0


def run_engine(convs: list, workdir: Path, embedder: Any | None) -> dict[str, Any]:
    from mirix_py.engine import Mirix
    from mirix_py.eval.locomo import ingest_conversations

    timing = C.TimingEmbedder(embedder) if embedder is not None else None
    data_dir = workdir / "engine"
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
    stats = ingest_conversations(mx, convs, progress=progress)
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


def run_floor(convs: list, workdir: Path, embedder: Any | None) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    parts: dict[str, float] = {}
    t0 = time.perf_counter()
    client = chromadb.PersistentClient(path=str(workdir / "floor-chroma"),
                                       settings=ChromaSettings(anonymized_telemetry=False))
    db = sqlite3.connect(workdir / "floor.db")
    db.execute("CREATE TABLE turn (id TEXT PRIMARY KEY, user_id TEXT, speaker TEXT, text TEXT, occurred_at TEXT)")
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="LoCoMo JSON (the original format), e.g. /work/shared/data/locomo/locomo_dev.json")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    ap.add_argument("--embedder", choices=["minilm", "none"], default="minilm",
                    help="none: full-text only (no vectors), for both engine and floor")
    ap.add_argument("--workdir", help="where the fresh data dirs go (default: a new temp dir, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the data dirs")
    ap.add_argument("--floor-first", action="store_true", help="run the floor before the engine (default: after)")
    args = ap.parse_args()
    C.quiet_logs()

    from mirix_py.eval.locomo import EvidenceReport, load_locomo
    from mirix_py.store.embeddings import load_embedder

    env = C.environment()
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
        if args.floor_first:
            floor = run_floor(convs, workdir, embedder)
            engine = run_engine(convs, workdir, embedder)
        else:
            engine = run_engine(convs, workdir, embedder)
            floor = run_floor(convs, workdir, embedder)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    rows = [
        ["engine (Mirix.add per session)", engine["ingest_seconds"], engine["turns_per_second"], engine["ms_per_turn"],
         engine["embed_seconds"], engine["ingest_seconds"] - engine["embed_seconds"], engine["open_seconds"]],
        ["floor (embed + bare chroma + sqlite3)", floor["ingest_seconds"], floor["turns_per_second"],
         floor["ms_per_turn"], floor["embed_seconds"], floor["ingest_seconds"] - floor["embed_seconds"],
         floor["open_seconds"]],
    ]
    print()
    print(C.table(["", "seconds", "turns/s", "ms/turn", "embed s", "non-embed s", "open s"], rows,
                  title=f"LoCoMo ingestion, {n_turns} turns, {len(convs)} users, one add per session"))
    overhead = engine["ingest_seconds"] - floor["ingest_seconds"]
    print(f"\nengine overhead over the floor: {overhead:.1f}s ({engine['ingest_seconds'] / floor['ingest_seconds']:.2f}x); "
          f"floor parts: embed {floor['embed_seconds']:.1f}s, chroma {floor['chroma_seconds']:.1f}s, "
          f"sqlite {floor['sqlite_seconds']:.2f}s")
    print(f"target <= {TARGET_SECONDS:.0f}s: {'met' if engine['ingest_seconds'] <= TARGET_SECONDS else 'NOT met'} "
          f"({engine['ingest_seconds']:.1f}s)")
    print()
    print(C.table(["memory type", "count"], [[k, v] for k, v in engine["memories"].items()] +
                  [["total", engine["memories_total"]]]))
    if engine["failed_sessions"]:
        print(f"\n{len(engine['failed_sessions'])} sessions failed: {engine['failed_sessions'][:3]}")
    print(f"\nload average at end {C.loadavg()} (other processes on the machine skew timings)")
    C.write_json(args.out, {
        "benchmark": "ingest_locomo", "data": str(args.data), "environment": env, "embedder_load_seconds": load_s,
        "engine": engine, "floor": floor, "overhead_seconds": overhead, "target_seconds": TARGET_SECONDS,
        "target_met": engine["ingest_seconds"] <= TARGET_SECONDS, "loadavg_at_end": C.loadavg(),
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
