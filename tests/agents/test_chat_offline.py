"""Offline chat answers from the memories that match the question (issue 18), not one of every type."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from recording_embedder import RecordingEmbedder

from mirix_py.agents.chat import cosines, indexed_vectors, matching_hits, matching_lines
from mirix_py.engine import Mirix
from mirix_py.records import EpisodicMemory, ProceduralMemory, SearchHit, SemanticMemory
from mirix_py.text.dates import day_words

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)


def _hit(memory, score):
    memory = memory.model_copy(update={"id": memory.id or f"x_{score}"})
    return SearchHit(memory=memory, text=memory.search_text(), score=score, method="hybrid")


def test_only_hits_holding_the_name_asked_about_match():
    tom = _hit(SemanticMemory(id="sem_1", user_id="u", name="Tom", summary="Tom is a pilot"), 0.2)
    proc = _hit(ProceduralMemory(id="proc_1", user_id="u", summary="Deploy the app", steps=["do it"]), 0.9)
    other = _hit(EpisodicMemory(id="epi_1", user_id="u", summary="I did the dishes", actor="user"), 0.8)
    assert [h.memory.id for h in matching_hits("What does Tom do?", [proc, other, tom])] == ["sem_1"]


def test_matching_hits_keep_the_search_order_however_many_words_they_share():
    a = _hit(EpisodicMemory(id="epi_a", user_id="u", summary="The garden needs water", actor="user"), 0.9)
    c = _hit(EpisodicMemory(id="epi_c", user_id="u", summary="I did the dishes", actor="user"), 0.5)
    b = _hit(EpisodicMemory(id="epi_b", user_id="u", summary="Water the garden roses on Sunday", actor="user"), 0.1)
    assert [h.memory.id for h in matching_hits("when do I water the garden roses", [a, c, b])] == ["epi_a", "epi_b"]


def test_a_summary_follows_the_turns_it_sums_up_however_well_it_matches():
    summary = _hit(EpisodicMemory(id="epi_s", user_id="u", summary="Ada waters the garden roses every Sunday",
                                  actor="Ada", source_ids=["m1", "m2"]), 0.9)
    turn = _hit(EpisodicMemory(id="epi_t", user_id="u", summary="The roses need water", actor="Ada",
                               source_ids=["in_1", "m1"]), 0.1)
    assert [h.memory.id for h in matching_hits("when does Ada water the garden roses", [summary, turn])] == [
        "epi_t", "epi_s"]


def test_a_summary_that_shares_only_a_name_with_the_question_does_not_match():
    """A summary names the people it sums up: the name asked about is no match by itself, for it."""
    summary = _hit(SemanticMemory(id="sem_s", user_id="u", name="Mel", summary="Mel is a great musician",
                                  source_ids=["in_1", "m1", "m2", "m3"]), 0.9)
    turn = _hit(EpisodicMemory(id="epi_t", user_id="u", summary="Mel: my kids painted a sunset with me",
                               actor="Mel", source_ids=["in_2", "m4"]), 0.1)
    question = "What do Mel and her kids paint?"
    assert [h.memory.id for h in matching_hits(question, [summary, turn], similarities=[0.6, 0.5])] == ["epi_t"]
    # a word besides the name makes a match, after the turn; a turn still matches by its meaning alone
    painted = _hit(summary.memory.model_copy(update={"id": "sem_p", "summary": "Mel paints with her kids"}), 0.9)
    assert [h.memory.id for h in matching_hits(question, [painted, turn], similarities=[0.6, 0.5])] == [
        "epi_t", "sem_p"]
    quiet = _hit(EpisodicMemory(id="epi_q", user_id="u", summary="Mel: we spent the afternoon outdoors",
                                actor="Mel", source_ids=["in_3", "m5"]), 0.1)
    assert [h.memory.id for h in matching_hits(question, [quiet], similarities=[0.5])] == ["epi_q"]


def test_a_time_question_keeps_the_hits_of_its_range():
    a = _hit(EpisodicMemory(id="epi_a", user_id="u", summary="Lunch with Bo", actor="user"), 0.5)
    assert matching_hits("what happened last week?", [a], timed=True) == [a]
    assert matching_hits("what happened last week?", [a], timed=False) == []


def test_core_lines_that_answer():
    lines = ["name: Ada", "likes bouldering", "prefers green tea"]
    assert matching_lines("what tea do I drink?", lines) == ["prefers green tea"]
    assert matching_lines("what is my name?", lines) == ["name: Ada"]


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "off", embedder=embedder)
    engine.add([
        {"role": "user", "name": "Ada", "id": "m1", "content": "My brother Tom is a pilot."},
        {"role": "user", "name": "Ada", "id": "m2", "content": "I prefer green tea."},
    ], user_id="ada", occurred_at=WHEN)
    engine.add("How to deploy:\n1. git pull\n2. make build\n3. make deploy", user_id="ada", occurred_at=WHEN)
    engine.add("# Quarterly report\n\nRevenue grew 4% on the quarter; costs were flat. " * 4, user_id="ada",
               kind="document", occurred_at=WHEN)
    yield engine
    engine.close()


def test_offline_chat_cites_only_what_matches(mx):
    response = mx.chat("What does Tom do?", user_id="ada", remember=False)
    cited = [mx.get(i, user_id="ada") for i in response.memory_ids]
    assert cited and all("Tom" in m.search_text() for m in cited)
    assert any("pilot" in m.search_text() for m in cited)
    assert not {m.memory_type.value for m in cited} & {"procedural", "resource"}


def test_a_short_follow_up_is_searched_with_the_users_turn_before_it(mx):
    """"and how do I deploy it?" names nothing alone; with the earlier turn it finds the steps. A
    question that says what it asks stands on its own words."""
    alone = mx.chat("and what are the steps?", user_id="ada", remember=False)
    assert "found no memories" in alone.answer
    history = [{"role": "user", "content": "How do I deploy the app?"}, {"role": "assistant", "content": "..."}]
    follow_up = mx.chat("and what are the steps?", user_id="ada", history=history, remember=False)
    assert any("make deploy" in mx.get(i, user_id="ada").search_text() for i in follow_up.memory_ids)
    own = mx.chat("What does Tom do?", user_id="ada", history=history, remember=False)
    cited = [mx.get(i, user_id="ada") for i in own.memory_ids]
    assert cited and all("Tom" in m.search_text() for m in cited)


def test_offline_chat_says_when_nothing_matches(mx):
    response = mx.chat("What is the capital of Peru?", user_id="ada", remember=False)
    assert response.memory_ids == [] and "found no memories" in response.answer


def test_offline_chat_answers_from_core_memory(mx):
    response = mx.chat("Which tea do I like?", user_id="ada", remember=False)
    assert "prefers green tea" in response.answer


def test_offline_chat_dates_the_core_lines_it_lists(mx):
    """A core line shows the day it was said, as `/context` shows it: undated, an old line reads as current."""
    (block,) = [b for b in mx.core_memory(user_id="ada").values() if "prefers green tea" in b.value]
    (line,) = [ln for ln in block.value.splitlines() if "prefers green tea" in ln]
    listed = mx.chat("Which tea do I like?", user_id="ada", remember=False).answer.splitlines()
    assert f"- [{block.id}] {line} (said {day_words(block.said_local()[line].date())})" in listed


def test_offline_chat_lists_what_was_said_before_the_core_lines_restating_it(mx):
    response = mx.chat("Which tea do I like?", user_id="ada", remember=False)
    listed = [line for line in response.answer.splitlines() if line.startswith("- [")]
    said = next(i for i, line in enumerate(listed) if "I prefer green tea" in line)
    core = next(i for i, line in enumerate(listed) if "prefers green tea" in line)
    assert listed[said].startswith("- [epi_") and listed[core].startswith("- [core_") and said < core


class _CountingEmbedder:
    """Deterministic vectors from the text's letters; counts what it was asked to embed."""

    def __init__(self):
        self.embedded: list[str] = []

    def embed(self, texts):
        self.embedded += list(texts)
        return [[float(text.count(c)) + 0.5 for c in "aeiourst"] for text in texts]


