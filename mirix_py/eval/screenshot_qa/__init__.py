"""Screenshot QA: questions about a seeded synthetic desktop session, scored against a raw-OCR baseline.

The session comes from `mirix_synth.screens` (seven apps, facts planted and changed over the days,
each fact with structured values). The modules, in the order a run uses them:

- `ingestion`: the configuration, the session, its offline ingestion into a cached data dir, and
  the raw OCR text of every frame the engine read (the baseline's documents);
- `questions`: six families of questions with gold parts, evidence frames and distractors, built
  from the planted facts' values;
- `retrieval`: what the engine (hybrid search, as the chat flow reads it) and the BM25 baseline
  return for a question, and the prefix that fits the word budget;
- `scoring`: containment of every gold part in the kept context (abstention: no trap value), evidence,
  first mention, and the per-family summary;
- `run`: ties them together (and, in LLM mode, answers from `Mirix.chat` graded by a judge);
- `report`: Markdown and a plot per family.

Offline scoring is containment in the retrieved context: search with the question, keep hits in
rank order while they fit a word budget (750 words as for LoCoMo), normalise case and punctuation,
and count the question answered when every gold part occurs in the context. The same questions and
budget score a baseline: BM25 over the raw OCR text of every frame the engine read, and that
baseline again with each frame cut around the question (`text.passages.focus`), so the gain of the cut
is not counted as the gain of the memory.

    result = run_benchmark(ScreenshotQAConfig(seed=7, days=3), out_dir="out", cache_dir="cache")
"""

from mirix_py.eval.screenshot_qa.ingestion import (
    MODES, ScreenshotQAConfig, baseline_documents, ingest_cached, resolve_embedder, session,
)
from mirix_py.eval.screenshot_qa.questions import FAMILIES, NOT_PRESENT, QAItem, generate_questions
from mirix_py.eval.screenshot_qa.report import plot_families, render_markdown
from mirix_py.eval.screenshot_qa.retrieval import BaselineIndex, engine_hits, keep_within
from mirix_py.eval.screenshot_qa.run import run_benchmark
from mirix_py.eval.screenshot_qa.scoring import (
    ItemScore, abstention_holds, contains, first_mention, normalize, score_item, summarize,
)

__all__ = [
    "FAMILIES", "MODES", "NOT_PRESENT", "BaselineIndex", "ItemScore", "QAItem", "ScreenshotQAConfig",
    "abstention_holds", "baseline_documents", "contains", "engine_hits", "first_mention", "generate_questions",
    "ingest_cached", "keep_within", "normalize", "plot_families", "render_markdown", "resolve_embedder",
    "run_benchmark", "score_item", "session", "summarize",
]
