"""Does the model add? The same LoCoMo turns ingested twice, offline and with a real local model, scored alike.

    bash scripts/local_model.sh provision && bash scripts/local_model.sh start functions
    .venv/bin/python benchmarks/local_model.py --data ../shared/data/locomo/locomo_dev.json \
        --mode functions --url http://127.0.0.1:58082/v1 --sessions 3 --budget 200 --out results.json

Turns of one conversation go in batches of 4 (`--batch-size`), in order, each as one `add` (one
update flow), into an LLM-mode store and into an offline store (the baseline in the same run). Per
batch of the LLM store: processed by the model / degraded (with the reason); calls, prompt tokens
(by part: instructions, tool schemas, listed memories, batch, correction round), seconds, writes and
refused writes. Both stores are then scored on the same questions, those whose evidence lies in the
ingested turns: evidence recall of the context the default search fills within `--budget` words
(counting a turn found by any memory that cites it, and only by its own episode), answer-token recall,
and LoCoMo F1 of the same answerer on both stores (`--answerer offline`: the engine's answer without
a model; `model`: the same model through the chat agent), and the two stores question by question:
each figure's mean difference with its 95% bootstrap interval (`eval.paired`), so a gap of a few
answers is not read as one store being better. And what must hold whatever the model
did: every turn found by its first six words (`string` search) and by its id, no vault value that is
not in the conversation, no completion over its bound, routing compared with the rules'.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import quiet_logs, environment  # noqa: E402

from mirix_py.agents.definitions import load_definitions  # noqa: E402
from mirix_py.agents.offline.managers import prepare_batch, route  # noqa: E402
from mirix_py.engine import Mirix  # noqa: E402
from mirix_py.eval.locomo import load_locomo, shown_within  # noqa: E402
from mirix_py.eval.metrics import answer_token_recall, locomo_f1, scoring_gold, strip_citations  # noqa: E402
from mirix_py.eval.paired import PairedDifference, paired_difference  # noqa: E402
from mirix_py.text.by_day import day_lines  # noqa: E402
from mirix_py.boundary.inputs import normalize_add  # noqa: E402
from mirix_py.llm import build_model_client  # noqa: E402
from mirix_py.llm.metering import Meter, MeteredClient  # noqa: E402
from mirix_py.records import KnowledgeVaultMemory  # noqa: E402
from mirix_py.agents.update_flow import RULES_ACTOR_SUFFIX, VERBATIM_ACTOR  # noqa: E402
from mirix_py.settings import Settings  # noqa: E402
from mirix_py.store.embeddings import load_embedder  # noqa: E402
from mirix_py.store.summaries import TURN_EVENT  # noqa: E402


def model_client(url: str, model: str, function_calling: bool):
    """Built from settings as a user's would be: MIRIX_LLM_PROVIDER=openai, a base URL, the function-calling flag."""
    os.environ["MIRIX_LLM_FUNCTION_CALLING"] = "1" if function_calling else "0"
    return build_model_client(Settings(llm_provider="openai", llm_model=model, llm_base_url=url))


def batches_of(conv, size: int, limit: int, sessions: int | None = None) -> list[list[dict[str, Any]]]:
    from datetime import timedelta

    out: list[list[dict[str, Any]]] = []
    for session in conv.sessions[:sessions]:
        turns = [{"role": "user", "name": t.speaker, "id": t.dia_id, "content": t.content,
                  "occurred_at": session.date + timedelta(seconds=i)} for i, t in enumerate(session.turns)]
        for start in range(0, len(turns), size):
            out.append(turns[start:start + size])
            if len(out) >= limit:
                return out
    return out


def writer_of(actor: str) -> str:
    """Who an actor is: the turns, the rules (written before the model), or the model."""
    return "turns" if actor == VERBATIM_ACTOR else "rules" if actor.endswith(RULES_ACTOR_SUFFIX) else "model"


