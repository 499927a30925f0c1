"""The run: ingest (or reuse) the session, ask every question of the engine and of the baselines,
score, summarise, and write the JSON, Markdown and plot (`report.py`)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable

from mirix_py.text.passages import focus
from mirix_py.eval.cache import default_cache_dir
from mirix_py.eval.judge import answer_from_context
from mirix_py.eval.report import jsonable
from mirix_py.eval.screenshot_qa.ingestion import (
    _DEFAULT, Progress, ScreenshotQAConfig, _no_progress, _offline_settings, check_reused_store, ingest_cached,
    resolve_embedder,
)
from mirix_py.eval.screenshot_qa.questions import FAMILIES, QAItem, generate_questions
from mirix_py.eval.screenshot_qa.report import plot_families, render_markdown
from mirix_py.eval.screenshot_qa.retrieval import BaselineIndex, engine_hits, keep_within
from mirix_py.eval.screenshot_qa.scoring import score_item, summarize

__all__ = ["ANSWER_SYSTEM", "QUESTION_SUFFIX", "Judge", "run_benchmark"]

ANSWER_SYSTEM = """# agent: answerer
You answer a question about what was on a user's computer screen, from the screen text below only
(OCR of screenshots, so expect small recognition errors). Answer with a short phrase. If the screen
text does not contain the answer, reply exactly: Not present in the screenshots.

Screen text:
{context}"""

QUESTION_SUFFIX = ("\n\nAnswer with a short phrase. If it is not in memory, reply exactly: "
                   "Not present in the screenshots.")

Judge = Callable[[Any, str, str, str], Awaitable[Any]]


def _judged(result: Any) -> tuple[bool, str, str]:
    if isinstance(result, bool):
        return result, "CORRECT" if result else "WRONG", ""
    correct = bool(getattr(result, "correct", False))
    return correct, str(getattr(result, "label", "CORRECT" if correct else "WRONG")), str(getattr(result, "reasoning", ""))



def run_benchmark(config: ScreenshotQAConfig, out_dir: str | Path, cache_dir: str | Path | None = None, *,
        embedder: Any = _DEFAULT, model_client: Any = None, judge: Judge | None = None, judge_client: Any = None,
        fresh: bool = False, progress: Progress | None = None) -> dict[str, Any]:
    """Ingest (or reuse) the session, ask every question of the engine and of the baseline, score,
    and write screenshot_qa.json, screenshot_qa.md and screenshot_qa_families.png into `out_dir`."""
    config.validate()
    if config.mode == "llm" and (model_client is None or judge is None):
        raise ValueError("LLM mode needs a model client (the answer model) and a judge")
    progress = progress or _no_progress
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir("screenshot_qa")
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    embedder = resolve_embedder(embedder)
    data_dir, info, manifest = ingest_cached(config, cache, embedder=embedder, fresh=fresh, progress=progress)
    questions = generate_questions(manifest)
    docs = json.loads((data_dir.parent / "baseline_docs.json").read_text(encoding="utf-8"))
    baseline = BaselineIndex([tuple(d) for d in docs])

    from mirix_py.engine import Mirix

    settings = _offline_settings(data_dir)
    llm = config.mode == "llm"
    mx = Mirix(settings=settings, model_client=model_client if llm else None, resume=False, embedder=embedder)
    judge_client = judge_client or model_client
    rows: list[dict[str, Any]] = []
    now = datetime.now(timezone.utc)
    try:
        if info.get("reused"):
            check_reused_store(mx, config.user_id, info)
        advance = progress("asking questions", len(questions))
        for item in questions:
            row: dict[str, Any] = item.as_dict()
            t0 = time.perf_counter()
            hits, extra = engine_hits(mx, config.user_id, item.question, limit=config.search_limit, now=now)
            engine_ms = 1000 * (time.perf_counter() - t0)
            t0 = time.perf_counter()
            base_hits = baseline.hits(item.question, limit=config.search_limit)
            base_ms = 1000 * (time.perf_counter() - t0)
            # the same raw frames cut the way the engine's prompts cut long memories (`text.passages.focus`)
            focused = [(focus(t, item.question), ids, i) for t, ids, i in base_hits]
            for system, ranked, ms in (("engine", hits, engine_ms), ("baseline", base_hits, base_ms),
                                       ("baseline_focus", focused, base_ms)):
                kept = keep_within(ranked, config.budget_words)
                sc = score_item(item, [(t, s) for t, s, _ in kept])
                row[system] = {
                    "score": sc.score, "partial": sc.partial, "evidence": sc.evidence,
                    "first_mention": sc.first_mention, "words": sc.words, "ms": round(ms, 2),
                    "retrieved_ids": [i for _, _, i in ranked], "kept_ids": [i for _, _, i in kept],
                    "kept_sources": sorted({s for _, ss, _ in kept for s in ss}),
                    "kept_texts": [t for t, _, _ in kept],
                }
            row["engine"].update(extra)
            if llm:
                assert judge is not None  # checked above
                _llm_answers(mx, item, row, judge, judge_client, model_client, config)
            rows.append(row)
            advance(1)
    finally:
        mx.close()
    summary = summarize(rows, llm)
    result = {
        "benchmark": "mirix eval screenshots",
        "config": {**asdict(config), "dwell": list(config.dwell), "size": list(config.size),
                   "cache_dir": str(cache), "questions": len(questions),
                   "families": {f: sum(1 for q in questions if q.family == f) for f in FAMILIES},
                   "generator": "mirix_synth.screens.ScreenSynth", "session_frames": len(manifest["frames"]),
                   "session_user": manifest["world"]["user"], "session_project": manifest["world"]["project"]},
        "ingestion": info,
        "summary": summary,
        "questions": rows,
        "seconds": round(time.perf_counter() - started, 2),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    (out / "screenshot_qa.json").write_text(json.dumps(jsonable(result), indent=1, ensure_ascii=False),
                                            encoding="utf-8")
    (out / "screenshot_qa.md").write_text(render_markdown(result), encoding="utf-8")
    plot_families(result, out / "screenshot_qa_families.png")
    return result


def _llm_answers(mx: Any, item: QAItem, row: dict[str, Any], judge: Judge, judge_client: Any, model_client: Any,
                 config: ScreenshotQAConfig) -> None:
    t0 = time.perf_counter()
    reply = mx.chat(item.question + QUESTION_SUFFIX, user_id=config.user_id, remember=False)
    chat_ms = 1000 * (time.perf_counter() - t0)
    correct, label, why = _judged(mx.run_on_model_loop(judge(judge_client, item.question, item.answer, reply.answer)))
    row["engine"].update(answer=reply.answer, answer_ms=round(chat_ms, 1), cited_ids=list(reply.memory_ids),
                         chat_retrieved_ids=list(reply.retrieved_ids), judge=1.0 if correct else 0.0,
                         judge_label=label, judge_reasoning=why)
    context = "\n\n".join(row["baseline"]["kept_texts"])
    t0 = time.perf_counter()
    answer = mx.run_on_model_loop(answer_from_context(model_client, item.question, context,
                                                      system=ANSWER_SYSTEM)).answer
    base_ms = 1000 * (time.perf_counter() - t0)
    correct, label, why = _judged(mx.run_on_model_loop(judge(judge_client, item.question, item.answer, answer)))
    row["baseline"].update(answer=answer, answer_ms=round(base_ms, 1), judge=1.0 if correct else 0.0,
                           judge_label=label, judge_reasoning=why)

