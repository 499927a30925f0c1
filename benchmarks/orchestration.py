"""LLM orchestration cost on the LoCoMo dev split, with a scripted model through autogen's
ChatCompletionClient interface that returns minimal valid tool calls.

Prints, per session (one `add` per session): LLM calls, sequential LLM rounds on the critical path,
prompt tokens (estimated offline: the part the engine controls), and wall time with a simulated
per-call model latency; beside it the same flow with the managers run one after another (the
baseline in the same run), and the chat flow's calls and rounds per question.

    .venv/bin/python benchmarks/orchestration.py ../shared/data/locomo/locomo_dev.json --conversations 2
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mirix_py.agents.update_flow import UpdateFlow  # noqa: E402
from mirix_py.engine import Mirix  # noqa: E402
from mirix_py.eval.locomo import load_locomo, session_messages  # noqa: E402
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest  # noqa: E402
from mirix_py.store.embeddings import SentenceTransformerEmbedder  # noqa: E402

ROUTE = ["episodic", "semantic", "core"]


INPUT_LINE = re.compile(r"^\[id=(?P<id>[^\]]+)\] \S+ (?P<who>[^:(\[]+?)(?: \[[^\]]*\])?(?: \([^)]*\))?: (?P<text>.+)$",
                        re.MULTILINE)


def minimal_model(req: ScriptRequest):
    """The smallest valid reply for each agent: one memory per manager, in the batch's own words
    (the engine rejects memories whose words are not in the batch) and citing every message."""
    inputs = list(INPUT_LINE.finditer(req.task_text))
    first = inputs[0] if inputs else None
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": ROUTE})]
    if req.agent == "episodic_memory_manager" and first:
        return [("insert_episodic", {"summary": first["text"], "source_ids": [m["id"] for m in inputs]})]
    if req.agent == "semantic_memory_manager" and first:
        return [("insert_semantic", {"name": first["who"], "summary": first["text"]})]
    if req.agent in ("episodic_memory_manager", "semantic_memory_manager"):
        return [("nothing_to_record", {})]
    if req.agent in ("core_memory_manager", "knowledge_vault_manager"):
        return [("nothing_to_record", {})]  # a manager must answer with a tool call
    if req.agent == "topic_extractor":
        return json.dumps({"topics": req.task_text.split()[-3:], "start": None, "end": None})
    if req.agent == "chat_agent":
        return "I don't know."
    raise AssertionError(req.agent)


def run(data: Path, conversations: int, delay_s: float, parallel: bool, embedder, questions: int) -> dict:
    client = ScriptedChatCompletionClient(minimal_model, delay_s=delay_s)
    convs = load_locomo(data)[:conversations]
    per_session = []
    with tempfile.TemporaryDirectory(prefix="mirix-orch-") as tmp:
        mx = Mirix(tmp, embedder=embedder, model_client=client)
        mx.runner.flow = UpdateFlow(mx.store, mx.searcher, client, mx.definitions, parallel=parallel,
                                    fallback=mx.offline_flow)
        for conv in convs:
            for session in conv.sessions:
                started = time.perf_counter()
                result = mx.add(session_messages(session), user_id=conv.user_id, occurred_at=session.date)
                if result.status.value != "processed":
                    raise SystemExit(f"session failed: {result.error}")
                per_session.append({"calls": result.usage.llm_calls, "rounds": result.usage.sequential_rounds,
                                    "prompt_tokens": result.usage.prompt_tokens,
                                    "wall_s": time.perf_counter() - started})
        chats = []
        if parallel:
            for conv in convs:
                for q in conv.questions[:questions]:
                    response = mx.chat(q.question, user_id=conv.user_id, remember=False)
                    chats.append({"calls": response.usage.llm_calls, "rounds": response.usage.sequential_rounds,
                                  "prompt_tokens": response.usage.prompt_tokens})
        mx.close()

    def mean(rows, key):
        return statistics.mean(r[key] for r in rows) if rows else 0.0

    return {
        "sessions": len(per_session),
        "calls_per_session": mean(per_session, "calls"),
        "rounds_per_session_max": max(r["rounds"] for r in per_session),
        "rounds_per_session_mean": mean(per_session, "rounds"),
        "prompt_tokens_per_session": mean(per_session, "prompt_tokens"),
        "wall_s_per_session": mean(per_session, "wall_s"),
        "chats": len(chats),
        "calls_per_chat": mean(chats, "calls"),
        "rounds_per_chat_max": max((c["rounds"] for c in chats), default=0),
        "prompt_tokens_per_chat": mean(chats, "prompt_tokens"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path)
    parser.add_argument("--conversations", type=int, default=5)
    parser.add_argument("--delay-ms", type=float, default=100.0, help="simulated model latency per call")
    parser.add_argument("--questions", type=int, default=20, help="chat questions per conversation")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    embedder = SentenceTransformerEmbedder()
    ours = run(args.data, args.conversations, args.delay_ms / 1000, True, embedder, args.questions)
    sequential = run(args.data, args.conversations, args.delay_ms / 1000, False, embedder, 0)
    rows = [
        ("sessions (one add each)", ours["sessions"], sequential["sessions"]),
        ("LLM calls per session", f"{ours['calls_per_session']:.2f}", f"{sequential['calls_per_session']:.2f}"),
        ("sequential LLM rounds per session (max)", ours["rounds_per_session_max"], sequential["rounds_per_session_max"]),
        ("prompt tokens per session (mean, estimated)", f"{ours['prompt_tokens_per_session']:.0f}",
         f"{sequential['prompt_tokens_per_session']:.0f}"),
        (f"wall s per session at {args.delay_ms:.0f} ms/call", f"{ours['wall_s_per_session']:.3f}",
         f"{sequential['wall_s_per_session']:.3f}"),
        ("chat questions", ours["chats"], "-"),
        ("LLM calls per chat (no targeted search)", f"{ours['calls_per_chat']:.2f}", "-"),
        ("sequential LLM rounds per chat (max)", ours["rounds_per_chat_max"], "-"),
        ("prompt tokens per chat (mean, estimated)", f"{ours['prompt_tokens_per_chat']:.0f}", "-"),
    ]
    print(f"\nLLM orchestration on {args.data.name} ({args.conversations} conversations), scripted model, "
          f"router picks {ROUTE}")
    print(f"{'':46} {'mirix-py (parallel)':>20} {'managers in sequence':>22}")
    for name, a, b in rows:
        print(f"{name:46} {a!s:>20} {b!s:>22}")
    print("For comparison (not measured here): MIRIX's update flow chains topic extraction, routing, the "
          "managers and a finish step.")
    if args.out:
        args.out.write_text(json.dumps({"parallel": ours, "sequential": sequential, "delay_ms": args.delay_ms,
                                        "route": ROUTE}, indent=2))


if __name__ == "__main__":
    main()