def writers(mx: Mirix, user_id: str) -> Counter:
    """(memory type, writer) of every memory present, by who inserted it (`writer_of`); core blocks
    by who wrote their lines last."""
    counts: Counter = Counter()
    for memory in mx.list(user_id=user_id, limit=100_000):
        events = mx.history(memory.id, user_id=user_id)
        if memory.memory_type.value == "core":
            counts.update(("core lines", writer_of(e.actor)) for e in events)
        else:
            counts[(memory.memory_type.value, writer_of(events[0].actor))] += 1
    return counts


def model_texts(mx: Mirix, user_id: str) -> list[str]:
    """What the model itself wrote (not the rules), to judge it by reading."""
    out = []
    for memory in mx.list(user_id=user_id, limit=100_000):
        actors = [e.actor for e in mx.history(memory.id, user_id=user_id)]
        if writer_of(actors[0]) == "model" or (memory.memory_type.value == "core"
                                              and any(writer_of(a) == "model" for a in actors)):
            out.append(f"{memory.memory_type.value}: {memory.search_text()[:300]} {memory.source_ids}")
    return out


PARTS = ("system", "tools", "memories", "batch", "correction")
PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit")
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
GENERATION = re.compile(r"^llama_perf_context_print:\s+eval time =\s*([\d.]+) ms /\s*(\d+) runs", re.M)


def server_reading(log: str) -> dict[str, Any]:
    """What a llama-cpp-python server's verbose log says it did: prompt tokens it read, those it kept
    from the previous prompt (`prefix-match hit`), tokens it wrote, and the time of each."""
    evals = [(float(ms), int(n)) for ms, n in PROMPT_EVAL.findall(log)]
    writes = [(float(ms), int(n)) for ms, n in GENERATION.findall(log)]
    read, read_ms = sum(n for _, n in evals), sum(ms for ms, _ in evals)
    written, write_ms = sum(n for _, n in writes), sum(ms for ms, _ in writes)
    return {"calls": len(evals), "prompt_tokens_read": read, "prompt_tokens_reused": sum(map(int, PREFIX_HIT.findall(log))),
            "prompt_seconds": round(read_ms / 1000, 1), "read_tokens_per_s": round(read / read_ms * 1000, 1) if read_ms else None,
            "completion_tokens": written, "completion_seconds": round(write_ms / 1000, 1),
            "write_tokens_per_s": round(written / write_ms * 1000, 1) if write_ms else None}


