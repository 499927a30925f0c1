"""`mirix eval locomo`: ingest a LoCoMo file, retrieve for every question, score, and keep it all.

One run scores the engine beside raw-turn baselines (BM25, MiniLM cosine, RRF of both) inside the
same word budget, on the same questions:
- offline (no model): evidence recall and answer-token recall of the context that fits the budget;
- llm: also answers — the engine's `chat` (topics, coarse retrieval, targeted search), and the same
  answer model reading the RRF baseline's context and the full conversation — scored by LoCoMo's F1,
  BLEU-1 and an LLM judge, with context tokens, latency, calls and tokens.

Questions of categories 1-4 with evidence are scored; category 5 (adversarial) is reported apart.
`questions=N` runs a seeded slice of them instead (see `sample_questions`).
Each conversation is ingested into a store of its own by default (`store="per_conversation"`), as
one person's memory is: full-text statistics are a store's (FTS5's bm25() counts the whole table),
so conversations sharing a store weigh each other's words, which no single user's store does.
Ingestion is cached (see `mirix_py.eval.cache`): re-scoring reads the same data directory.
"""

from __future__ import annotations

import asyncio
import math
import platform
import random
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, Field, field_validator, model_validator

from mirix_py.eval.cache import (
    default_cache_dir, mark_complete, open_cached_dir, open_for_ingestion, store_outside,
)
from mirix_py.eval.locomo import (
    BASELINE_NAMES, CATEGORY_NAMES, ENGINE_RRF_K, SCORED_CATEGORIES, Conversation, EvidenceReport, Question,
    RawTurnBaselines, evidence_recall, file_digest, full_context_words, ingest_conversation, load_locomo,
    shown_within,
)
from mirix_py.eval.metrics import (
    answer_token_recall, bleu1, locomo_f1, mean, percentile, scoring_gold, strip_citations,
)
from mirix_py.settings import SEARCH_CONTEXT
from mirix_py.text.by_day import day_lines
from mirix_py.text.words import word_count

Progress = Callable[..., None]  # (stage, done, total, note="")  see mirix_py.eval.progress
ENGINE = "engine"
FULL_CONTEXT = "full context"


class LocomoEvalConfig(BaseModel):
    """Everything that determines a run; written into its report."""

    data: Path
    mode: Literal["offline", "llm"] = "offline"
    ingest_mode: Literal["offline", "llm"] | None = Field(
        default=None, description="How memories are built; defaults to `mode` (llm: the agents, offline: the rules).")
    budget_words: int = Field(default=750, gt=0)
    curve_budgets: list[int] = Field(default_factory=lambda: [100, 250, 500, 750, 1000, 1500, 2000])
    conversations: int | None = Field(default=None, gt=0, description="Only the first N conversations.")
    limit: int = Field(default=60, gt=0, description="Engine hits fetched per question.")
    method: Literal["hybrid", "bm25", "embedding", "string"] = "hybrid"
    context: int = Field(default=SEARCH_CONTEXT, ge=0, description=(
        "Engine search `context`: the turns around the first N matches. The default is the engine's own "
        "(`Settings.search_context`), so the run measures what `Mirix.search` gives."))
    embedder: str = "minilm"
    baselines: bool = True
    answer_baselines: list[Literal["rrf", "full-context"]] = Field(default_factory=lambda: ["rrf", "full-context"])  # type: ignore[arg-type]  # pydantic checks it
    llm_model: str | None = None
    judge_model: str | None = None
    seed: int = Field(default=0, description="Sent, with temperature 0, on the judge's and the answer baselines' "
                      "calls to OpenAI-compatible clients, and seeds the `questions` sample; nothing else in a run "
                      "is random.")
    questions: int | None = Field(default=None, gt=0, description=(
        "Only a seeded sample of N scored questions (categories 1-4), spread over the categories in proportion "
        "to their sizes with at least one each; category-5 questions are added at the same rate, reported apart."))
    store: Literal["per_conversation", "shared"] = Field(default="per_conversation", description=(
        "per_conversation: each conversation in a store of its own, one user, as a person's memory is; shared: "
        "every conversation in one store, a user each (on SQLite their words then weigh each other's)."))
    cache_dir: Path = Field(default_factory=lambda: default_cache_dir("locomo"))
    fresh: bool = False

    @field_validator("curve_budgets")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        if any(b <= 0 for b in v):
            raise ValueError("budgets must be positive word counts")
        return sorted(set(v))

    @model_validator(mode="after")
    def _main_budget_on_curve(self) -> "LocomoEvalConfig":
        if self.budget_words not in self.curve_budgets:
            self.curve_budgets = sorted({*self.curve_budgets, self.budget_words})
        if self.ingest_mode is None:
            self.ingest_mode = self.mode
        return self


