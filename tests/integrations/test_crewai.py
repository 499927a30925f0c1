"""MirixStorage as CrewAI's `StorageBackend`: the protocol over an embedded engine, CrewAI's own
`Memory` remembering and recalling through it, and two real crew runs with a scripted model (the
second recalls what the first remembered). crewai cannot share the main venv (it pins mcp~=1.26
and openai<3): scripts/crewai_venv.sh runs this file in .venv-crewai; elsewhere it is skipped."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("crewai")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Memory, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.memory.analyze import ConsolidationPlan, ExtractedMemories, MemoryAnalysis, QueryAnalysis  # noqa: E402
from crewai.memory.storage.backend import StorageBackend  # noqa: E402
from crewai.memory.types import MemoryRecord  # noqa: E402

from mirix_py.engine import Mirix  # noqa: E402
from mirix_py.integrations.crewai import MirixStorage  # noqa: E402


def embed(texts: list[str]) -> list[list[float]]:
    """A bag-of-words hashing embedder: CrewAI takes any callable, and this one needs no model."""
    out = []
    for text in texts:
        v = [0.0] * 64
        for word in text.lower().split():
            v[int(hashlib.sha256(word.strip(".,?!").encode()).hexdigest(), 16) % 64] += 1.0
        out.append(v)
    return out


def record(content: str, scope: str, categories: list[str], **kw) -> MemoryRecord:
    return MemoryRecord(content=content, scope=scope, categories=categories, embedding=embed([content])[0], **kw)


@pytest.fixture
def mx(tmp_path):
    engine = Mirix(tmp_path / "data", embedder=None)
    yield engine
    engine.close()


def test_storage_backend_protocol(mx):
    storage = MirixStorage("crew", mx=mx)
    assert isinstance(storage, StorageBackend)
    db = record("We chose PostgreSQL for the user database.", "/project/backend", ["decision"],
                metadata={"task": "t1"}, importance=0.9)
    tea = record("Ada prefers tea over coffee.", "/people/ada", ["preference"])
    old = record("The old wiki moved to Confluence.", "/project", ["decision"],
                 created_at=datetime.utcnow() - timedelta(days=30))
    storage.save([db, tea, old])

    got = storage.get_record(db.id)
    assert got is not None and got.model_dump() == db.model_dump()  # scope, dates, metadata round-trip
    assert got.embedding == pytest.approx(db.embedding)
    assert storage.get_record("nope") is None

    hits = storage.search(embed(["which database did we choose"])[0], limit=2)
    assert hits[0][0].id == db.id and 0 < hits[0][1] <= 1 and len(hits) == 2
    assert [r.id for r, _ in storage.search(db.embedding, scope_prefix="/people")] == [tea.id]
    assert {r.id for r, _ in storage.search(db.embedding, scope_prefix="/project")} == {db.id, old.id}
    assert storage.search(db.embedding, scope_prefix="/proj") == []  # a prefix is a path, not characters
    assert [r.id for r, _ in storage.search(db.embedding, metadata_filter={"task": "t1"})] == [db.id]
    assert [r.id for r, _ in storage.search(db.embedding, categories=["preference"], min_score=0.0)] == [tea.id]
    assert storage.search(tea.embedding, min_score=0.99)[0][0].id == tea.id

    assert storage.list_scopes("/") == ["/people", "/project"]
    assert storage.list_scopes("/project") == ["/project/backend"]
    info = storage.get_scope_info("/project")
    assert (info.record_count, info.categories, info.child_scopes) == (2, ["decision"], ["/project/backend"])
    assert info.oldest_record == old.created_at
    assert storage.list_categories() == {"decision": 2, "preference": 1}
    assert storage.count() == 3 and storage.count("/people") == 1
    assert [r.id for r in storage.list_records()] == [tea.id, db.id, old.id]  # newest first

    # the records are memories of the engine: its own search finds them
    assert mx.search("PostgreSQL", user_id="crew")[0].memory.summary == db.content

    storage.update(db.model_copy(update={"content": "We chose MySQL after all."}))
    assert storage.get_record(db.id).content == "We chose MySQL after all."
    assert storage.count() == 3

    assert storage.delete(older_than=datetime.utcnow() - timedelta(days=1)) == 1
    assert storage.delete(record_ids=[tea.id], scope_prefix="/project") == 0
    assert asyncio.run(storage.adelete(record_ids=[tea.id])) == 1
    asyncio.run(storage.asave([tea]))
    assert [r.id for r, _ in asyncio.run(storage.asearch(tea.embedding, limit=1))] == [tea.id]
    storage.reset("/people")
    assert storage.count() == 1
    storage.reset()
    assert storage.count() == 0 and mx.search("MySQL", user_id="crew") == []


def test_crewai_memory_remembers_and_recalls(tmp_path):
    storage = MirixStorage("crew", data_dir=tmp_path / "data")
    # scope, categories and importance given: CrewAI stores without asking its LLM; recall "shallow" is
    # a plain vector search and scoring, so the run needs no model
    memory = Memory(storage=storage, embedder=embed, llm="gpt-4o-mini")
    memory.remember("We decided to use PostgreSQL for the user database.", scope="/project",
                    categories=["decision"], importance=0.8)
    memory.remember("Ada prefers tea over coffee.", scope="/people/ada", categories=["preference"], importance=0.4)
    matches = memory.recall("Which database did we decide to use?", depth="shallow", limit=2)
    assert matches[0].record.content == "We decided to use PostgreSQL for the user database."
    assert "semantic" in matches[0].match_reasons
    assert [m.record.content for m in memory.recall("tea or coffee", scope="/people", depth="shallow")] == [
        "Ada prefers tea over coffee."]
    assert sorted(memory.list_scopes("/")) == ["/people", "/project"]
    assert storage.count() == 2

    memory.forget(scope="/people")
    assert [r.content for r in storage.list_records()] == ["We decided to use PostgreSQL for the user database."]
    memory.reset()
    assert storage.count() == 0
    memory.close()  # closes the engine the storage opened


class ScriptedLLM(BaseLLM):
    """CrewAI's model interface with scripted replies: the agent's answers, and the structured
    outputs Memory asks for (facts to keep, their scope, how to merge them)."""

    prompts: list[str] = []

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
        if response_model is ConsolidationPlan:  # the same fact again: keep the one there is
            return ConsolidationPlan(actions=[], insert_new=False, insert_reason="already known")
        assert response_model is None, response_model
        self.prompts.append(text)
        if "Current Task: Which database" in text:
            known = "PostgreSQL" if "The team chose PostgreSQL" in text else "I do not know"
            return f"{known}."
        return "We will use PostgreSQL for the user database."


def test_crew_remembers_across_runs(tmp_path):
    llm = ScriptedLLM(model="scripted")
    storage = MirixStorage("crew", data_dir=tmp_path / "data")
    memory = Memory(storage=storage, embedder=embed, llm=llm)
    agent = Agent(role="Architect", goal="Pick the database", backstory="A careful engineer.", llm=llm)

    def run(question: str) -> str:
        task = Task(description=question, expected_output="the database", agent=agent)
        return Crew(agents=[agent], tasks=[task], memory=memory).kickoff().raw

    run("Choose a database for the user accounts.")
    (kept,) = storage.list_records()  # what CrewAI extracted after the task, in the scope its analysis chose
    assert (kept.content, kept.scope, kept.categories) == (
        "The team chose PostgreSQL for the user database.", "/project", ["decision"])
    assert "PostgreSQL" in storage.mx.search("database", user_id="crew")[0].memory.summary

    assert run("Which database did we choose for the user accounts?") == "PostgreSQL."
    assert "The team chose PostgreSQL" in llm.prompts[-1]  # recalled through MirixStorage into the prompt
    assert storage.count() == 1
    memory.close()


def test_example_runs_offline(tmp_path):
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "examples" / "crewai_memory.py"), "--data-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=root, check=True).stdout
    assert "A: From memory: PostgreSQL." in out
    assert "kept: /project ['decision'] The team chose PostgreSQL for the user database." in out
