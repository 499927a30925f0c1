"""Every benchmark under benchmarks/ runs end to end at its tiniest size, so none can break unnoticed.

Each test runs the script in a subprocess as a user would, on the mini LoCoMo fixture or a few
synthetic items, and checks that it exited cleanly, printed its figures and wrote a well-formed
JSON result. Elsewhere: `load_rest.py` (tests/server/test_load_bench.py), `secrets_corpus.py`
(tests/agents/offline/test_secret_corpus.py), `local_model.py` (tests/llm/test_real_model.py),
`mirix eval locomo` (tests/eval/test_locomo_eval.py) and `mirix eval screenshots`'s run
(tests/eval/test_screenshot_qa.py). The figures of such tiny runs mean nothing; only that they exist.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "tests" / "fixtures" / "locomo_mini.json"


def run_benchmark(script: str, *args: str, tmp_path: Path) -> str:
    """Run benchmarks/<script> with args; returns its stdout, failing with its stderr's tail."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path, env=env)
    assert run.returncode == 0, f"{script} exited {run.returncode}:\n{run.stderr[-3000:]}"
    return run.stdout


def finite(x: object) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def test_search_latency(tmp_path):
    out = tmp_path / "latency.json"
    stdout = run_benchmark("search_latency.py", "--sizes", "200", "--queries", "3", "--warmup", "1",
                           "--cache-dir", str(tmp_path / "cache"), "--out", str(out), tmp_path=tmp_path)
    assert "hybrid p95" in stdout and "summary (ms)" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "search_latency" and result["pool"]["computed"] == 200
    (size,) = result["results"]
    assert size["size"] == 200 and sum(size["target_memories"].values()) == 200 + 1  # and its core block
    assert size["target_memories"]["core"] == 1 and size["total_memories"] == 200 + 9 * 20
    for method in ("engine hybrid", "engine bm25", "engine embedding", "bare chroma (query vector given)",
                   "engine /context (retrieve_context)"):
        lat = size["latency"][method]
        assert lat["n"] == 3 and finite(lat["p95_ms"]) and lat["p95_ms"] > 0 and lat["mean_hits"] > 0


def test_search_ab(tmp_path):
    """Two versions (this tree's commit, checked out in a worktree, and this tree) searching one kept
    store, alternating."""
    work = tmp_path / "kept"
    run_benchmark("search_latency.py", "--sizes", "200", "--queries", "2", "--warmup", "1", "--keep",
                  "--workdir", str(work), "--cache-dir", str(tmp_path / "cache"), tmp_path=tmp_path)
    out = tmp_path / "ab.json"
    stdout = run_benchmark("search_ab.py", "--store", str(work / "engine-200"), "--before", "HEAD",
                           "--after", str(REPO), "--rounds", "2", "--queries", "3", "--warmup", "1",
                           "--out", str(out), tmp_path=tmp_path)
    assert "after's p95 lower in" in stdout
    result = json.loads(out.read_text())
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert result["benchmark"] == "search_ab" and (result["before"], result["after"]) == (head, str(REPO))
    assert [r["round"] for r in result["rounds"]] == [1, 2]
    for r in result["rounds"]:
        for side in ("before", "after"):
            assert r[side]["n"] == 3 and finite(r[side]["p95_ms"]) and r[side]["cpu_mean_ms"] > 0