# --------------------------------------------------------------------------- retrieval records


class Hit(BaseModel):
    id: str  # memory id for the engine, dia_id for raw turns
    score: float
    text: str
    source_ids: list[str]


def kept_hits(hits: Sequence[Hit], budget_words: int) -> list[Hit]:
    """The prefix of the ranking a reader's context holds within the budget (`locomo.shown_within`)."""
    return list(hits[: shown_within([h.text for h in hits], budget_words)])


def context_scores(question: Question, hits: Sequence[Hit], budget_words: int) -> dict[str, Any]:
    """Evidence recall, answer-token recall and words of the context that fits the budget, as a reader
    is shown it (dated hits under their day)."""
    kept = kept_hits(hits, budget_words)
    sources = {s for h in kept for s in h.source_ids}
    context = "\n".join(day_lines([h.text for h in kept]))
    token_recall = (answer_token_recall(scoring_gold(question.answer, question.category), context)
                    if question.category in SCORED_CATEGORIES else math.nan)
    return {"evidence_recall": evidence_recall(question.evidence, sources), "answer_token_recall": token_recall,
            "words": word_count(context), "kept": len(kept)}


def question_key(q: Question) -> str:
    return f"{q.conversation_id}#{q.index}"


def selected_questions(convs: Sequence[Conversation]) -> list[tuple[Conversation, Question]]:
    """Questions with evidence, categories 1-5 (categories 1-4 are scored, 5 reported apart)."""
    return [(c, q) for c in convs for q in c.questions if q.evidence and q.category in CATEGORY_NAMES]


SAMPLE_METHOD = ("proportional per category (largest remainder; one question from each category 1-4 present "
                 "first, largest categories first while N allows), category 5 at the same rate; within a category "
                 "a shuffle seeded by (seed, category)")


def allocate_proportional(n: int, sizes: dict[int, int]) -> dict[int, int]:
    """Split `n` over categories of the given sizes: at least one each (while `n` allows, largest categories
    first), the rest in proportion to what each has left, by largest remainder (ties: lower category).

    Never more than a category holds; everything when `n` covers it all.
    """
    sizes = {c: k for c, k in sizes.items() if k > 0}
    if n >= sum(sizes.values()):
        return dict(sizes)
    take = {c: 0 for c in sizes}
    for c in sorted(sizes, key=lambda c: (-sizes[c], c))[:n]:
        take[c] = 1
    rest = n - sum(take.values())
    capacity = {c: sizes[c] - take[c] for c in sizes}
    total = sum(capacity.values())
    if rest > 0 and total > 0:
        for c in sizes:
            take[c] += rest * capacity[c] // total
        left = n - sum(take.values())
        by_remainder = sorted(sizes, key=lambda c: (-(rest * capacity[c] % total), c))
        for c in by_remainder[:left]:
            take[c] += 1
    return take


