"""The LLM flows against a real local model (llama-cpp-python's OpenAI-compatible server), on LoCoMo.

    bash scripts/local_model.sh provision && bash scripts/local_model.sh start functions
    .venv/bin/python benchmarks/local_model.py --data ../shared/data/locomo/locomo_dev.json \
        --mode functions --url http://127.0.0.1:58082/v1 --batches 12 --questions 10

Turns of one conversation go in batches of 4 (`--batch-size`), in order, each as one `add` (one
update flow). Per batch: processed by the model / degraded (the offline rules stood in, with the
reason) / failed; calls, prompt and completion tokens, seconds, writes per memory type and by whom,
writes rejected by validation or grounding (and the correction rounds they caused). Then the
properties the engine must keep whatever the model did: every turn searchable with its id, no vault
value that is not in the conversation, no completion longer than its bound. The routing is compared
with the offline rules' on the same batches. With `--questions`, a seeded slice of the questions whose
evidence was ingested is answered by the same model from LLM-ingested and from offline-ingested
memories (LoCoMo F1; `--judge` adds the same model as judge). The baseline in the same run is the
offline flow on the same turns.
"""

from __future__ import annotations

import argparse
import asyncio
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
from mirix_py.eval.locomo import load_locomo  # noqa: E402
from mirix_py.eval.judge import judge  # noqa: E402
from mirix_py.eval.metrics import locomo_f1, strip_citations  # noqa: E402
from mirix_py.inputs import normalize_add  # noqa: E402
from mirix_py.llm import build_model_client  # noqa: E402
from mirix_py.llm.metering import Meter, MeteredClient  # noqa: E402
from mirix_py.records import KnowledgeVaultMemory  # noqa: E402
from mirix_py.settings import Settings  # noqa: E402
from mirix_py.store.embeddings import load_embedder  # noqa: E402


def model_client(url: str, model: str, function_calling: bool):
    """Built from settings as a user's would be: MIRIX_LLM_PROVIDER=openai, a base URL, the function-calling flag."""
    os.environ["MIRIX_LLM_FUNCTION_CALLING"] = "1" if function_calling else "0"
    return build_model_client(Settings(llm_provider="openai", llm_model=model, llm_base_url=url))


def batches_of(conv, size: int, limit: int) -> list[list[dict[str, Any]]]:
    from datetime import timedelta

    out: list[list[dict[str, Any]]] = []
    for session in conv.sessions:
        turns = [{"role": "user", "name": t.speaker, "id": t.dia_id, "content": t.content,
                  "occurred_at": session.date + timedelta(seconds=i)} for i, t in enumerate(session.turns)]
        for start in range(0, len(turns), size):
            out.append(turns[start:start + size])
            if len(out) >= limit:
                return out
    return out


def writers(mx: Mirix, user_id: str) -> Counter:
    """(memory type, writer) of every memory present: the model, the vault rules, or the offline stand-in."""
    counts: Counter = Counter()
    for memory in mx.list(user_id=user_id, limit=100_000):
        first = mx.history(memory.id, user_id=user_id)[0].actor
        who = "rules (stand-in)" if first.endswith("(offline fallback)") else \
            "vault rules" if first == "knowledge_vault_rules" else "model"
        counts[(memory.memory_type.value, who)] += 1
    return counts


def model_texts(mx: Mirix, user_id: str) -> list[str]:
    """What the model itself wrote (not the rules), to judge it by reading."""
    out = []
    for memory in mx.list(user_id=user_id, limit=100_000):
        actor = mx.history(memory.id, user_id=user_id)[0].actor
        if not actor.endswith("(offline fallback)") and actor != "knowledge_vault_rules":
            out.append(f"{memory.memory_type.value}: {memory.search_text()[:200]} {memory.source_ids}")
    return out


