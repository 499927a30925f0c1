"""Hybrid, BM25, embedding and substring search with type, user and time filters."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

import pytest
from recording_embedder import RecordingEmbedder

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.tools.ops import InsertOp
from mirix_py.records import EpisodicMemory, ProceduralMemory, ResourceMemory, SemanticMemory

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)

EPISODES = [
    "Went kayaking on the lake with Sam",
    "Baked sourdough bread for the first time",
    "Had a dentist appointment about a wisdom tooth",
    "Watched a documentary about octopuses",
    "Fixed the flat tyre on my road bike",
]


@pytest.fixture
def seeded(mx, user_id):
    ops = [InsertOp(memory=EpisodicMemory(user_id=user_id, summary=s, actor="me", occurred_at=T0 + timedelta(days=i)))
           for i, s in enumerate(EPISODES)]
    ops.append(InsertOp(memory=SemanticMemory(user_id=user_id, name="Sam", summary="Sam is my kayaking partner")))
    ops.append(InsertOp(memory=ProceduralMemory(user_id=user_id, summary="How to repair a bicycle puncture",
                                                steps=["remove the wheel", "patch the tube", "inflate"])))
    mx.store.apply(ops, user_id=user_id, actor="seed")
    mx.store.apply([InsertOp(memory=EpisodicMemory(user_id="other", summary="Went kayaking alone", occurred_at=T0))],
                   user_id="other", actor="seed")
    return mx


@pytest.mark.parametrize("method", ["hybrid", "bm25", "embedding"])
def test_each_method_finds_the_relevant_memory(seeded, user_id, method):
    hits = seeded.search("kayaking on the lake", user_id=user_id, method=method, limit=3)
    assert hits and "kayaking" in hits[0].text
    assert all(h.memory.user_id == user_id for h in hits)
    assert hits[0].score >= hits[-1].score


def test_embedding_search_finds_paraphrases(seeded, user_id):
    hits = seeded.search("fixing a puncture on a bicycle", user_id=user_id, method="embedding", limit=2)
    assert any("tyre" in h.text or "puncture" in h.text for h in hits)


def test_hit_carries_prompt_text_and_record(seeded, user_id):
    hit = seeded.search("sourdough", user_id=user_id, limit=1)[0]
    assert hit.text == "[2 March 2024, 09:00] me: Baked sourdough bread for the first time"
    assert hit.memory.memory_type.value == "episodic"
    assert hit.memory.occurred_at == T0 + timedelta(days=1)


@pytest.mark.parametrize("method", ["hybrid", "bm25", "string"])
def test_a_passage_deep_in_a_long_document_is_found(seeded, user_id, method):
    pages = [f"Page {i}. Minutes of the garden committee: hedges, compost and the watering rota." for i in range(60)]
    pages[47] = "Page 47. The boiler service code is kept in the red binder in the cellar."
    doc = ResourceMemory(user_id=user_id, title="House manual", summary="Notes on the house", content="\n".join(pages))
    seeded.store.apply([InsertOp(memory=doc)], user_id=user_id, actor="seed")
    query = "boiler service code" if method != "string" else "red binder"
    hits = seeded.search(query, user_id=user_id, method=method, limit=3)
    assert hits[0].memory.title == "House manual" and "red binder in the cellar" in hits[0].text


PLACES = ["beach", "field", "park", "hill", "dunes", "pier", "farm", "lake"]


def _shuffled_days(n):
    return [(d * 5) % n for d in range(n)]  # inserted out of time order: ids and rows say nothing of it


def test_equal_full_text_scores_go_earlier_said_first_whatever_the_ids(mx, user_id):
    days = _shuffled_days(len(PLACES))
    mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary=f"Flew the kite at the {PLACES[d]}",
                                                   actor="me", occurred_at=T0 + timedelta(days=d))) for d in days],
                   user_id=user_id, actor="seed")
    hits = mx.search("kite", user_id=user_id, method="bm25", limit=3)
    assert len({h.score for h in hits}) == 1  # the same terms, the same length: one score
    assert [h.memory.occurred_at for h in hits] == [T0 + timedelta(days=d) for d in range(3)]


def test_equal_vectors_go_earlier_said_first_whatever_the_index(mx, user_id):
    days = _shuffled_days(6)
    mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary="Thanks, see you soon!", actor="me",
                                                   occurred_at=T0 + timedelta(days=d))) for d in days],
                   user_id=user_id, actor="seed")
    hits = mx.search("see you soon", user_id=user_id, method="embedding", limit=2)
    assert [h.memory.occurred_at for h in hits] == [T0, T0 + timedelta(days=1)]


def test_type_filter(seeded, user_id):
    hits = seeded.search("kayaking", user_id=user_id, memory_types=["semantic"], limit=5)
    assert [h.memory.memory_type.value for h in hits] == ["semantic"]


@pytest.mark.parametrize("method", ["hybrid", "bm25", "embedding", "string"])
def test_time_range_filter(seeded, user_id, method):
    query = "the" if method == "string" else "appointment kayaking bread documentary tyre"
    hits = seeded.search(query, user_id=user_id, start=T0 + timedelta(days=1), end=T0 + timedelta(days=3),
                         memory_types=["episodic"], method=method, limit=10)
    assert hits
    for hit in hits:
        assert T0 + timedelta(days=1) <= hit.memory.occurred_at < T0 + timedelta(days=3)


def test_string_search_is_case_insensitive_substring(seeded, user_id):
    hits = seeded.search("SOURDOUGH bread", user_id=user_id, method="string")
    assert len(hits) == 1 and "sourdough" in hits[0].text
    assert seeded.search("100%_", user_id=user_id, method="string") == []


def test_users_are_isolated(seeded, user_id):
    hits = seeded.search("kayaking alone", user_id="other", limit=10)
    assert [h.memory.user_id for h in hits] == ["other"]


def test_bad_queries_are_rejected(seeded, user_id):
    with pytest.raises(InvalidInput):
        seeded.search("   ", user_id=user_id)
    with pytest.raises(InvalidInput):
        seeded.search("x", user_id=user_id, method="telepathy")
    with pytest.raises(InvalidInput):
        seeded.search("x", user_id=user_id, memory_types=["dreams"])
    with pytest.raises(InvalidInput):
        seeded.search("x", user_id=user_id, start="2024-01-01T00:00:00")  # naive


def test_without_embedder_search_falls_back_to_bm25_and_says_so_once(tmp_path, caplog, user_id):
    from mirix_py.engine import Mirix

    with Mirix(tmp_path / "noemb", embedder=None) as mx:
        mx.add("I repaired the garden fence on Sunday", user_id=user_id)
        with caplog.at_level(logging.WARNING, logger="mirix_py.search"):
            first = mx.search("garden fence", user_id=user_id)
            mx.search("fence", user_id=user_id, method="embedding")
        assert first and "fence" in first[0].text
        warnings = [r for r in caplog.records if "full text" in r.getMessage()]
        assert len(warnings) == 1
        assert mx.describe()["search"] == "bm25-only"


def test_chroma_server_backend(tmp_path, embedder, chroma_url, user_id):
    from mirix_py.engine import Mirix

    with Mirix(tmp_path / "srv", embedder=embedder, chroma_url=chroma_url) as mx:
        mx.add("Our cat Miso sleeps on the radiator", user_id=user_id)
        hits = mx.search("where does the cat nap", user_id=user_id, method="embedding")
        assert hits and "Miso" in hits[0].text
        assert mx.describe()["vectors"] == "chroma-server"
        assert not (tmp_path / "srv" / "chroma").exists()
        mx.delete_user(user_id)
        assert mx.store.vectors.count(user_id) == 0


def test_a_chroma_url_with_a_path_is_a_database_of_its_own(chroma_url, user_id):
    from uuid import uuid4

    from mirix_py.store.vectors import ChromaVectorIndex, VectorItem

    one = ChromaVectorIndex.server(f"{chroma_url}/t_{uuid4().hex[:12]}")
    two = ChromaVectorIndex.server(f"{chroma_url}/t_{uuid4().hex[:12]}")
    one.upsert(user_id, [VectorItem("sem_" + "a" * 32, [1.0, 0.0, 0.0], "semantic")])
    assert one.users() == {user_id: one.users()[user_id]} and one.count(user_id) == 1
    assert two.users() == {} and two.count(user_id) == 0  # doctor of `two` sees no orphan of `one`
    with pytest.raises(InvalidInput, match="Chroma database name 'x'"):
        ChromaVectorIndex.server(chroma_url.rstrip("/") + "/x")


def test_a_core_block_hit_shows_the_lines_the_query_asks_about(mx, user_id):
    from mirix_py.records import CoreMemory
    from mirix_py.store.search import hit_text

    block = CoreMemory(user_id=user_id, label="human", value="\n".join(
        ["name: Ada", "lives in Leeds", "works at Monzo", "likes kayaking", "favorite book: Dune"]))
    assert hit_text(block, "where does Ada go kayaking?") == "[core:human] name: Ada\nlikes kayaking"
    assert hit_text(block, "anything new?") == "[core:human] name: Ada\nlives in Leeds\nworks at Monzo"  # first lines
    short = CoreMemory(user_id=user_id, label="human", value="likes tea\nlives in York")
    assert hit_text(short, "tea") == short.search_text()
    mx.store.apply([InsertOp(memory=block)], user_id=user_id, actor="seed")
    hit = next(h for h in mx.search("kayaking", user_id=user_id, method="bm25") if h.memory.memory_type == "core")
    assert hit.text == "[core:human] likes kayaking" and hit.memory.value == block.value  # the record keeps it all


@pytest.mark.parametrize("lines, word", [
    (["住在北京", "有一只猫", "周末去爬山", "女儿在上海学习钢琴", "在银行工作"], "钢琴"),  # piano, inside a run
    (["อาศัยอยู่ที่เชียงใหม่", "มีแมวหนึ่งตัว", "วันหยุดไปปีนเขา", "ไปตลาดกับแม่ทุกเช้า", "ทำงานที่ธนาคาร"], "ตลาด"),  # market
    (["يسكن في القاهرة", "عنده قطة", "يتسلق الجبال", "يدرس الموسيقى في المعهد", "يعمل في بنك"], "الموسيقى"),  # music
])
def test_a_core_block_hit_shows_its_line_holding_a_word_beyond_english(lines, word):
    """A word inside Chinese or Thai text is matched by its pairs, as full text finds it; an Arabic word as written."""
    from mirix_py.records import CoreMemory
    from mirix_py.store.search import hit_text

    assert hit_text(CoreMemory(user_id="u", label="human", value="\n".join(lines)), word) == f"[core:human] {lines[3]}"


def test_a_question_joining_two_questions_gets_the_best_answer_to_each_half(mx, user_id):
    """The half with more matching memories does not fill the first results."""
    deploys = [EpisodicMemory(user_id=user_id, actor="me", occurred_at=T0 + timedelta(minutes=i),
                              summary=f"Terminal: ran the staging deploy command for project falcon, build {i}")
               for i in range(12)]
    overview = SemanticMemory(user_id=user_id, name="Falcon overview document",
                              summary="The overview document says Falcon is an analytics platform for retail stores")
    mx.store.apply([InsertOp(memory=m) for m in [*deploys, overview]], user_id=user_id, actor="seed")
    question = ("Which project does the staging deploy command in my terminal deploy, "
                "and what does that project's overview document say it is?")
    first = [h.memory for h in mx.search(question, user_id=user_id, limit=3)][:2]
    assert any(isinstance(m, SemanticMemory) and "analytics platform" in m.summary for m in first)
    assert any(isinstance(m, EpisodicMemory) and "deploy" in m.summary for m in first)


def test_chat_turns_past_the_first_hits_are_shown_without_small_talk(mx, user_id):
    from mirix_py.store.search import WHOLE_HITS, hit_text

    turns = [EpisodicMemory(user_id=user_id, actor="John", occurred_at=T0 + timedelta(minutes=i),
                            summary=f"Thanks, Maria! I went kayaking on lake number {i} with my workmates. Wow!")
             for i in range(WHOLE_HITS + 3)]
    screen = EpisodicMemory(user_id=user_id, actor="me", event_type="screen_activity", occurred_at=T0,
                            summary="Thanks! Kayaking rental open. Wow!")
    mx.store.apply([InsertOp(memory=m) for m in [*turns, screen]], user_id=user_id, actor="seed")
    hits = mx.search("kayaking lake workmates", user_id=user_id, limit=len(turns) + 1, method="bm25")
    chat = [h for h in hits if h.memory.event_type == "message"]
    assert len(chat) == len(turns)
    for rank, hit in enumerate(hits):
        memory = hit.memory
        assert memory.summary.startswith("Thanks")  # the record keeps every word
        if rank < WHOLE_HITS or memory.event_type != "message":
            assert hit.text == memory.search_text()
        else:
            assert hit.text == hit_text(memory, "kayaking", whole=False) != memory.search_text()
            assert "Thanks" not in hit.text and "Wow" not in hit.text and "John: I went kayaking" in hit.text
    assert hit_text(screen, "kayaking", whole=False) == screen.search_text()  # a screen's text is not a chat turn


def test_whole_hits_sets_how_many_hits_are_shown_as_said(mx, user_id):
    from mirix_py.store.search import Searcher

    turns = [EpisodicMemory(user_id=user_id, actor="Ann", occurred_at=T0 + timedelta(minutes=i),
                            summary=f"Wow! I baked sourdough loaf number {i} this morning.") for i in range(6)]
    mx.store.apply([InsertOp(memory=m) for m in turns], user_id=user_id, actor="seed")
    every = Searcher(mx.store, whole_hits=10).search("sourdough loaf", user_id=user_id, limit=6, method="bm25")
    assert [h.text for h in every] == [h.memory.search_text() for h in every]
    none = Searcher(mx.store, whole_hits=0).search("sourdough loaf", user_id=user_id, limit=6, method="bm25")
    assert none and all("Wow" not in h.text and "Ann: I baked sourdough" in h.text for h in none)
    with pytest.raises(InvalidInput, match="whole_hits"):
        Searcher(mx.store, whole_hits=-1)


def test_a_question_asking_for_one_moment_sees_the_turns_past_the_first_hits_as_their_sentences_about_it(mx, user_id):
    from mirix_py.store.search import WHOLE_HITS

    turns = [EpisodicMemory(user_id=user_id, actor="Nate", occurred_at=T0 + timedelta(days=i),
                            summary=f"Long time no see, Joanna. I won regional tournament number {i} last week! "
                                    "The cat of Nate is doing great too.")
             for i in range(WHOLE_HITS + 3)]
    mx.store.apply([InsertOp(memory=m) for m in turns], user_id=user_id, actor="seed")
    when = mx.search("When did Nate win a regional tournament?", user_id=user_id, limit=len(turns), method="bm25")
    what = mx.search("What regional tournament did Nate win?", user_id=user_id, limit=len(turns), method="bm25")
    assert len(when) == len(what) == len(turns)
    for rank, (hit, other) in enumerate(zip(when, what)):
        assert hit.memory.summary.startswith("Long time no see")  # the record keeps every word
        if rank < WHOLE_HITS:
            assert hit.text == hit.memory.search_text()
        else:  # "Nate" is a name the user's memories were said by: it does not make a sentence about the question
            assert "Nate: I won regional tournament number" in hit.text
            assert "cat" not in hit.text and "Long time" not in hit.text
            assert "cat" in other.text  # another question's hits keep the sentences it does not share words with


def test_a_type_the_user_has_none_of_finds_nothing(seeded, user_id):
    assert seeded.store.types_held(user_id=user_id) == {"episodic", "semantic", "procedural"}
    assert seeded.search("kayaking", user_id=user_id, memory_types=["resource", "knowledge_vault"]) == []


@pytest.mark.parametrize("method", ["hybrid", "bm25", "embedding", "string"])
def test_a_time_range_holding_none_of_the_users_memories_finds_nothing(seeded, user_id, method):
    hour = (T0, T0 + timedelta(hours=1))  # the user's first episode, and the other user's
    assert seeded.store.holds_between(user_id=user_id, memory_types=["episodic"], start=hour[0], end=hour[1])
    assert not seeded.store.holds_between(user_id=user_id, memory_types=["procedural"], start=hour[0], end=hour[1])
    assert seeded.store.holds_between(user_id=user_id, memory_types=["episodic"], start=hour[1], end=None)
    before = seeded.search("kayaking", user_id=user_id, start=T0 - timedelta(days=30), end=T0, method=method)
    assert before == []
    assert seeded.search("kayaking", user_id=user_id, memory_types=["procedural"], start=hour[0], end=hour[1],
                         method=method) == []
    found = seeded.search("kayaking", user_id=user_id, start=hour[0], end=hour[1], method=method)
    assert [h.memory.occurred_at for h in found] == [T0] and found[0].memory.user_id == user_id


@pytest.mark.parametrize("method", ["hybrid", "bm25", "embedding"])
def test_a_filter_leaving_out_a_few_memories_or_many_returns_only_the_types_asked(mx, user_id, method):
    """Leaving out 3 facts (dropped from an unfiltered vector query) or 70 (filtered on type), the
    episodes come back as they ranked before there were facts, and no fact."""
    episodes = [InsertOp(memory=EpisodicMemory(user_id=user_id, summary=f"Went kayaking on lake {i}", actor="me",
                                               occurred_at=T0 + timedelta(days=i))) for i in range(5)]
    mx.store.apply(episodes, user_id=user_id, actor="seed")
    alone = mx.search("kayaking on the lake", user_id=user_id, memory_types=["episodic"], method=method, limit=5)
    for facts in (3, 67):
        mx.store.apply([InsertOp(memory=SemanticMemory(user_id=user_id, name=f"Lake {i}", summary=f"Kayaking on lake {i}"))
                        for i in range(facts)], user_id=user_id, actor="seed")
        hits = mx.search("kayaking on the lake", user_id=user_id, memory_types=["episodic", "procedural"],
                         method=method, limit=5)
        assert [h.memory.id for h in hits] == [h.memory.id for h in alone]


@pytest.mark.parametrize("method", ["hybrid", "embedding"])
def test_a_question_one_user_searched_is_embedded_anew_for_another(tmp_path, embedder, method):
    """The searcher keeps a user's question's vector for that user's next search alone: another user's
    search finding it kept would answer faster, telling them what was asked."""
    recording = RecordingEmbedder(embedder)
    mx = Mirix(tmp_path / "data", embedder=recording)
    try:
        for user in ("ada", "bob"):
            mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user, summary=f"{user} met a divorce lawyer",
                                                           actor="me", occurred_at=T0))], user_id=user, actor="seed")
        question = "who is the divorce lawyer"
        embedded, found = [], []
        for user in ("ada", "bob", "ada"):
            recording.texts.clear()
            found.append([h.memory.summary for h in mx.search(question, user_id=user, method=method, limit=1)])
            embedded.append(recording.texts.count(question))
        assert embedded == [1, 1, 0]  # bob's first search embeds it; ada's second finds hers kept
        assert found == [["ada met a divorce lawyer"], ["bob met a divorce lawyer"], ["ada met a divorce lawyer"]]
    finally:
        mx.close()