def test_cosines_embed_only_the_texts_without_a_vector_and_give_the_same_figures():
    texts = ["the roses need water", "Tom is a pilot", "deploy the app"]
    all_embedded = cosines(_CountingEmbedder().embed, "who waters roses", texts)
    embedder = _CountingEmbedder()
    known = [None, embedder.embed(["Tom is a pilot"])[0], None]
    embedder.embedded.clear()
    assert cosines(embedder.embed, "who waters roses", texts, known) == all_embedded
    assert embedder.embedded == ["who waters roses", "the roses need water", "deploy the app"]


def test_the_index_vectors_stand_for_hits_only_as_stored(mx):
    hits = mx.search("Tom pilot", user_id="ada", limit=5)
    episode = next(h for h in hits if isinstance(h.memory, (EpisodicMemory, SemanticMemory)))
    changed = episode.model_copy(update={"memory": episode.memory.model_copy(update={"summary": "Tom flies planes"})})
    stored = indexed_vectors(mx.store, [episode])
    fresh = mx.store.embedder.embed([episode.memory.embedding_text()])[0]
    assert list(stored) == [episode.memory.id]
    assert max(abs(a - b) for a, b in zip(stored[episode.memory.id], fresh)) < 1e-5
    assert indexed_vectors(mx.store, [changed]) == {}  # not the text the index embedded


def test_offline_chat_embeds_the_core_lines_once_across_calls(mx):
    """The core lines it weighs are the same from one call to the next: kept, not embedded again."""
    inner = mx.searcher.embedder.inner
    asked: list[str] = []
    embed = inner.embed

    def counting(texts):
        asked.extend(texts)
        return embed(texts)

    inner.embed = counting
    try:
        first = mx.chat("Which tea do I like?", user_id="ada", remember=False)
        lines = [line for block in mx.core_memory(user_id="ada").values() for line in block.value.splitlines()
                 if line.strip()]
        assert lines and all(line in asked for line in lines)
        asked.clear()
        again = mx.chat("Which tea do I like?", user_id="ada", remember=False)
        assert again.answer == first.answer
        assert not any(line in asked for line in lines)
    finally:
        inner.embed = embed


def test_offline_chat_keeps_the_question_and_core_lines_for_the_user_who_asked(tmp_path, embedder):
    """Another user asking the same words about the same lines has them embedded anew: finding them
    kept would answer faster and tell them what the first user asked and holds."""
    recording = RecordingEmbedder(embedder)
    engine = Mirix(tmp_path / "two", embedder=recording)
    try:
        for user in ("ada", "bob"):
            engine.add([{"role": "user", "name": "Ada", "content": "I prefer green tea."}], user_id=user,
                       occurred_at=WHEN)
        embedded = []
        for user in ("ada", "bob", "ada"):
            recording.texts.clear()
            engine.chat("Which tea do I like?", user_id=user, remember=False)
            embedded.append(list(recording.texts))
        line = "Ada: prefers green tea"
        for user in ("ada", "bob"):  # the same core line in each user's block
            assert any(line in block.value.splitlines() for block in engine.core_memory(user_id=user).values())
        assert [texts.count("Which tea do I like?") for texts in embedded] == [1, 1, 0]
        assert [texts.count(line) for texts in embedded] == [1, 1, 0]
    finally:
        engine.close()
