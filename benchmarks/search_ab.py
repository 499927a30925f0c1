"""Hybrid search latency of two versions of the engine on one store, each in its own process, in
alternation: a before / after of a change with the machine's drift shared by both sides.

A store kept by `search_latency.py --keep --workdir DIR` (`DIR/engine-N`, its user `bench-target`)
is searched by `--before` and by `--after` (each a git revision, checked out in a temporary worktree,
or a source tree's folder; `--after` defaults to this tree), `--rounds` times each, alternating, every
round a fresh process. Every process searches the same questions (`search_latency.py`'s generator,
each naming a speaker), with the query-embedding cache cleared before each search, after `--warmup`
searches not timed. Printed and written: p50 / p95 / mean wall and CPU ms a search, per round and
side, and in how many rounds the after side's p95 is lower. The store is opened for reading
(`lock=False`); both versions must read its schema, or `--before-store` names a store the before
version kept itself (the same generator and sizes give the same memories).

    .venv/bin/python benchmarks/search_latency.py --sizes 10000 --keep --workdir /tmp/lat
    .venv/bin/python benchmarks/search_ab.py --store /tmp/lat/engine-10000 --before HEAD~1 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import _common as C
import search_latency as SL

REPO = Path(__file__).resolve().parents[1]
USER = "bench-target"


@contextmanager
def source_tree(spec: str) -> Iterator[tuple[Path, str]]:
    """A folder holding `mirix_py` for `spec`: the folder itself, or a git revision of this repo checked
    out in a temporary worktree (removed after); with what it is (the revision's commit or the path)."""
    path = Path(spec)
    if (path / "mirix_py").is_dir():
        yield path.resolve(), str(path.resolve())
        return
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", f"{spec}^{{commit}}"],
                            capture_output=True, text=True)
    if commit.returncode != 0:
        raise SystemExit(f"--before/--after {spec!r}: neither a source tree nor a git revision of {REPO}")
    tmp = Path(tempfile.mkdtemp(prefix="search-ab-"))
    tree = tmp / "tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), commit.stdout.strip()],
                   check=True)
    try:
        yield tree, commit.stdout.strip()
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def child(source: Path, store: Path, questions: list[str], warmup: int, limit: int) -> dict[str, Any]:
    """In this process: search `store` with the engine of `source`; wall and CPU seconds a search."""
    sys.path.insert(0, str(source))
    import mirix_py
    from mirix_py.engine import Mirix

    if not Path(mirix_py.__file__).resolve().is_relative_to(source):
        raise SystemExit(f"imported {mirix_py.__file__}, not the engine of {source}")
    C.quiet_logs()
    mx = Mirix(data_dir=store, lock=False)
    try:
        for q in questions[:warmup]:
            mx.search(q, user_id=USER, limit=limit)
        wall, cpu = [], []
        for q in questions[warmup:]:
            mx.searcher.embedder.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            mx.search(q, user_id=USER, limit=limit)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    finally:
        mx.close()
    return {"wall": wall, "cpu": cpu}


def run_side(source: Path, store: Path, args: argparse.Namespace, questions_file: Path) -> dict[str, Any]:
    """One round of one side on `store`, in a fresh process (this script with `--child`)."""
    run = subprocess.run([sys.executable, __file__, "--child", str(source), "--store", str(store),
                          "--questions-file", str(questions_file), "--warmup", str(args.warmup),
                          "--limit", str(args.limit)], capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        raise SystemExit(f"the search of {source} exited {run.returncode}:\n{run.stderr[-3000:]}")
    times = json.loads(run.stdout.strip().splitlines()[-1])
    wall = C.latency_summary(times["wall"])
    return {**wall, "cpu_mean_ms": sum(times["cpu"]) / len(times["cpu"]) * 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, required=True, help="a data dir kept by search_latency.py --keep")
    ap.add_argument("--before", help="git revision or source tree of the version before")
    ap.add_argument("--before-store", type=Path,
                    help="the before side's own store (kept by the before version's search_latency.py --keep with the "
                         "same --sizes), when it cannot read the after version's schema; default: --store")
    ap.add_argument("--after", default=str(REPO), help="git revision or source tree of the version after (this tree)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", type=int, default=300, help="timed searches a round and side")
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--seed", type=int, default=999)
    ap.add_argument("--out")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--questions-file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        questions = json.loads(args.questions_file.read_text())
        print(json.dumps(child(args.child, args.store, questions, args.warmup, args.limit)))
        return
    if args.before is None:
        ap.error("--before is required")
    if not (args.store / "mirix.db").is_file():
        ap.error(f"--store {args.store}: no mirix.db there (keep one with search_latency.py --keep --workdir DIR)")
    if args.rounds < 1 or args.queries < 1 or args.warmup < 0:
        ap.error("--rounds and --queries must be positive, --warmup zero or more")

    started = time.time()
    questions = SL.distinct_queries(args.warmup + args.queries, args.seed, set())
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, source_tree(args.before) as (before, before_is), \
            source_tree(args.after) as (after, after_is):
        questions_file = Path(tmp) / "questions.json"
        questions_file.write_text(json.dumps(questions))
        for n in range(1, args.rounds + 1):
            rounds.append({"round": n, "before": run_side(before, args.before_store or args.store, args, questions_file),
                           "after": run_side(after, args.store, args, questions_file)})

    rows = [[f"{r['round']} {side}", r[side]["p50_ms"], r[side]["p95_ms"], r[side]["mean_ms"], r[side]["cpu_mean_ms"]]
            for r in rounds for side in ("before", "after")]
    print(C.table(["round", "p50 ms", "p95 ms", "mean ms", "cpu ms"], rows,
                  title=f"hybrid search, {args.queries} questions a round and side, limit {args.limit}: "
                        f"before {before_is}, after {after_is}"))
    gains = sum(r["after"]["p95_ms"] < r["before"]["p95_ms"] for r in rounds)
    print(f"\nafter's p95 lower in {gains} of {len(rounds)} rounds")
    C.write_json(args.out, {"benchmark": "search_ab", "environment": C.environment(), "args": vars(args),
                            "before": before_is, "after": after_is, "store": str(args.store),
                            "rounds": rounds, "after_p95_lower_in": gains, "seconds": time.time() - started})


if __name__ == "__main__":
    main()