def run_mode(args, conv, batches, embedder, data_dir: Path) -> dict[str, Any]:
    calls = Meter()
    client = MeteredClient(model_client(args.url, args.model, args.mode == "functions"), calls, "server")
    settings = Settings(data_dir=data_dir, llm_timeout_s=args.timeout, llm_structured_output=args.structured,
                        llm_prompt_order=args.prompt_order, llm_seed=args.model_seed)
    mx = Mirix(settings=settings, embedder=embedder, model_client=client)
    definitions = load_definitions()
    bounds = {d.name: d.model.get("max_tokens") for d in definitions.values()}
    user = conv.user_id
    rows = []
    log = Path(args.server_log) if args.server_log else None
    log_start = log.stat().st_size if log and log.exists() else 0
    started = time.perf_counter()
    for k, batch in enumerate(batches, 1):
        n_calls = len(calls.calls)
        t0 = time.perf_counter()
        result = mx.add(batch, user_id=user)
        seconds = time.perf_counter() - t0
        record = normalize_add(batch, user_id=user, occurred_at=None, source_id=None, kind="text", max_chars=10**6)
        rules_route = sorted(t.value for t in route(prepare_batch(user, [record])))
        new_calls = calls.calls[n_calls:]
        rows.append({
            "batch": k, "turns": [m["id"] for m in batch], "status": result.status.value, "reason": result.error,
            "routed": sorted(t.value for t in result.routed), "rules_routed": rules_route,
            "left_out": sorted(t.value for t in result.left_out),
            "calls": len(new_calls), "prompt_tokens": sum(c.prompt_tokens for c in new_calls),
            "completion_tokens": sum(c.completion_tokens for c in new_calls),
            "max_completion_tokens": max((c.completion_tokens for c in new_calls), default=0),
            "prompt_parts": {p: sum(c.parts.get(p, 0) for c in new_calls) for p in PARTS},
            "seconds": round(seconds, 2), "writes": len(result.changes), "refused": result.rejected,
            "managers_all_refused": all_refused(result.rejected, {c.actor for c in result.changes}),
        })
        print(f"[{args.mode}] batch {k}/{len(batches)} {result.status.value} in {seconds:.1f}s, "
              f"{len(new_calls)} calls, {rows[-1]['prompt_tokens']} prompt tokens, routed {rows[-1]['routed']} "
              f"(rules {rules_route}), {len(result.rejected)} refused"
              + (f" | {result.error[:160]}" if result.error else ""), flush=True)
    wall = time.perf_counter() - started
    statuses = Counter(r["status"] for r in rows)
    agree = sum(r["routed"] == r["rules_routed"] for r in rows if r["status"] == "processed")
    n = len(rows)
    parts_total = {p: sum(r["prompt_parts"][p] for r in rows) for p in PARTS}
    summary = {
        "mode": args.mode, "batches": n, "turns": sum(len(b) for b in batches),
        "processed": statuses["processed"], "degraded": statuses["degraded"], "failed": statuses["failed"],
        "processed_share": round(statuses["processed"] / n, 3),
        "degraded_reasons": Counter(_reason_kind(r["reason"]) for r in rows if r["reason"]).most_common(),
        "calls": len(calls.calls), "calls_per_batch": round(len(calls.calls) / n, 2),
        "prompt_tokens": sum(c.prompt_tokens for c in calls.calls),
        "prompt_tokens_per_batch": round(sum(c.prompt_tokens for c in calls.calls) / n, 1),
        "prompt_parts_per_batch_estimated": {p: round(v / n, 1) for p, v in parts_total.items()},
        "completion_tokens": sum(c.completion_tokens for c in calls.calls),
        "max_completion_tokens": max((c.completion_tokens for c in calls.calls), default=0),
        "largest_bound": max(b for b in bounds.values() if b), "seconds_per_batch": round(wall / n, 2),
        "refused_writes": sum(len(r["refused"]) for r in rows),
        # processed batches in which a manager wrote nothing because each of its writes was refused
        # (counted as degraded before b526b39)
        "batches_with_a_manager_all_refused": sum(bool(r["managers_all_refused"]) for r in rows),
        "routing_same_as_rules": f"{agree}/{statuses['processed']}",
        "routing_by_type": routing_by_type(rows),
    }
    if log and log.exists():  # the server's own account of the ingestion
        with log.open("rb") as f:
            f.seek(log_start)
            summary["server"] = server_reading(f.read().decode("utf-8", "replace"))
    summary.update(store_properties(mx, user, batches))
    summary["writes_by_type_and_writer"] = {f"{t}/{w}": c for (t, w), c in sorted(writers(mx, user).items())}
    summary["model_memories_sample"] = model_texts(mx, user)[:16]
    mx.close()
    return {"summary": summary, "batches": rows}


def all_refused(rejected: list[str], actors: set[str]) -> list[str]:
    """The managers that had a write refused for its content ("name (refused): ...") and wrote nothing."""
    refusing = {r.split(" (refused):", 1)[0] for r in rejected if " (refused):" in r}
    return sorted(name for name in refusing if name not in actors)