def sample_questions(questions: Sequence[tuple[Conversation, Question]], n: int,
                     seed: int) -> tuple[list[tuple[Conversation, Question]], dict[str, Any]]:
    """A deterministic slice: `n` questions of categories 1-4 (all of them when `n` is larger), spread over
    the categories by `allocate_proportional`; category-5 questions at the same rate (rounded half up).

    Within a category the questions are shuffled by a generator seeded with (seed, category), and the
    first ones taken: for one seed, a category's larger share keeps every question of a smaller one. The
    slice keeps the file's order. Returns the slice and a description of it for the report.
    """
    by_cat: dict[int, list[tuple[Conversation, Question]]] = defaultdict(list)
    for cq in questions:
        by_cat[cq[1].category].append(cq)
    take = allocate_proportional(n, {c: len(by_cat[c]) for c in SCORED_CATEGORIES})
    available = sum(len(by_cat[c]) for c in SCORED_CATEGORIES)
    chosen_scored = sum(take.values())
    extra = [c for c in sorted(by_cat) if c not in SCORED_CATEGORIES]
    for c in extra:  # category 5: same rate as the scored ones
        take[c] = (2 * len(by_cat[c]) * chosen_scored + available) // (2 * available) if available else 0
    keys: set[str] = set()
    for c, k in take.items():
        pool = list(by_cat[c])
        random.Random(f"locomo-sample:{seed}:{c}").shuffle(pool)
        keys.update(question_key(q) for _, q in pool[:k])
    picked = [(c, q) for c, q in questions if question_key(q) in keys]
    counts = Counter(q.category for _, q in picked)
    info = {"requested": n, "selected_1_4": chosen_scored, "selected": len(picked),
            "available_1_4": available, "available": len(questions), "seed": seed, "method": SAMPLE_METHOD,
            "by_category": {str(c): counts[c] for c in sorted(by_cat)},
            "available_by_category": {str(c): len(by_cat[c]) for c in sorted(by_cat)}}
    return picked, info


# --------------------------------------------------------------------------- aggregation (pure)


def summarize(rows: Sequence[dict[str, Any]], metrics: Sequence[str]) -> dict[str, Any]:
    """Per category and overall (1-4) means of `metrics` over question rows with `category`, with counts.

    NaN values (e.g. a gold answer with no content word) are left out of a mean, and the count of
    values behind each mean is reported as `n_<metric>`.
    """
    def block(group: Sequence[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(group)}
        for m in metrics:
            values = [float(r[m]) for r in group if r.get(m) is not None and not math.isnan(float(r[m]))]
            out[m] = mean(values)
            out[f"n_{m}"] = len(values)
        return out

    by_cat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r)
    return {"overall_1_4": block([r for r in rows if r["category"] in SCORED_CATEGORIES]),
            "by_category": {str(c): block(g) for c, g in sorted(by_cat.items())}}


