"""MirixStorage as CrewAI's `StorageBackend`: the protocol over an embedded engine, CrewAI's own
`Memory` remembering and recalling through it, and two real crew runs with a scripted model (the
second recalls what the first remembered). crewai cannot share the main venv (it pins mcp~=1.26
and openai<3): scripts/crewai_venv.sh runs this file in .venv-crewai; elsewhere it is skipped."""

from __future__ import annotations

import asyncio
import os
import runpy
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

pytest.importorskip("crewai")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Memory, Task  # noqa: E402
from crewai.memory.storage.backend import StorageBackend  # noqa: E402
from crewai.memory.types import MemoryRecord  # noqa: E402

from mirix_py.engine import Mirix  # noqa: E402
from mirix_py.integrations.crewai import MirixStorage  # noqa: E402


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = runpy.run_path(str(ROOT / "examples" / "crewai_memory.py"))  # its scripted model and embedder
embed = EXAMPLE["embed"]  # bag-of-words hashing: CrewAI takes any callable, and this one needs no model
ScriptedLLM = EXAMPLE["ScriptedLLM"]  # the agent's answers and the structured outputs Memory asks for


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



@pytest.mark.parametrize("write", ["save", "delete"])
def test_a_record_written_while_the_storage_pages_is_no_reason_to_list_one_twice_or_miss_one(mx, monkeypatch, write):
    """The storage reads the engine's memories page after page: a record saved (or deleted) between two
    pages shifts pages counted by offset, which then repeat (or skip) a record."""
    import mirix_py.integrations.crewai as crewai_module

    storage = MirixStorage("crew", mx=mx)
    kept = [record(f"Decision {n} of the crew.", "/project", ["decision"]) for n in range(5)]
    storage.save(kept)
    monkeypatch.setattr(crewai_module, "PAGE", 2)
    newest = mx.list(user_id="crew", limit=1)[0]  # what the first page holds first
    listed, calls = mx.list, []

    def list_then_write(**kwargs):
        page = listed(**kwargs)
        calls.append(kwargs)
        if len(calls) == 1:  # between the first page and the second
            if write == "save":
                storage.save([record("A decision made meanwhile.", "/project", ["decision"])])
            else:
                mx.delete(newest.id, user_id="crew")
        return page

    monkeypatch.setattr(mx, "list", list_then_write)
    ids = [r.id for r in storage.list_records()]

    assert sorted(ids) == sorted(r.id for r in kept)  # each once: the one saved after its place was read is not
    assert len(calls) == 3  # pages of 2, 2 and 1

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

    # the scripted model answers "From memory" only when the fact was recalled into its prompt
    assert run("Which database did we choose for the user accounts?") == "From memory: PostgreSQL."
    assert storage.count() == 1
    memory.close()


def test_example_runs_offline(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "crewai_memory.py"), "--data-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, check=True).stdout
    assert "A: From memory: PostgreSQL." in out
    assert "kept: /project ['decision'] The team chose PostgreSQL for the user database." in out