def routing_by_type(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per memory type, over the batches the router answered: how often the router picked it, the rules
    did, and both."""
    answered = [r for r in rows if r["routed"]]
    types = sorted({t for r in answered for t in (*r["routed"], *r["rules_routed"])})
    return {t: {"model": sum(t in r["routed"] for r in answered), "rules": sum(t in r["rules_routed"] for r in answered),
                "both": sum(t in r["routed"] and t in r["rules_routed"] for r in answered)} for t in types}


def store_properties(mx: Mirix, user: str, batches) -> dict[str, Any]:
    """What must hold whatever the model did: every turn found by its first six words and by its id,
    no vault value that is not in the conversation."""
    turns = [m for b in batches for m in b]
    cited = {s for m in mx.list(user_id=user, limit=100_000) for s in m.source_ids}
    found_by_words = 0
    for turn in turns:
        phrase = " ".join(turn["content"].split()[:6])
        hits = mx.search(phrase, user_id=user, method="string", limit=50)
        found_by_words += any(turn["id"] in h.memory.source_ids for h in hits)
    text = "\n".join(t["content"] for t in turns)
    vault = [mx.get(m.id, user_id=user, reveal=True) for m in mx.list(user_id=user, memory_types=["knowledge_vault"])]
    invented = [v.secret_value for v in vault if isinstance(v, KnowledgeVaultMemory) and v.secret_value not in text]
    return {"turns_found_by_first_six_words": f"{found_by_words}/{len(turns)}",
            "turns_searchable_with_id": f"{sum(t['id'] in cited for t in turns)}/{len(turns)}",
            "invented_secrets": len(invented), "memories": len(mx.list(user_id=user, limit=100_000))}


def _reason_kind(reason: str) -> str:
    """A short class of a degradation reason, for the table."""
    reason = re.sub(r"[0-9a-f]{32}", "…", reason)
    head = reason.split(":", 1)[0]
    for key in ("timed out", "bound of", "no tool call", "could not read", "not listed", "does not occur",
                "not grounded", "does not look like", "unknown memory type", "validation", "unknown tool",
                "invalid", "Field required"):
        if key in reason:
            return f"{head}: {key}"
    return head


def eligible_questions(conv, batches, limit: int, seed: int) -> list:
    """Questions of categories 1-4 whose evidence lies in the ingested turns (all, or a seeded sample)."""
    ingested = {m["id"] for b in batches for m in b}
    pool = [q for q in conv.questions if q.category in (1, 2, 3, 4) and q.evidence and set(q.evidence) <= ingested]
    if limit and len(pool) > limit:
        random.Random(seed).shuffle(pool)
        pool = sorted(pool[:limit], key=lambda q: q.index)
    return pool


def score_store(args, conv, questions, embedder, folder: Path, client: Any, *, model_store: bool) -> dict[str, Any]:
    """Context recall through the default search within the budget, and F1 of the answerer;
    `model_store`: the store the model wrote to (else the offline one, where no memory is the model's)."""
    settings = Settings(data_dir=folder, llm_timeout_s=args.timeout, llm_seed=args.model_seed,
                        **({"llm_memories_shown": args.memories_shown} if args.memories_shown else {}))
    mx = Mirix(settings=settings, embedder=embedder, model_client=client)
    user = conv.user_id
    first_actor: dict[str, str] = {}

    def first_of(memory_id: str) -> str:
        if memory_id not in first_actor:
            first_actor[memory_id] = mx.history(memory_id, user_id=user)[0].actor
        return first_actor[memory_id]

    def own_turn(memory) -> bool:  # a turn's own episode: the rules' record of it, in either store
        return first_of(memory.id) in (VERBATIM_ACTOR, "episodic_memory_manager") and \
            getattr(memory, "event_type", "") == TURN_EVENT

    rows = []
    store = "LLM" if model_store else "offline"
    for n, q in enumerate(questions, 1):
        started = time.perf_counter()
        hits = mx.search(q.question, user_id=user, limit=50)
        # counted as a reader is shown them: a day stated once
        kept = hits[: shown_within([h.text for h in hits], args.budget)]
        cited = {s for h in kept for s in h.memory.source_ids}
        own = {s for h in kept if own_turn(h.memory) for s in h.memory.source_ids}
        evidence = set(q.evidence)
        context = "\n".join(day_lines([h.text for h in kept]))  # as a reader is shown it
        response = mx.chat(q.question, user_id=user, remember=False)
        answer = strip_citations(response.answer)
        prompted = {s for i in response.retrieved_ids if not i.startswith("core_")
                    for s in mx.get(i, user_id=user).source_ids}
        rows.append({"question": q.question, "gold": q.answer, "category": q.category,
                     "evidence_cited": round(len(evidence & cited) / len(evidence), 3),
                     "evidence_own_turn": round(len(evidence & own) / len(evidence), 3),
                     # the chat's own prompt: the turns its memories cite, and the topics it searched with
                     "evidence_in_prompt": round(len(evidence & prompted) / len(evidence), 3),
                     "topics": response.topics,
                     "answer_tokens": round(answer_token_recall(scoring_gold(q.answer, q.category), context), 3),
                     "f1": round(locomo_f1(answer, q.answer, q.category), 3), "answer": answer[:1000],
                     "model_memories_in_context": sum(1 for h in kept if model_store and writer_of(first_of(h.memory.id)) == "model"
                                                      and h.memory.memory_type.value != "core"),
                     "answer_mode": response.mode, "fallback": response.fallback,
                     # what the chat's prompt was handed: how many memories, how many of them the model's
                     "prompt_memories": len(response.retrieved_ids),
                     "model_memories_in_prompt": sum(1 for i in response.retrieved_ids if model_store
                                                     and not i.startswith("core_") and writer_of(first_of(i)) == "model")})
        print(f"[{store} store] question {n}/{len(questions)}: F1 {rows[-1]['f1']:.2f} ({response.mode}"
              f"{', fell back' if response.fallback else ''}), {time.perf_counter() - started:.1f}s", flush=True)
    mx.close()
    mean = lambda key: round(sum(r[key] for r in rows) / max(len(rows), 1), 4)  # noqa: E731
    return {"questions": len(rows), "evidence_recall_cited": mean("evidence_cited"),
            "evidence_recall_own_turn": mean("evidence_own_turn"), "answer_token_recall": mean("answer_tokens"),
            "evidence_in_prompt": mean("evidence_in_prompt"),
            "f1": mean("f1"), "model_memories_in_context": mean("model_memories_in_context"),
            "prompt_memories": mean("prompt_memories"), "model_memories_in_prompt": mean("model_memories_in_prompt"),
            "rows": rows}


def paired(llm_rows: list[dict[str, Any]], offline_rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The LLM store against the offline one question by question (the same questions, in the same order):
    each figure's mean difference with its 95% bootstrap interval."""
    if [r["question"] for r in llm_rows] != [r["question"] for r in offline_rows]:
        raise ValueError("the two stores were scored on different questions")
    if not llm_rows:
        return {}
    return {metric: paired_difference([r[metric] for r in llm_rows], [r[metric] for r in offline_rows]).model_dump()
            for metric in ("f1", "evidence_cited", "answer_tokens", "evidence_in_prompt")
            if all(metric in r for r in llm_rows + offline_rows)}  # older results lack the last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--conversation", type=int, default=0, help="index in the file")
    parser.add_argument("--mode", choices=("functions", "template"), required=True)
    parser.add_argument("--url", required=True, help="the server's OpenAI-compatible base URL")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--sessions", type=int, default=None, help="ingest the first N sessions (default: all)")
    parser.add_argument("--batches", type=int, default=10_000, help="at most this many batches")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--budget", type=int, default=200, help="context words per question")
    parser.add_argument("--questions", type=int, default=0, help="at most this many questions (0: every one)")
    parser.add_argument("--answerer", choices=("offline", "model"), default="offline",
                        help="who answers from both stores: the engine without a model, or the same model")
    parser.add_argument("--seed", type=int, default=7, help="which questions are drawn (with --questions)")
    parser.add_argument("--model-seed", type=int, default=1,
                        help="Settings.llm_seed for every model call (the product's default: unset): the "
                             "sampler's draws are the same in both stores and in a second run")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--structured", default="auto")
    parser.add_argument("--prompt-order", choices=("batch_first", "instructions_first"),
                        default=Settings.model_fields["llm_prompt_order"].default,
                        help="Settings.llm_prompt_order (default: the product's)")
    parser.add_argument("--server-log", default=None,
                        help="the server's verbose log (scripts/local_model.sh: run/<mode>.log): tokens read, "
                             "reused from the previous prompt, written, and their speeds during the ingestion")
    parser.add_argument("--out", default=None, help="JSON file for the results")
    parser.add_argument("--work", default=None,
                        help="folder for the two stores, kept after the run (default: a new temporary folder)")
    parser.add_argument("--rescore", action="store_true",
                        help="score the stores already in --work again (no ingestion); the scores replace "
                             "those in --out, the ingestion figures there stay")
    parser.add_argument("--memories-shown", choices=("sources", "keys", "none", "own_words"), default=None,
                        help="how the chat is handed the model's memories (default: the product's, "
                             "Settings.llm_memories_shown)")
    parser.add_argument("--stores", choices=("both", "llm", "offline"), default="both",
                        help="with --rescore, which stores to score again; the other's scores in --out stay")
    args = parser.parse_args()
    quiet_logs()
    conv = load_locomo(args.data)[args.conversation]
    batches = batches_of(conv, args.batch_size, args.batches, args.sessions)
    embedder = load_embedder("minilm")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="mirix-local-model-"))
    if args.rescore:
        if not (args.work and args.out and (work / "llm").is_dir() and (work / "offline").is_dir()):
            parser.error("--rescore needs --work holding both stores of an earlier run, and its --out")
        result = json.loads(Path(args.out).read_text())
        result["rescored"] = {"environment": environment(), "args": {k: v for k, v in vars(args).items()}}
    else:
        result = {"environment": environment(), "conversation": conv.sample_id,
                  "args": {k: v for k, v in vars(args).items()}, "work": str(work)}
        result["llm"] = run_mode(args, conv, batches, embedder, work / "llm")
        offline = Mirix(settings=Settings(data_dir=work / "offline"), embedder=embedder)
        t0 = time.perf_counter()
        statuses = Counter(offline.add(b, user_id=conv.user_id).status.value for b in batches)
        result["offline_baseline"] = {"statuses": dict(statuses),
                                      "seconds_per_batch": round((time.perf_counter() - t0) / len(batches), 3)}
        result["offline_baseline"].update(store_properties(offline, conv.user_id, batches))
        offline.close()
    questions = eligible_questions(conv, batches, args.questions, args.seed)
    answerer = (lambda: model_client(args.url, args.model, args.mode == "functions")) if args.answerer == "model" \
        else (lambda: None)
    key = "scores" if args.answerer == "offline" else "scores_model_answerer"
    names = ("llm", "offline") if args.stores == "both" or not args.rescore else (args.stores,)
    result[key] = {**result.get(key, {}),
                   **{name: score_store(args, conv, questions, embedder, work / name, answerer(), model_store=name == "llm")
                      for name in names}}
    if {"llm", "offline"} <= result[key].keys():
        result.setdefault("paired", {})[key] = paired(result[key]["llm"]["rows"], result[key]["offline"]["rows"])
    print(json.dumps(result["llm"]["summary"], indent=1, default=str))
    print(json.dumps({"offline_baseline": result["offline_baseline"]}, default=str))
    print(json.dumps({name: {k: v for k, v in s.items() if k != "rows"} for name, s in result[key].items()}))
    for metric, difference in result.get("paired", {}).get(key, {}).items():
        print(f"LLM store minus offline store, {metric}: {PairedDifference(**difference).render()}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
