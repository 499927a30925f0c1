"""MiniLM on each runtime, in one run: ONNX Runtime (the default) against numpy + sentence-transformers
(`minilm:torch`, the baseline: what the engine ran before), and ONNX Runtime on the int8 graph
(`minilm:int8`) against the float32 one.

For each runtime, in a fresh process state of its own embedder:
- load: the first query's time, model load included (the ONNX graph from its cache when present,
  else built: `--cold` clears a private cache first so the build is timed);
- query: one LoCoMo question at a time, as a search embeds it (p50 / p95);
- per session: each LoCoMo session's turns in one call, as ingestion embeds them (texts per second);
- agreement: the largest difference between the runtimes' vectors of the same texts; for int8, the
  cosine of its vectors to the float32 ones (it is another embedder: near, not equal).

    .venv/bin/python benchmarks/embedders.py /work/shared/data/locomo/locomo_dev.json --out embedders.json
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C
import numpy as np

RUNTIMES = ("torch", "onnx", "onnx-int8")  # the baseline first


def measure(runtime: str, questions: list[str], sessions: list[list[str]], cache: Path, args: Any) -> dict[str, Any]:
    from mirix_py.store.embeddings import MiniLMEmbedder

    int8 = runtime == "onnx-int8"
    embedder = MiniLMEmbedder(runtime="onnx" if int8 else runtime, cache=cache, int8=int8)
    t0 = time.perf_counter()
    first = embedder.embed([questions[0]])[0]
    load_s = time.perf_counter() - t0
    for q in questions[1:1 + args.warmup]:
        embedder.embed([q])
    C.wait_for_quiet(args.wait_quiet, args.wait_timeout)
    seconds = []
    query_vectors = [first]
    for q in questions[1:]:
        t = time.perf_counter()
        query_vectors.append(embedder.embed([q])[0])
        seconds.append(time.perf_counter() - t)
    embedder.embed(sessions[0])  # the batch path's own load (sentence-transformers for torch)
    C.wait_for_quiet(args.wait_quiet, args.wait_timeout)
    session_vectors: list[list[float]] = []
    t1 = time.perf_counter()
    for texts in sessions:
        session_vectors += embedder.embed(texts)
    batch_s = time.perf_counter() - t1
    texts = sum(len(s) for s in sessions)
    return {
        "runtime": runtime,
        "load_and_first_query_seconds": load_s,
        "query": C.latency_summary(seconds),
        "sessions": len(sessions),
        "texts": texts,
        "per_session_seconds": batch_s,
        "texts_per_second": texts / batch_s if batch_s else float("nan"),
        "loaded": embedder.loaded,
        "_vectors": (np.asarray(query_vectors, dtype=np.float32), np.asarray(session_vectors, dtype=np.float32)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("locomo", help="LoCoMo JSON (the dev split, or tests/fixtures/locomo_mini.json)")
    ap.add_argument("--questions", type=int, default=300, help="questions embedded one at a time (after the first)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--cold", action="store_true", help="time the ONNX graph's build (a fresh private cache)")
    ap.add_argument("--out", help="write the JSON result here")
    C.add_quiet_args(ap)
    args = ap.parse_args()
    C.quiet_logs()

    from mirix_py.eval.locomo import load_locomo
    from mirix_py.store import onnx_minilm

    convs = load_locomo(args.locomo)
    questions = [q.question for c in convs for q in c.questions][:args.questions + 1]
    sessions = [[t.document for t in s.turns] for c in convs for s in c.sessions if s.turns]
    scratch = Path(tempfile.mkdtemp(prefix="mirix-embedders-"))
    cache = scratch / "cache" if args.cold else onnx_minilm.cache_dir()
    results = []
    try:
        for runtime in RUNTIMES:
            print(f"{runtime}: {len(questions)} queries, {len(sessions)} sessions ...", flush=True)
            results.append(measure(runtime, questions, sessions, cache, args))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    (q_base, s_base), (q_onnx, s_onnx), (q_int8, s_int8) = (r.pop("_vectors") for r in results)
    agreement = {"query_max_abs_diff": float(np.abs(q_base - q_onnx).max()),
                 "session_max_abs_diff": float(np.abs(s_base - s_onnx).max()),
                 "session_min_cosine": float(np.min(np.sum(s_base * s_onnx, axis=1)))}
    int8_cosines = {"query": np.sum(q_onnx * q_int8, axis=1), "session": np.sum(s_onnx * s_int8, axis=1)}
    int8_agreement = {f"{kind}_{stat}_cosine": float(fn(values)) for kind, values in int8_cosines.items()
                      for stat, fn in (("min", np.min), ("mean", np.mean))}
    base, onnx, int8 = results

    def ratio(slow: dict[str, Any], fast: dict[str, Any]) -> dict[str, float]:
        return {"query_p50": slow["query"]["p50_ms"] / fast["query"]["p50_ms"],
                "query_p95": slow["query"]["p95_ms"] / fast["query"]["p95_ms"],
                "per_session": slow["per_session_seconds"] / fast["per_session_seconds"]}

    speedup, int8_speedup = ratio(base, onnx), ratio(onnx, int8)
    print()
    print(C.table(["runtime", "load+1st (s)", "query p50 (ms)", "query p95 (ms)", "sessions (s)", "texts/s"],
                  [[r["runtime"], r["load_and_first_query_seconds"], r["query"]["p50_ms"], r["query"]["p95_ms"],
                    r["per_session_seconds"], r["texts_per_second"]] for r in results],
                  title=f"MiniLM runtimes ({len(questions) - 1} queries, {base['texts']} texts in {len(sessions)} "
                        "per-session calls)"))
    print(f"onnx vs torch: query p50 x{speedup['query_p50']:.2f}, p95 x{speedup['query_p95']:.2f}, "
          f"per session x{speedup['per_session']:.2f}; largest vector difference "
          f"{max(agreement['query_max_abs_diff'], agreement['session_max_abs_diff']):.2e}")
    print(f"int8 vs onnx: query p50 x{int8_speedup['query_p50']:.2f}, p95 x{int8_speedup['query_p95']:.2f}, "
          f"per session x{int8_speedup['per_session']:.2f}; cosine to the float32 vectors: queries min "
          f"{int8_agreement['query_min_cosine']:.4f} mean {int8_agreement['query_mean_cosine']:.4f}, turns min "
          f"{int8_agreement['session_min_cosine']:.4f} mean {int8_agreement['session_mean_cosine']:.4f}")
    C.write_json(args.out, {"benchmark": "embedders", "environment": C.environment(), "args": vars(args),
                            "cache": "fresh (build timed)" if args.cold else str(cache),
                            "results": results, "speedup_onnx_over_torch": speedup, "agreement": agreement,
                            "speedup_int8_over_onnx": int8_speedup, "int8_agreement": int8_agreement})


if __name__ == "__main__":
    main()
