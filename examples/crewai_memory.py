"""A CrewAI crew whose memory lives in mirix-py: two runs, the second recalls what the first decided.

    bash scripts/crewai_venv.sh --no-test                      # crewai needs a venv of its own
    .venv-crewai/bin/python examples/crewai_memory.py          # offline: a scripted model stands in

CrewAI's `Memory` keeps its records in a `MirixStorage` (its `StorageBackend`), so they are also
memories of the engine (user "crew"). With a real model, pass `llm="gpt-4o-mini"` (or any LiteLLM
name) to `Agent` and `Memory` and drop `embedder=` to use CrewAI's default OpenAI embedder.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("MIRIX_EMBEDDER", "none")  # the engine's own search: full text only, no torch

from crewai import Agent, Crew, Memory, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.memory.analyze import ConsolidationPlan, ExtractedMemories, MemoryAnalysis, QueryAnalysis  # noqa: E402

from mirix_py.integrations.crewai import MirixStorage  # noqa: E402


def embed(texts: list[str]) -> list[list[float]]:
    """A bag-of-words hashing embedder, so the example needs no embedding model."""
    out = []
    for text in texts:
        v = [0.0] * 64
        for word in text.lower().split():
            v[int(hashlib.sha256(word.strip(".,?!").encode()).hexdigest(), 16) % 64] += 1.0
        out.append(v)
    return out


class ScriptedLLM(BaseLLM):
    """Stands in for a model: the agent's answers, and the structured outputs `Memory` asks for."""

    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        text = messages if isinstance(messages, str) else "\n".join(str(m.get("content")) for m in messages)
        if response_model is ExtractedMemories:
            return ExtractedMemories(memories=["The team chose PostgreSQL for the user database."])
        if response_model is MemoryAnalysis:
            return MemoryAnalysis(suggested_scope="/project", categories=["decision"], importance=0.8)
        if response_model is QueryAnalysis:
            return QueryAnalysis(keywords=["database"], suggested_scopes=["/"], complexity="simple",
                                 recall_queries=["database"])
        if response_model is ConsolidationPlan:
            return ConsolidationPlan(actions=[], insert_new=False, insert_reason="already known")
        if "Current Task: Which database" in text:
            return "From memory: PostgreSQL." if "The team chose PostgreSQL" in text else "I do not know."
        return "We will use PostgreSQL for the user database."


def main(data_dir: str) -> None:
    llm = ScriptedLLM(model="scripted")
    storage = MirixStorage("crew", data_dir=data_dir)
    memory = Memory(storage=storage, embedder=embed, llm=llm)
    agent = Agent(role="Architect", goal="Pick the database", backstory="A careful engineer.", llm=llm)
    for question in ("Choose a database for the user accounts.",
                     "Which database did we choose for the user accounts?"):
        task = Task(description=question, expected_output="the database", agent=agent)
        answer = Crew(agents=[agent], tasks=[task], memory=memory).kickoff().raw
        print(f"Q: {question}\nA: {answer}")
    for record in storage.list_records():
        print(f"kept: {record.scope} {record.categories} {record.content}")
    print("engine search 'database':", [h.memory.summary for h in storage.mx.search("database", user_id="crew")])
    memory.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="where memories live (default: a temp dir)")
    args = parser.parse_args()
    main(args.data_dir or tempfile.mkdtemp(prefix="mirix-crewai-"))