def run_mode(args, conv, batches, embedder, data_dir: Path) -> dict[str, Any]:
    calls = Meter()
    client = MeteredClient(model_client(args.url, args.model, args.mode == "functions"), calls, "server")
    settings = Settings(data_dir=data_dir, llm_timeout_s=args.timeout, llm_structured_output=args.structured)
    mx = Mirix(settings=settings, embedder=embedder, model_client=client)
    definitions = load_definitions()
    bounds = {d.name: d.model.get("max_tokens") for d in definitions.values()}
    user = conv.user_id
    rows = []
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
            "calls": len(new_calls), "prompt_tokens": sum(c.prompt_tokens for c in new_calls),
            "completion_tokens": sum(c.completion_tokens for c in new_calls),
            "max_completion_tokens": max((c.completion_tokens for c in new_calls), default=0),
            "seconds": round(seconds, 2), "writes": len(result.changes), "rejected": result.rejected,
            "kept_by_rules": result.kept_by_rules,
        })
        print(f"[{args.mode}] batch {k}/{len(batches)} {result.status.value} in {seconds:.1f}s, "
              f"{len(new_calls)} calls, routed {rows[-1]['routed']} (rules {rules_route})"
              + (f", {len(result.kept_by_rules)} message(s) kept by the rules" if result.kept_by_rules else "")
              + (f" | {result.error[:160]}" if result.error else ""), flush=True)
    wall = time.perf_counter() - started
    turn_ids = [m["id"] for b in batches for m in b]
    cited = {s for m in mx.list(user_id=user, limit=100_000) for s in m.source_ids}
    text = "\n".join(m["content"] for b in batches for m in b)
    vault = [mx.get(m.id, user_id=user, reveal=True) for m in mx.list(user_id=user, memory_types=["knowledge_vault"])]
    invented = [v.secret_value for v in vault if isinstance(v, KnowledgeVaultMemory) and v.secret_value not in text]
    statuses = Counter(r["status"] for r in rows)
    agree = sum(r["routed"] == r["rules_routed"] for r in rows if r["status"] == "processed")
    summary = {
        "mode": args.mode, "batches": len(rows), "turns": len(turn_ids),
        "processed": statuses["processed"], "degraded": statuses["degraded"], "failed": statuses["failed"],
        "processed_share": round(statuses["processed"] / len(rows), 3),
        # the stricter count: processed, and every message cited by a memory the model wrote
        "processed_all_cited": sum(r["status"] == "processed" and not r["kept_by_rules"] for r in rows),
        "messages_kept_by_rules": sum(len(r["kept_by_rules"]) for r in rows),
        "degraded_reasons": Counter(_reason_kind(r["reason"]) for r in rows if r["reason"]).most_common(),
        "calls": len(calls.calls), "prompt_tokens": sum(c.prompt_tokens for c in calls.calls),
        "completion_tokens": sum(c.completion_tokens for c in calls.calls),
        "max_completion_tokens": max((c.completion_tokens for c in calls.calls), default=0),
        "largest_bound": max(b for b in bounds.values() if b), "seconds_per_batch": round(wall / len(rows), 2),
        "writes_by_type_and_writer": {f"{t}/{w}": n for (t, w), n in sorted(writers(mx, user).items())},
        "rejected_writes": sum(len(r["rejected"]) for r in rows),
        "turns_searchable_with_id": sum(t in cited for t in turn_ids), "invented_secrets": len(invented),
        "routing_same_as_rules": f"{agree}/{statuses['processed']}",
        "model_memories_sample": model_texts(mx, user)[:12],
    }
    mx.close()
    return {"summary": summary, "batches": rows}


def _reason_kind(reason: str) -> str:
    """A short class of a degradation reason, for the table."""
    reason = re.sub(r"[0-9a-f]{32}", "…", reason)
    head = reason.split(":", 1)[0]
    for key in ("timed out", "bound of", "no tool call", "could not read", "not listed", "does not occur",
                "unknown memory type", "cites", "validation", "unknown tool", "invalid", "Field required"):
        if key in reason:
            return f"{head}: {key}"
    return head


