"""A named question's full-text legs at a large user whose memories are two people talking: from one
FTS5 query (`FullTextIndex.search_named`) against leg by leg, interleaved question by question.

Layout: one user holding N episodes (default 40,000) said in turn by Ann and Bob, each led by its
speaker's name ("Ann: Ann said the strange lamp ... was a great find."), the sentences of
`search_latency.py`'s generator with its speakers renamed; embedded SQLite, no embedder (the legs
timed are full text). Questions: `search_latency.py`'s, their names replaced by Ann or Bob, so every
one names a speaker, whose name the user's memories hold in half of them. Timed: what a hybrid
search runs for the full-text side of a named question (`Searcher._lexical_legs`: the question's
leg and its name-free leg, with their memories' provenance), with the index's shared query on, and
off (the two legs side by side on two threads, as for a question whose names select rows of their
own). Each question's two rankings are compared: they must be equal.

    .venv/bin/python benchmarks/named_legs.py                       # ~2 min
    .venv/bin/python benchmarks/named_legs.py --memories 2000 --queries 20
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import _common as C
import search_latency as SL

SPEAKERS = ("Ann", "Bob")


def turns(n: int, seed: int) -> list[tuple[str, str]]:
    """n (speaker, sentence), the speakers in turn, each sentence led by its speaker's name."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        speaker = SPEAKERS[i % 2]
        _, sentence = SL.make_episode(rng)
        out.append((speaker, f"{speaker} {sentence.split(' ', 1)[1]}"))
    return out


def questions(n: int, seed: int) -> list[str]:
    """n distinct questions of `search_latency.make_query`, each name replaced by a speaker."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        q = SL.make_query(rng)
        for name in SL.NAMES:
            q = q.replace(name, rng.choice(SPEAKERS))
        if q not in out:
            out.append(q)
    return out


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from mirix_py.engine import Mirix
    from mirix_py.records import EpisodicMemory
    from mirix_py.store.fulltext import Filters
    from mirix_py.store.names import named_actors, without_names
    from mirix_py.store.search import Searcher
    from mirix_py.tools.ops import InsertOp

    user = "bench-talk"
    with Mirix(data_dir=workdir / "engine", embedder=None) as mx:
        t0 = time.perf_counter()
        batch: list[InsertOp] = []
        for i, (speaker, text) in enumerate(turns(args.memories, args.seed)):
            batch.append(InsertOp(memory=EpisodicMemory(user_id=user, actor=speaker, summary=text, event_type="message",
                                                         occurred_at=SL.BASE_TIME + timedelta(minutes=7 * i))))
            if len(batch) == SL.BATCH:
                mx.store.apply(batch, user_id=user, actor="benchmark")
                batch = []
        if batch:
            mx.store.apply(batch, user_id=user, actor="benchmark")
        insert_s = time.perf_counter() - t0
        print(f"{args.memories} memories inserted in {insert_s:.1f}s", flush=True)

        searcher = Searcher(mx.store)
        fulltext = mx.store.fulltext
        shared = fulltext.search_named

        def leg_by_leg(*_: Any) -> None:
            return None

        filters = Filters(user_id=user)
        actors = mx.store.actors(user_id=user)
        asked = [(q, without_names(q, named_actors(q, actors))) for q in questions(args.queries + args.warmup, args.seed + 1)]
        for q, rest in asked[:args.warmup]:
            searcher._lexical_legs(q, rest, filters, args.depth)
        times: dict[str, list[float]] = {"one query": [], "leg by leg": []}  # seconds
        same = took_shared = 0
        try:
            for j, (q, rest) in enumerate(asked[args.warmup:]):
                with mx.store.engine.connect() as conn:
                    took_shared += shared(conn, q, rest, filters, args.depth) is not None
                legs = {}
                for mode in (("one query", "leg by leg") if j % 2 else ("leg by leg", "one query")):
                    fulltext.search_named = shared if mode == "one query" else leg_by_leg  # type: ignore[method-assign]
                    t0 = time.perf_counter()
                    legs[mode] = searcher._lexical_legs(q, rest, filters, args.depth)[:2]
                    times[mode].append(time.perf_counter() - t0)
                same += legs["one query"] == legs["leg by leg"]
        finally:
            fulltext.search_named = shared  # type: ignore[method-assign]
            searcher.close()
    return {"memories": args.memories, "questions": args.queries, "insert_s": insert_s, "shared_query_taken": took_shared,
            "identical_rankings": same, "latency": {mode: C.latency_summary(v) for mode, v in times.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=40_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--depth", type=int, default=30, help="hits per leg (a hybrid search of limit 10 asks 30)")
    ap.add_argument("--seed", type=int, default=3)
    C.add_quiet_args(ap)
    ap.add_argument("--out", help="write the result as JSON here")
    ap.add_argument("--workdir", help="where the data dir goes (default: a temp dir, removed after)")
    args = ap.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="mirix-named-legs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    waited = C.wait_for_quiet(args.wait_quiet, args.wait_timeout)
    try:
        result = run(args, workdir)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    result.update(benchmark="named_legs", quiet=waited, loadavg_at_end=C.loadavg(), environment=C.environment())
    print(f"\n{'':12s}{'p50 ms':>9s}{'p95 ms':>9s}{'mean ms':>9s}")
    for mode, lat in result["latency"].items():
        print(f"{mode:12s}{lat['p50_ms']:9.2f}{lat['p95_ms']:9.2f}{lat['mean_ms']:9.2f}")
    print(f"shared query taken for {result['shared_query_taken']} of {args.queries} questions; "
          f"identical rankings {result['identical_rankings']} of {args.queries}")
    C.write_json(args.out, result)


if __name__ == "__main__":
    main()