def per_conversation(rows: Sequence[dict[str, Any]], systems: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per system, per conversation: the categories 1-4 means of evidence and answer-token recall, so a
    gain can be seen to hold in every conversation and not only in the mean."""
    convs = list(dict.fromkeys(r["conversation"] for r in rows))
    return {name: {c: summarize([{"category": r["category"], **r["systems"][name]} for r in rows
                                 if r["conversation"] == c], ["evidence_recall", "answer_token_recall"])["overall_1_4"]
                   for c in convs} for name in systems}


# --------------------------------------------------------------------------- the run


def _engine_hits(mx: Any, conv: Conversation, q: Question, config: LocomoEvalConfig) -> list[Hit]:
    found = mx.search(q.question, user_id=conv.user_id, limit=config.limit, method=config.method,
                      context=config.context)
    return [Hit(id=h.memory.id, score=float(h.score), text=h.text, source_ids=list(h.memory.source_ids))
            for h in found]


def _baseline_hits(baselines: RawTurnBaselines, method: str, conv: Conversation, q: Question) -> list[Hit]:
    turns = baselines.turns(conv)
    return [Hit(id=turns[i].dia_id, score=float(s), text=turns[i].document, source_ids=[turns[i].dia_id])
            for i, s in baselines.scored_ranking(method, conv, q)]


def dated_context(conv: Conversation, dia_ids: Sequence[str] | None = None) -> str:
    """Turns as the answer model reads them: "[8 May 2023, 1:56 pm] Speaker: text", in conversation order.

    With `dia_ids`, only those turns (in the order given); without, the whole conversation.
    """
    dated = {t.dia_id: (s.date, t) for s in conv.sessions for t in s.turns}
    order = list(dia_ids) if dia_ids is not None else list(dated)
    lines = []
    for dia_id in order:
        if dia_id in dated:
            when, turn = dated[dia_id]
            lines.append(f"[{when.strftime('%-d %B %Y, %-I:%M %p')}] {turn.document}")
    return "\n".join(lines)


def memories_by_user(mx: Any, convs: Sequence[Conversation]) -> dict[str, int]:
    """How many memories the store holds for each conversation's user."""
    return {c.user_id: sum(mx.store.count(user_id=c.user_id).values()) for c in convs}


def refuse_held_users(mx: Any, convs: Sequence[Conversation]) -> None:
    """Before an ingestion: an outside database that already holds these users' memories would mix
    them with the new ones."""
    held = [u for u, n in memories_by_user(mx, convs).items() if n]
    if held:
        raise RuntimeError(f"the store already holds memories for {held[:3]}: "
                           "give a database that holds none of these conversations' users")


def check_reused_store(mx: Any, convs: Sequence[Conversation], info: Mapping[str, Any]) -> None:
    """A reused ingestion's store must still hold what the ingestion left (an outside database can be
    emptied or written to between runs); searching anything else would score a store nobody ingested."""
    expected = info.get("memories_by_user")
    held = memories_by_user(mx, convs)
    if expected is None:  # a marker written before the count was kept: at least every user has memories
        missing = [u for u, n in held.items() if n == 0]
        if missing:
            raise RuntimeError(f"the cached ingestion's store holds no memories for {missing[:3]}: it changed since "
                               "it was ingested; run again with --fresh on an empty database")
    elif held != expected:
        raise RuntimeError(f"the cached ingestion's store holds {sum(held.values())} memories where the ingestion "
                           f"left {sum(expected.values())}: it changed since; run again with --fresh on an empty database")


def open_engine(config: LocomoEvalConfig, convs: Sequence[Conversation], *, embedder: Any, model_client: Any,
                progress: Progress | None = None) -> tuple[Any, dict[str, Any]]:
    """The engine on a cached data dir, ingesting (one `add` per session) when the cache has none."""
    from mirix_py.engine import Mirix
    from mirix_py.settings import Settings

    parts: dict[str, Any] = {"data": file_digest(config.data), "conversations": [c.sample_id for c in convs],
                             "embedder": config.embedder, "ingest_mode": config.ingest_mode,
                             "model": config.llm_model if config.ingest_mode == "llm" else None}
    settings = Settings.from_env()
    if (outside := store_outside(settings)) is not None:
        parts["store"] = outside
    if (zone := settings.timezone) is not None:  # the memories' days are reckoned in it
        parts["timezone"] = zone
    cached = open_cached_dir(config.cache_dir, "locomo", parts, fresh=config.fresh)
    ingest_client = model_client if config.ingest_mode == "llm" else None
    info: dict[str, Any] = {"data_dir": str(cached.path), "cache_reused": cached.reused}
    if cached.reused:
        info.update(cached.info)
    else:
        mx = open_for_ingestion(cached.path, lambda: Mirix(cached.path, embedder=embedder, model_client=ingest_client),
                                lambda opened: refuse_held_users(opened, convs))
        try:
            started = time.perf_counter()
            total = sum(len(c.sessions) for c in convs)
            stats = None
            if progress:
                progress("ingest sessions", 0, total, f"{config.ingest_mode} ingestion, {len(convs)} conversations")
            for conv in convs:
                def on_session(session: Any, st: Any, result: Any, conv: Conversation = conv) -> None:
                    if progress:
                        progress("ingest sessions", st.sessions, total, session_note(conv, session, result))

                stats = ingest_conversation(mx, conv, stats=stats, on_session=on_session)
            assert stats is not None
            if stats.failed_sessions:
                raise RuntimeError(f"ingestion failed for {len(stats.failed_sessions)} sessions: "
                                   f"{stats.failed_sessions[:3]}")
            done = {"ingest_seconds": round(time.perf_counter() - started, 2), "sessions": stats.sessions,
                    "turns": stats.turns, "ingested_at": datetime.now(timezone.utc).isoformat(),
                    "memories_by_user": memories_by_user(mx, convs)}
            if ingest_client is not None:
                done["ingest_llm_usage"] = usage_of(mx, convs)
        finally:
            mx.close()
        mark_complete(cached, done)
        info.update(done)
    mx = Mirix(cached.path, embedder=embedder, model_client=model_client if config.mode == "llm" else None)
    if cached.reused:
        try:
            check_reused_store(mx, convs, cached.info)
        except RuntimeError:
            mx.close()
            raise
    by_type: Counter[str] = Counter()
    for conv in convs:  # these conversations' users only: an outside database may hold other stores' users
        by_type.update(mx.store.count(user_id=conv.user_id))
    info["memories"] = dict(sorted(by_type.items()))
    described = mx.describe()  # which layout the figures are of (an outside store has its own cache key)
    info["layout"] = {k: described.get(k) for k in ("database", "vectors", "embedder", "search", "whole_hits",
                                                    "fact_parser")}
    return mx, info


def usage_of(mx: Any, convs: Sequence[Conversation]) -> dict[str, dict[str, float]]:
    """The model usage recorded for these conversations' users, summed per kind of run."""
    return summed_usage([mx.store.usage_totals(user_id=c.user_id) for c in convs])


def summed_usage(parts: Sequence[Mapping[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    total: dict[str, dict[str, float]] = {}
    for part in parts:
        for kind, figures in part.items():
            into = total.setdefault(kind, {})
            for name, value in figures.items():
                into[name] = round(into.get(name, 0) + value, 3)
    return total


def open_engines(config: LocomoEvalConfig, convs: Sequence[Conversation], *, embedder: Any, model_client: Any,
                 progress: Progress | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each conversation's user -> the engine holding it (`config.store`), and what the ingestion was.
    On a database (`MIRIX_DATABASE_URL`) the conversations share one engine and data dir whatever
    `config.store` says: engines on one database must share its vault key and vector index (others are
    refused at open), and its full-text statistics are each user's already, as a store each gives them."""
    from mirix_py.settings import Settings

    if config.store == "shared" or Settings.from_env().database_url:
        mx, info = open_engine(config, convs, embedder=embedder, model_client=model_client, progress=progress)
        return {c.user_id: mx for c in convs}, {"store": "shared", **info}
    engines: dict[str, Any] = {}
    infos: dict[str, dict[str, Any]] = {}
    total = sum(len(c.sessions) for c in convs)
    before = 0
    try:
        for conv in convs:
            engines[conv.user_id], infos[conv.sample_id] = open_engine(
                config, [conv], embedder=embedder, model_client=model_client,
                progress=counted_on(progress, before, total, f"{config.ingest_mode} ingestion, {len(convs)} "
                                    "conversations, a store each"))
            before += len(conv.sessions)
    except BaseException:
        for mx in engines.values():
            mx.close()
        raise
    return engines, per_conversation_info(list(infos.values()), [c.sample_id for c in convs])


def counted_on(progress: Progress | None, before: int, total: int, start_note: str) -> Progress | None:
    """One conversation's ingestion progress as a part of all of them: its sessions counted after the
    `before` ingested already, out of `total` (the first one's start, noted `start_note`, is the only
    start line)."""
    if progress is None:
        return None

    def report(stage: str, done: int, of: int, note: str = "") -> None:
        if stage != "ingest sessions":
            progress(stage, done, of, note)
        elif done:
            progress(stage, before + done, total, note)
        elif not before:
            progress(stage, 0, total, start_note)
    return report


def per_conversation_info(infos: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """One engine record for the stores of several conversations: their dirs, sums and layout."""
    memories: Counter[str] = Counter()
    for info in infos:
        memories.update(info.get("memories") or {})
    seconds: list[float | None] = [info.get("ingest_seconds") for info in infos]
    return {"store": "per_conversation", "data_dirs": dict(zip(names, (i["data_dir"] for i in infos))),
            "cache_reused": all(i.get("cache_reused") for i in infos),
            "ingest_seconds": round(sum(s for s in seconds if s is not None), 2) if None not in seconds else None,
            "sessions": sum(i.get("sessions") or 0 for i in infos), "turns": sum(i.get("turns") or 0 for i in infos),
            "memories_by_user": {u: n for i in infos for u, n in (i.get("memories_by_user") or {}).items()},
            "memories": dict(sorted(memories.items())), "layout": infos[0].get("layout") if infos else None,
            **({"ingest_llm_usage": summed_usage([i["ingest_llm_usage"] for i in infos if "ingest_llm_usage" in i])}
               if any("ingest_llm_usage" in i for i in infos) else {})}


def close_engines(engines: Mapping[str, Any]) -> None:
    for mx in {id(mx): mx for mx in engines.values()}.values():
        mx.close()


def session_note(conv: Conversation, session: Any, result: Any) -> str:
    """One ingested session for a progress line: its id, turns, and what the engine made of it."""
    note = f"{conv.sample_id}/session_{session.number}: {len(session.turns)} turns"
    status = getattr(result, "status", None)
    if status is not None:
        note += f", {getattr(status, 'value', status)}"
    changes = getattr(result, "changes", None)
    if changes is not None:
        note += f", {len(changes)} changes"
    calls = getattr(getattr(result, "usage", None), "llm_calls", 0)
    if calls:
        note += f", {calls} LLM calls"
    if getattr(result, "error", None):
        note += f", error: {str(result.error)[:160]}"
    return note


def answer_note(row: dict[str, Any]) -> str:
    """One answered question for a progress line: its id, category, and each reader's F1 and verdict."""
    parts = []
    for reader, got in row.get("answers", {}).items():
        f1 = got.get("f1")
        part = f"{reader} F1 {f1:.2f}" if isinstance(f1, float) and not math.isnan(f1) else f"{reader} F1 -"
        if got.get("judge"):
            part += f" {got['judge']}"
        parts.append(part)
    return f"{row['id']} cat {row['category']}: " + ", ".join(parts)


def run_locomo(config: LocomoEvalConfig, *, embedder: Any = None, model_client: Any = None,
               judge_client: Any = None, progress: Progress | None = None) -> dict[str, Any]:
    """Run the whole evaluation and return the report as a JSON-ready dict (see `report.py` for files)."""
    if config.mode == "llm" and model_client is None:
        raise ValueError("--mode llm needs a model: set MIRIX_LLM_PROVIDER and MIRIX_LLM_MODEL (see the README)")
    if config.ingest_mode == "llm" and model_client is None:
        raise ValueError("an LLM ingestion needs a model: set MIRIX_LLM_PROVIDER and MIRIX_LLM_MODEL")
    started = time.perf_counter()
    evidence = EvidenceReport()
    convs = load_locomo(config.data, evidence)
    if config.conversations:
        convs = convs[: config.conversations]
    if not convs:
        raise ValueError(f"{config.data} holds no conversation")
    questions = selected_questions(convs)
    sample_info: dict[str, Any] | None = None
    if config.questions is not None:
        questions, sample_info = sample_questions(questions, config.questions, config.seed)

    engines, engine_info = open_engines(config, convs, embedder=embedder, model_client=model_client, progress=progress)
    try:
        retrieved: dict[str, dict[str, list[Hit]]] = defaultdict(dict)
        seconds: dict[str, dict[str, float]] = defaultdict(dict)
        if progress:
            progress("engine searches", 0, len(questions))
        for i, (conv, q) in enumerate(questions):
            t0 = time.perf_counter()
            retrieved[ENGINE][question_key(q)] = _engine_hits(engines[conv.user_id], conv, q, config)
            seconds[ENGINE][question_key(q)] = time.perf_counter() - t0
            if progress:
                progress("engine searches", i + 1, len(questions))
        baseline_info: dict[str, Any] = {}
        baselines = None
        if config.baselines:
            t0 = time.perf_counter()
            embedder_in_use = next(iter(engines.values())).store.embedder
            baselines = RawTurnBaselines(convs, embedder_in_use)
            methods = [m for m in RawTurnBaselines.METHODS if m == "bm25" or embedder_in_use is not None]
            for method in methods:
                for conv, q in questions:
                    retrieved[BASELINE_NAMES[method]][question_key(q)] = _baseline_hits(baselines, method, conv, q)
            baseline_info = {"methods": [BASELINE_NAMES[m] for m in methods], "document": "Speaker: text",
                             "bm25": "Okapi k1=1.5 b=0.75, rank_bm25's idf, lowercase [a-z0-9]+ tokens",
                             "embedding": config.embedder, "rrf_k": [baselines.rrf_k, ENGINE_RRF_K],
                             "depth": "all turns",
                             "seconds": round(time.perf_counter() - t0, 2)}
        systems = [ENGINE, *baseline_info.get("methods", [])]

        rows = []
        curve_rows: dict[str, dict[int, list[dict[str, Any]]]] = {n: defaultdict(list) for n in systems}
        memory_sources: dict[str, list[str]] = {}
        for conv, q in questions:
            key = question_key(q)
            row: dict[str, Any] = {
                "id": key, "conversation": conv.sample_id, "index": q.index, "category": q.category,
                "question": q.question, "gold": q.answer, "evidence": list(q.evidence), "systems": {},
            }
            for name in systems:
                hits = retrieved[name][key]
                scored = {b: context_scores(q, hits, b) for b in config.curve_budgets}
                for b, values in scored.items():
                    curve_rows[name][b].append({"category": q.category, **values})
                kept = kept_hits(hits, config.budget_words)
                # ids and scores of the kept hits; texts stay out (raw turns are in the data file, memories
                # in the cached data dir) and a memory's source ids are listed once, in `memory_sources`
                entry = {**scored[config.budget_words], "ids": [h.id for h in kept],
                         "scores": [round(h.score, 5) for h in kept]}
                if name == ENGINE:
                    memory_sources.update({h.id: h.source_ids for h in kept})
                if name in seconds:
                    entry["search_ms"] = round(1000 * seconds[name][key], 2)
                row["systems"][name] = entry
            rows.append(row)

        answers_info: dict[str, Any] = {}
        if config.mode == "llm":
            answers_info = _answer_and_judge(engines, convs, questions, rows, retrieved, config, model_client,
                                             judge_client or model_client, progress)
    finally:
        close_engines(engines)

    counts = Counter(q.category for _, q in questions)
    report = {
        "kind": "locomo",
        "config": config.model_dump(mode="json"),
        "environment": {"python": platform.python_version(), "machine": platform.machine(),
                        "system": platform.system(), "engine_mode": config.mode},
        "data": {"path": str(config.data), "sha256_16": file_digest(config.data),
                 "conversations": [c.sample_id for c in convs], "turns": sum(len(c.turns) for c in convs),
                 "sessions": sum(len(c.sessions) for c in convs),
                 "questions": sum(len(c.questions) for c in convs),
                 "scored_questions_by_category": {str(k): counts[k] for k in sorted(counts)},
                 "sample": sample_info,
                 "full_context_words": [full_context_words(c) for c in convs],
                 "evidence": evidence.as_dict()},
        "engine": engine_info,
        "baselines": baseline_info,
        "systems": systems,
        "summary": {name: summarize([{"category": r["category"], **r["systems"][name]} for r in rows],
                                    ["evidence_recall", "answer_token_recall", "words", "search_ms"])
                    for name in systems},
        "per_conversation": per_conversation(rows, systems),
        "curve": {name: {str(b): summarize(curve_rows[name][b], ["evidence_recall", "answer_token_recall"])["overall_1_4"]
                         for b in config.curve_budgets} for name in systems},
        "answers": answers_info,
        "questions": rows,
        "memory_sources": memory_sources,
        "seconds": round(time.perf_counter() - started, 2),
        "finished_at": datetime.now(timezone.utc).isoformat(),
    }
    return report


def _answer_and_judge(engines: Mapping[str, Any], convs: Sequence[Conversation], questions: Sequence[tuple[Conversation, Question]],
                      rows: list[dict[str, Any]], retrieved: dict[str, dict[str, list[Hit]]],
                      config: LocomoEvalConfig, answer_client: Any, judge_client: Any,
                      progress: Progress | None) -> dict[str, Any]:
    """LLM mode: answers from the engine's chat and the answer baselines, each scored and judged."""
    from mirix_py.eval.judge import QUESTION_SUFFIX, answer_from_context, judge

    loop = asyncio.new_event_loop()
    try:
        readers = ["engine chat"]
        if "rrf" in config.answer_baselines and BASELINE_NAMES["rrf"] in retrieved:
            readers.append(BASELINE_NAMES["rrf"])
        if "full-context" in config.answer_baselines:
            readers.append(FULL_CONTEXT)
        by_key = {r["id"]: r for r in rows}
        if progress:
            progress("answers", 0, len(questions), "readers: " + ", ".join(readers))
        for i, (conv, q) in enumerate(questions):
            row = by_key[question_key(q)]
            row["answers"] = {}
            for reader in readers:
                if reader == "engine chat":
                    t0 = time.perf_counter()
                    response = engines[conv.user_id].chat(q.question + QUESTION_SUFFIX, user_id=conv.user_id, remember=False)
                    got = {"answer": response.answer, "seconds": time.perf_counter() - t0,
                           "llm_calls": response.usage.llm_calls, "prompt_tokens": response.usage.prompt_tokens,
                           "completion_tokens": response.usage.completion_tokens,
                           "retrieved_ids": response.retrieved_ids, "cited_ids": response.memory_ids}
                else:
                    if reader == FULL_CONTEXT:
                        context = dated_context(conv)
                    else:
                        context = dated_context(conv, row["systems"][reader]["ids"])
                    result = loop.run_until_complete(
                        answer_from_context(answer_client, q.question + QUESTION_SUFFIX, context, seed=config.seed))
                    got = {"answer": result.answer, "seconds": result.seconds, "llm_calls": result.llm_calls,
                           "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                           "context_words": word_count(context)}
                answer = strip_citations(got["answer"])
                got["f1"] = locomo_f1(answer, q.answer, q.category)
                if q.category in SCORED_CATEGORIES:
                    got["bleu1"] = bleu1(answer, scoring_gold(q.answer, q.category))
                    verdict = loop.run_until_complete(judge(judge_client, q.question, q.answer, answer, seed=config.seed))
                    got.update(judge=verdict.label, judge_correct=1.0 if verdict.correct else 0.0,
                               judge_reasoning=verdict.reasoning, judge_prompt_tokens=verdict.prompt_tokens,
                               judge_completion_tokens=verdict.completion_tokens)
                row["answers"][reader] = got
            if progress:
                progress("answers", i + 1, len(questions), answer_note(row))
    finally:
        loop.close()

    summary: dict[str, Any] = {}
    for reader in readers:
        flat = [{"category": r["category"], **r["answers"][reader]} for r in rows]
        block = summarize(flat, ["judge_correct", "f1", "bleu1", "prompt_tokens", "llm_calls"])
        scored = [f for f in flat if f["category"] in SCORED_CATEGORIES]
        block["latency_p50_s"] = percentile([f["seconds"] for f in scored], 50)
        block["latency_p95_s"] = percentile([f["seconds"] for f in scored], 95)
        block["llm_calls_total"] = sum(f["llm_calls"] for f in flat)
        block["tokens_total"] = sum(f["prompt_tokens"] + f["completion_tokens"] for f in flat)
        block["judge_tokens_total"] = sum(f.get("judge_prompt_tokens", 0) + f.get("judge_completion_tokens", 0)
                                          for f in flat)
        block["judge_invalid"] = sum(1 for f in flat if f.get("judge") == "INVALID")
        summary[reader] = block
    return {"readers": readers, "summary": summary,
            "answer_model": config.llm_model, "judge_model": config.judge_model or config.llm_model}