def test_search_ab_says_what_it_cannot_compare(tmp_path):
    script = str(REPO / "benchmarks" / "search_ab.py")
    no_store = subprocess.run([sys.executable, script, "--store", str(tmp_path), "--before", "HEAD"],
                              capture_output=True, text=True, cwd=tmp_path)
    assert no_store.returncode == 2 and "no mirix.db there" in no_store.stderr
    (tmp_path / "mirix.db").write_bytes(b"")
    no_rev = subprocess.run([sys.executable, script, "--store", str(tmp_path), "--before", "no-such-revision"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert no_rev.returncode != 0 and "neither a source tree nor a git revision" in no_rev.stderr
    assert not list(tmp_path.glob("*.json"))  # nothing written


def test_named_legs(tmp_path):
    out = tmp_path / "named.json"
    stdout = run_benchmark("named_legs.py", "--memories", "300", "--queries", "6", "--warmup", "1",
                           "--out", str(out), tmp_path=tmp_path)
    assert "one query" in stdout and "leg by leg" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "named_legs" and result["memories"] == 300
    assert result["identical_rankings"] == 6  # the shared query ranks as the two legs do, or is not taken
    for mode in ("one query", "leg by leg"):
        lat = result["latency"][mode]
        assert lat["n"] == 6 and finite(lat["p95_ms"]) and lat["p95_ms"] > 0


@pytest.mark.parametrize("embedder", ["minilm", "minilm:int8"])
def test_ingest_locomo(tmp_path, embedder):
    out = tmp_path / "ingest.json"
    stdout = run_benchmark("ingest_locomo.py", str(MINI), "--embedder", embedder, "--out", str(out), tmp_path=tmp_path)
    assert "target <= 30s" in stdout
    assert ("all-MiniLM-L6-v2-int8" in stdout) == (embedder == "minilm:int8")
    result = json.loads(out.read_text())
    assert result["benchmark"] == "ingest_locomo"
    engine = result["engine"]
    assert engine["turns"] == 8 and engine["sessions"] == 3 and engine["failed_sessions"] == []
    assert engine["memories_total"] > 0 and finite(engine["ingest_seconds"])
    queued = result["engine_queued"]
    assert queued["turns"] == 8 and queued["sessions"] == 3 and queued["failed_sessions"] == []
    assert queued["memories"] == engine["memories"] and finite(queued["ingest_seconds"])
    assert "queued" in stdout and "stores differ" not in stdout
    assert result["floor"]["turns"] == result["floor_bulk"]["turns"] == 8


def test_locomo_recall(tmp_path):
    out = tmp_path / "recall.json"
    stdout = run_benchmark("locomo_recall.py", str(MINI), "--budget-words", "750", "--cache-dir",
                           str(tmp_path / "cache"), "--out", str(out), tmp_path=tmp_path)
    assert "engine hybrid" in stdout and "raw RRF" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "locomo_recall" and result["engine"]["failed_sessions"] == []
    assert result["engine"]["store"] == "per_conversation" and len(set(result["engine"]["data_dirs"].values())) == 2
    from mirix_py.settings import SEARCH_CONTEXT

    assert result["context"] == SEARCH_CONTEXT  # by default what a user's search gives, as `mirix eval locomo`
    rows = result["results"]["750"]
    assert {"engine hybrid", "engine bm25", "engine embedding", "raw BM25", "raw MiniLM", "raw RRF"} <= set(rows)
    for row in rows.values():
        assert row["overall_1_4"]["n"] == 6 and 0.0 <= row["overall_1_4"]["recall"] <= 1.0
    assert rows["engine hybrid"]["overall_1_4"]["recall"] > 0


def test_orchestration(tmp_path):
    out = tmp_path / "orchestration.json"
    stdout = run_benchmark("orchestration.py", str(MINI), "--conversations", "1", "--questions", "1",
                           "--delay-ms", "1", "--out", str(out), tmp_path=tmp_path)
    assert "LLM calls per session" in stdout
    result = json.loads(out.read_text())
    for flow in ("parallel", "sequential"):
        assert result[flow]["sessions"] == 2 and result[flow]["calls_per_session"] > 0
    assert result["parallel"]["chats"] == 1 and result["parallel"]["calls_per_chat"] > 0


def test_screenshots(tmp_path):
    out = tmp_path / "screenshots.json"
    stdout = run_benchmark("screenshots.py", "--days", "1", "--dwell", "1-2", "--size", "1280x720",
                           "--workers", "1", "--baseline-frames", "1", "--out", str(out), tmp_path=tmp_path)
    assert "end to end" in stdout and "planted facts" in stdout
    result = json.loads(out.read_text())
    assert result["frames"] >= result["unique"] > 0
    assert result["ocr_stage"]["failures"] == 0 and result["end_to_end"]["unique_fps"] > 0
    assert 0 < result["bytes"]["stored_per_frame"] < result["bytes"]["png_per_frame"]
    assert sum(result["memories"].values()) > 0


def test_offline_facts(tmp_path):
    """The whole labelled corpus (pure CPU, about a second); its minimum figures are kept by
    tests/agents/offline/test_fact_regressions.py."""
    out = tmp_path / "facts.json"
    stdout = run_benchmark("offline_facts.py", "--out", str(out), tmp_path=tmp_path)
    assert "precision" in stdout and "supersessions" in stdout
    written = json.loads(out.read_text())
    results = written if isinstance(written, list) else [written]  # one result per corpus (tuned, held out)
    assert results
    for result in results:
        assert result["texts"] > 0 and result["facts"] > 0
        for kind in ("loose", "strict"):
            assert 0.0 <= result[kind]["precision"] <= 1.0 and 0.0 <= result[kind]["recall"] <= 1.0
        assert result["updates"]["applied"] <= result["updates"]["supersessions"]


def test_locomo_replay(tmp_path):
    out = tmp_path / "replay.json"
    stdout = run_benchmark("locomo_replay.py", str(MINI), "--cache-dir", str(tmp_path / "a"),
                           "--compare-cache-dir", str(tmp_path / "b"), "--out", str(out), tmp_path=tmp_path)
    assert "leave one conversation out" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "locomo_replay"
    assert set(result["variants"]) == {"base"} | {f"session S={s} w={w}" for s in (1, 2, 3) for w in (0.25, 0.5, 1.0)}
    base = result["variants"]["base"]
    assert finite(base["evidence_recall"]) and set(base["per_conversation"]) == {"mini-1", "mini-2"}
    assert [f["held_out"] for f in result["leave_one_conversation_out"]] == ["mini-1", "mini-2"]
    # two fresh ingestions of the same turns rank alike
    compare = result["compare"]
    assert compare["full_text_leg_differs"] == compare["vector_leg_differs"] == 0
    assert compare["first"] == compare["second_legs_on_first_store"]


def test_embedders(tmp_path):
    out = tmp_path / "embedders.json"
    stdout = run_benchmark("embedders.py", str(MINI), "--questions", "3", "--warmup", "1", "--cold",
                           "--out", str(out), tmp_path=tmp_path)
    assert "onnx vs torch" in stdout and "int8 vs onnx" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "embedders"
    assert [r["runtime"] for r in result["results"]] == ["torch", "onnx", "onnx-int8"]
    for row in result["results"]:
        assert row["query"]["n"] == 3 and finite(row["query"]["p95_ms"]) and row["texts"] == 8
    assert result["results"][1]["loaded"]["onnx"] and not result["results"][1]["loaded"]["sentence_transformers"]
    assert result["agreement"]["query_max_abs_diff"] < 1e-5 and result["agreement"]["session_max_abs_diff"] < 1e-5
    assert 0.95 < result["int8_agreement"]["session_min_cosine"] < 1.0
    assert finite(result["speedup_int8_over_onnx"]["per_session"])


@pytest.mark.skipif(importlib.util.find_spec("pysqlite3") is None,
                    reason="pysqlite3-binary has wheels for Linux x86_64 only: nothing to compare")
def test_fts_ranking(tmp_path):
    out = tmp_path / "fts.json"
    from mirix_py.store.sqlite_fulltext import PARALLEL_MIN_DOCS

    # a user just large enough for the engine to split some queries in two parts
    stdout = run_benchmark("fts_ranking.py", "--size", str(PARALLEL_MIN_DOCS), "--other-users", "1", "--queries", "8",
                           "--warmup", "1", "--out", str(out), tmp_path=tmp_path)
    assert "pysqlite3, as the engine vs stdlib" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "fts_ranking" and result["differing_queries"] == 0
    assert list(result["results"]) == ["stdlib", "pysqlite3", "pysqlite3, as the engine"]
    assert all(r["n"] == 8 and finite(r["p95_ms"]) for r in result["results"].values())
    assert result["memories"]["bench-target"] == PARALLEL_MIN_DOCS
    assert 0 < result["queries_in_two_parts"] <= 8


def test_locomo_near(tmp_path):
    out = tmp_path / "near.json"
    stdout = run_benchmark("locomo_near.py", str(MINI), "--cache-dir", str(tmp_path / "a"), "--grid", "small",
                           "--out", str(out), tmp_path=tmp_path)
    assert "leave one conversation out" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "locomo_near"
    assert set(result["variants"]) == {"no neighbours", "before 3 after 2 w=0.5"}
    for variant in result["variants"].values():
        assert finite(variant["evidence_recall"]) and set(variant["per_conversation"]) == {"mini-1", "mini-2"}
    assert [f["held_out"] for f in result["leave_one_conversation_out"]] == ["mini-1", "mini-2"]


def test_left_out_terms(tmp_path):
    out = tmp_path / "left_out.json"
    stdout = run_benchmark("left_out_terms.py", "--size", "300", "--queries", "5", "--warmup", "1",
                           "--min-docs", "100", "--out", str(out), tmp_path=tmp_path)
    assert "overlap of the top 10" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "left_out_terms" and result["queries"] == 5
    assert list(result["results"]) == ["all terms", "left out"]
    assert all(r["n"] == 5 and finite(r["p95_ms"]) for r in result["results"].values())
    assert 0 <= result["overlap_top10"] <= 1 and result["memories"]["bench-target"] == 300


def test_locomo_large_user_rules(tmp_path):
    out = tmp_path / "eval"
    stdout = run_benchmark("locomo_large_user_rules.py", "--cutoff", "0.05", "--", "--data", str(MINI),
                           "--no-baselines", "--fresh", "--cache-dir", str(tmp_path / "c"), "--out", str(out),
                           tmp_path=tmp_path)
    assert "every user large: NEAR_COMMON_SHARE 1.0, LEFT_OUT_SHARE 0.05" in stdout
    summary = json.loads((out / "locomo_eval.json").read_text())["summary"]["engine"]["overall_1_4"]
    assert finite(summary["evidence_recall"]) and summary["n"] > 0


def test_locomo_hops(tmp_path):
    out = tmp_path / "hops.json"
    stdout = run_benchmark("locomo_hops.py", str(MINI), "--cache-dir", str(tmp_path / "a"), "--out", str(out),
                           tmp_path=tmp_path)
    assert "held out (pooled)" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "locomo_hops" and result["questions"] > 0
    assert result["store"] == "per_conversation" and set(result["data_dirs"]) == {"mini-1", "mini-2"}
    assert "base" in result["variants"] and len(result["variants"]) > 1
    for variant in result["variants"].values():
        assert finite(variant["overall"]["evidence_recall"]) and set(variant["per_conversation"]) == {"mini-1", "mini-2"}
    for loo in result["leave_one_conversation_out"].values():
        assert [f["held_out"] for f in loo["folds"]] == ["mini-1", "mini-2"] and loo["verdict"]


def test_locomo_context_loo(tmp_path):
    """Two `mirix eval locomo` reports (context 0 and 1) on one ingestion, then the choice by fold."""
    reports = []
    for n in (0, 1):
        run = subprocess.run([sys.executable, "-m", "mirix_py.cli", "eval", "locomo", "--data", str(MINI),
                              "--out", str(tmp_path / f"c{n}"), "--cache-dir", str(tmp_path / "cache"),
                              "--budget-words", "100", "--context", str(n), "--no-baselines"],
                             capture_output=True, text=True, timeout=600, cwd=tmp_path,
                             env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        assert run.returncode == 0, run.stderr[-2000:]
        reports.append(str(tmp_path / f"c{n}" / "locomo_eval.json"))
    out = tmp_path / "loo.json"
    stdout = run_benchmark("locomo_context_loo.py", *reports, "--out", str(out), "--markdown",
                           str(tmp_path / "loo.md"), tmp_path=tmp_path)
    result = json.loads(out.read_text())
    assert result["budget_words"] == 100 and list(result["by_limit"]) and stdout.strip()
    assert (tmp_path / "loo.md").read_text().startswith("## limit")


def test_local_model_paired(tmp_path):
    """The comparison of two stores read again from committed results (no server needed)."""
    results = REPO / "benchmarks" / "results"
    files = [str(results / f"local_model_functions_{conv}_keys_e54a5a6.json") for conv in ("conv30", "conv42")]
    out = tmp_path / "paired.json"
    stdout = run_benchmark("local_model_paired.py", "--pooled", *files, "--out", str(out), tmp_path=tmp_path)
    assert "pooled, model answerer, f1:" in stdout
    figures = json.loads(out.read_text())
    rows = {f: json.loads(Path(f).read_text())["scores_model_answerer"]["llm"]["rows"] for f in files}
    for f in files:
        f1 = figures[f]["model answerer"]["f1"]
        assert f1["questions"] == len(rows[f]) and f1["low"] <= f1["mean"] <= f1["high"]
    assert figures["pooled"]["model answerer"]["f1"]["questions"] == sum(len(r) for r in rows.values())


def test_reader_contexts(tmp_path):
    out = tmp_path / "readers.json"
    stdout = run_benchmark("reader_contexts.py", str(MINI), "--cache-dir", str(tmp_path / "a"), "--items", "2", "5",
                           "--out", str(out), tmp_path=tmp_path)
    assert "type by type (before)" in stdout
    result = json.loads(out.read_text())
    assert result["benchmark"] == "reader_contexts" and set(result["runs"]) == {"2", "5"}
    for run in result["runs"].values():
        assert set(run) == {"context", "search", "type by type (before)", "offline chat's answer",
                            "offline answer, core lines first (before)"}
        for name, path in run.items():
            assert finite(path["evidence_recall"]) and finite(path["ms_p95"])
            assert path["hits"] > 0 or "offline" in name  # an offline answer may match nothing in a tiny file
            assert set(path["per_conversation"]) == {"mini-1", "mini-2"}
