"""The whole loop against any OpenAI-compatible endpoint: remember a conversation with the LLM
memory managers, then chat with memory.

    # OpenAI
    MIRIX_LLM_PROVIDER=openai MIRIX_LLM_MODEL=gpt-4o-mini OPENAI_API_KEY=sk-... python examples/llm_loop.py
    # Ollama (its OpenAI-compatible API)
    MIRIX_LLM_PROVIDER=openai MIRIX_LLM_MODEL=qwen2.5:7b MIRIX_LLM_BASE_URL=http://localhost:11434/v1 python examples/llm_loop.py
    # vLLM / llama.cpp server / LM Studio
    MIRIX_LLM_PROVIDER=openai MIRIX_LLM_MODEL=Qwen/Qwen2.5-7B-Instruct MIRIX_LLM_BASE_URL=http://localhost:8000/v1 python examples/llm_loop.py

Set MIRIX_LLM_FUNCTION_CALLING=0 for a model without tool calling (it then answers in JSON).
"""

import sys
import tempfile
from datetime import datetime, timezone

from mirix_py import Mirix


def main(data_dir: str) -> int:
    mx = Mirix(data_dir)
    if mx.mode != "llm":
        print("No LLM configured: set MIRIX_LLM_PROVIDER / MIRIX_LLM_MODEL (see the docstring).")
        return 2
    result = mx.add(
        [
            {"role": "user", "name": "Ada", "id": "m1", "content": "Hi, I'm Ada. I just moved to Lisbon for a new job."},
            {"role": "user", "name": "Ada", "id": "m2", "content": "My brother Tom is a pilot; he visits next Friday."},
        ],
        user_id="ada",
        occurred_at=datetime(2024, 6, 3, 9, 30, tzinfo=timezone.utc),
    )
    print(f"update: {result.status.value}, routed to {[t.value for t in result.routed]}, "
          f"{len(result.changes)} change(s), {result.usage.llm_calls} LLM calls, "
          f"{result.usage.sequential_rounds} rounds, {result.usage.prompt_tokens} prompt tokens")
    if result.error:
        print("error:", result.error)
    response = mx.chat("Who is visiting me, and what does he do?", user_id="ada")
    print("answer:", response.answer)
    print("cited:", response.memory_ids, "| topics:", response.topics,
          f"| {response.usage.llm_calls} LLM calls in {response.usage.sequential_rounds} rounds")
    mx.close()
    return 0 if result.status.value in ("processed", "degraded") else 1  # degraded: the rules kept it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="mirix-llm-")))