def answer_slice(args, conv, batches, embedder, llm_dir: Path, offline_dir: Path) -> dict[str, Any]:
    ingested = {m["id"] for b in batches for m in b}
    pool = [q for q in conv.questions if q.category in (1, 2, 3, 4) and q.evidence and set(q.evidence) <= ingested]
    random.Random(args.seed).shuffle(pool)
    picked = pool[: args.questions]
    out: dict[str, Any] = {"questions": len(picked), "pool": len(pool)}
    for name, folder in (("llm_ingested", llm_dir), ("offline_ingested", offline_dir)):
        client = model_client(args.url, args.model, args.mode == "functions")
        mx = Mirix(settings=Settings(data_dir=folder, llm_timeout_s=args.timeout), embedder=embedder,
                   model_client=client)
        rows = []
        for q in picked:
            response = mx.chat(q.question, user_id=conv.user_id, remember=False)
            f1 = locomo_f1(strip_citations(response.answer), q.answer, q.category)
            label = asyncio.run(judge(model_client(args.url, args.model, args.mode == "functions"), q.question,
                                      str(q.answer), strip_citations(response.answer),
                                      seed=args.seed)).label if args.judge else None  # its own client: own loop
            rows.append({"question": q.question, "gold": q.answer, "answer": response.answer[:300],
                         "category": q.category, "f1": round(f1, 3), "judge": label,
                         "answer_mode": response.mode, "fallback": response.fallback})
            print(f"[{args.mode}/{name}] {q.question[:60]!r} -> {response.answer[:80]!r} F1 {f1:.2f}"
                  + (f" judge {label}" if label else ""), flush=True)
        mx.close()
        out[name] = {"mean_f1": round(sum(r["f1"] for r in rows) / max(len(rows), 1), 3), "rows": rows,
                     "judge_correct": (round(sum(r["judge"] == "CORRECT" for r in rows) / max(len(rows), 1), 3)
                                       if args.judge else None),
                     "offline_fallback_answers": sum(r["fallback"] is not None for r in rows)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--conversation", type=int, default=0, help="index in the file")
    parser.add_argument("--mode", choices=("functions", "template"), required=True)
    parser.add_argument("--url", required=True, help="the server's OpenAI-compatible base URL")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--questions", type=int, default=0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--judge", action="store_true", help="the same model grades each answer (LoCoMo judge)")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--structured", default="auto")
    parser.add_argument("--out", default=None, help="JSON file for the results")
    args = parser.parse_args()
    quiet_logs()
    conv = load_locomo(args.data)[args.conversation]
    batches = batches_of(conv, args.batch_size, args.batches)
    embedder = load_embedder("minilm")
    work = Path(tempfile.mkdtemp(prefix="mirix-local-model-"))
    result: dict[str, Any] = {"environment": environment(), "conversation": conv.sample_id,
                              "args": {k: v for k, v in vars(args).items()}}
    result["llm"] = run_mode(args, conv, batches, embedder, work / "llm")
    offline = Mirix(settings=Settings(data_dir=work / "offline"), embedder=embedder)
    t0 = time.perf_counter()
    statuses = Counter(offline.add(b, user_id=conv.user_id).status.value for b in batches)
    result["offline_baseline"] = {"statuses": dict(statuses),
                                  "seconds_per_batch": round((time.perf_counter() - t0) / len(batches), 3)}
    offline.close()
    if args.questions:
        result["answers"] = answer_slice(args, conv, batches, embedder, work / "llm", work / "offline")
    print(json.dumps(result["llm"]["summary"], indent=1))
    if args.questions:
        print(json.dumps({k: {"f1": v["mean_f1"], "judge": v["judge_correct"], "fallbacks": v["offline_fallback_answers"]}
                          for k, v in result["answers"].items() if isinstance(v, dict)}))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
