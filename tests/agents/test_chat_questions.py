"""Chat feeds its exchange back into memory, but a question asked (twice) never outranks the fact
that answers it; `remember=False` (and `mirix chat --no-remember`) stores nothing."""

from __future__ import annotations

import json

import pytest

from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest
from mirix_py.settings import Settings
from mirix_py.store.questions import QUESTION_PREFIX, asks_only
from mirix_py.store.restatements import weigh_down

FACT = "I adopted a cat named Miso"
OTHER = "I work at Acme as an engineer and my sister lives in Oslo"
QUESTION = "what pet do I have?"


def _seed(mx):
    mx.add(FACT, user_id="ada")
    mx.add(OTHER, user_id="ada")


def test_offline_questions_asked_twice_stay_below_the_fact(tmp_path, embedder):
    with Mirix(tmp_path / "d", embedder=embedder) as mx:
        _seed(mx)
        for _ in range(2):
            response = mx.chat(QUESTION, user_id="ada")
            assert response.update_input_ids  # the exchange is stored
        mx.flush()
        stored = [m for m in mx.list(user_id="ada") if QUESTION in m.search_text()]
        # the same question twice is one episode citing both exchanges (a repeat adds provenance)
        (asked,) = stored
        assert asks_only(asked.source_ids) and sum(s.startswith(QUESTION_PREFIX) for s in asked.source_ids) == 2
        hits = mx.search(QUESTION, user_id="ada")
        assert FACT in hits[0].text
        again = mx.chat(QUESTION, user_id="ada", remember=False)
        assert FACT in mx.get(again.memory_ids[0], user_id="ada").search_text()


def test_remember_false_stores_nothing(tmp_path, embedder):
    with Mirix(tmp_path / "d", embedder=embedder) as mx:
        _seed(mx)
        before = mx.stats(user_id="ada")["memories"]
        response = mx.chat(QUESTION, user_id="ada", remember=False)
        mx.flush()
        assert response.update_input_ids == [] and mx.stats(user_id="ada")["memories"] == before


def test_with_a_model_the_question_and_answer_are_stored_and_the_fact_stays_first(tmp_path, embedder):
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic"]})]
        if req.agent == "episodic_memory_manager":
            ids = [line.split("id=")[1].split()[0].strip("]") for line in req.last_text.splitlines() if "id=" in line]
            questions = [i for i in ids if i.startswith(QUESTION_PREFIX)]
            if questions:  # a model that writes the question down as an episode of its own
                return [("insert_episodic", {"summary": "Ada asked what pet she has", "actor": "Ada",
                                             "source_ids": questions})]
            return [("insert_episodic", {"summary": "Ada adopted a cat named Miso", "actor": "Ada"})]
        if req.agent == "topic_extractor":
            return '{"topics": ["pet"], "start": null, "end": null}'
        if req.agent == "chat_agent":
            return "You asked before; I do not know."
        return [("nothing_to_record", {"reason": "nothing new"})]

    client = ScriptedChatCompletionClient(script)
    with Mirix(settings=Settings(data_dir=tmp_path / "d"), embedder=embedder, model_client=client) as mx:
        mx.add(FACT, user_id="ada")
        for _ in range(2):
            mx.chat(QUESTION, user_id="ada")
        mx.flush()
        asked = [m for m in mx.list(user_id="ada") if QUESTION in m.search_text() or "Ada asked" in m.search_text()]
        assert asked and all(asks_only(m.source_ids) for m in asked)
        hits = mx.search(QUESTION, user_id="ada")
        assert "Miso" in hits[0].text


def test_question_only_memories_are_weighed_down_stably():
    class M:
        def __init__(self, sources):
            self.source_ids = sources

    records = {"q": M(["in_1", QUESTION_PREFIX + "abc"]), "f": M(["in_2", "m1"]), "g": M(["in_3"])}
    assert weigh_down([("q", 0.09), ("f", 0.05), ("g", 0.04)], records) == [("f", 0.05), ("g", 0.04),
                                                                            ("q", pytest.approx(0.0225))]
    assert not asks_only(["in_1"]) and not asks_only(["in_1", QUESTION_PREFIX + "a", "m1"])
    assert asks_only(["in_1", QUESTION_PREFIX + "a", "chat-a-a"])  # an exchange's answer restates memory too


def test_cli_chat_no_remember(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mirix_py.cli.commands import app

    data = tmp_path / "data"
    data.mkdir()
    runner = CliRunner()
    runner.invoke(app, ["add", FACT, "-u", "ada", "-d", str(data)])
    out = runner.invoke(app, ["chat", QUESTION, "-u", "ada", "-d", str(data), "--no-remember", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["update_input_ids"] == []
    listed = json.loads(runner.invoke(app, ["list", "-u", "ada", "-d", str(data), "--json"]).stdout)
    assert all(QUESTION not in json.dumps(m) for m in listed)
