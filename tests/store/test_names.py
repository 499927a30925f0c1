"""A question that names people is also searched without the names, and the named people's own
memories are preferred among the first results."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from recording_embedder import RecordingEmbedder

from mirix_py.tools.ops import InsertOp
from mirix_py.records import EpisodicMemory
from mirix_py.store.names import actor_leg, named_actors, without_names
from mirix_py.store.search import ACTOR_WEIGHT, NAME_FREE_WEIGHT, QUESTION_SHARE, Searcher, fuse_named, rrf_fuse


def test_actors_are_named_as_whole_words_whatever_the_case():
    actors = ["Jon", "Gina", "Jo", "Jon", "", "user"]
    assert named_actors("Which cities has jon visited with Gina?", actors) == ["Gina", "Jon"]
    assert named_actors("What did Joanna bake?", actors) == []  # "Jo" is not a word of it
    assert named_actors("What is Mary Ann's job?", ["Mary", "Mary Ann"]) == ["Mary Ann", "Mary"]


def test_the_names_and_their_possessive_are_taken_out():
    assert without_names("What is Nate's favorite game?", ["Nate"]) == "What is favorite game?"
    assert without_names("What does Gina give to Jon?", ["Jon", "Gina"]) == "What does give to ?"
    assert without_names("Jon?", ["Jon"]) == ""


def test_the_actor_leg_keeps_the_named_peoples_memories_in_order():
    actor_of = {"a": "Jon", "b": "Gina", "c": "jon", "d": None}
    assert actor_leg(["d", "c", "b", "a", "e"], actor_of, ["Jon"]) == ["c", "a"]
    assert actor_leg(["a", "b"], actor_of, []) == []


def test_fusion_weighs_the_name_free_legs_over_the_question_and_prefers_the_named():
    question = [["short", "other", "paris"], ["short", "other", "paris"]]  # the name matches short turns
    name_free = [["paris", "rome", "short"], ["rome", "paris", "other"]]
    actor_of = {"short": "Jon", "other": "Gina", "paris": "Jon", "rome": "Gina"}
    asked: list[list[str]] = []

    def actors(ids):
        asked.append(list(ids))
        return {i: actor_of[i] for i in ids}

    fused = fuse_named(question, [1.0, 1.0], name_free, actors, ["Jon"], top=3)
    assert [i for i, _ in fused][:2] == ["paris", "short"]
    assert len(asked) == 1 and len(asked[0]) == 3  # only the first `top` are looked up
    weights = [QUESTION_SHARE, QUESTION_SHARE, NAME_FREE_WEIGHT, NAME_FREE_WEIGHT, ACTOR_WEIGHT]
    legs = [*question, *name_free, actor_leg(asked[0], actor_of, ["Jon"])]
    assert fused == rrf_fuse(legs, weights=weights)  # pure: the same legs give the same ranking
    without = rrf_fuse(question)
    assert [i for i, _ in without][0] == "short"


def test_hybrid_search_finds_what_a_named_person_said_about_the_topic(mx_sqlite, user_id):
    t0 = datetime(2023, 1, 20, 16, 0, tzinfo=timezone.utc)
    said = [("Jon", "Thanks!"), ("Jon", "Bye!"), ("Jon", "Agreed!"), ("Gina", "Rome was lovely in the spring."),
            ("Jon", "Last month I flew to Paris and walked around Montmartre all day."), ("Jon", "Sure, see you.")]
    ops = [InsertOp(memory=EpisodicMemory(user_id=user_id, summary=text, actor=who, event_type="message",
                                          occurred_at=t0 + timedelta(seconds=i), source_ids=[f"D1:{i}"]))
           for i, (who, text) in enumerate(said)]
    mx_sqlite.store.apply(ops, user_id=user_id, actor="seed")
    question = "Which cities has Jon visited?"
    found = {}
    for on in (True, False):
        searcher = Searcher(mx_sqlite.store, name_legs=on)
        found[on] = [h.text for h in searcher.search(question, user_id=user_id, limit=3)]
        searcher.close()
    assert "Paris" in found[True][0], found[True]
    assert "Paris" not in found[False][0], found[False]  # the name alone ranks Jon's empty turns first


def seed_talk(mx, user_id: str) -> None:
    t0 = datetime(2023, 1, 20, 16, 0, tzinfo=timezone.utc)
    said = [("Jon", "Thanks!"), ("Jon", "Bye!"), ("Gina", "Rome was lovely in the spring."),
            ("Jon", "Last month I flew to Paris and walked around Montmartre all day."),
            ("Gina", "My dance studio opens in May."), ("Jon", "I lost my job at the bank.")]
    mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary=text, actor=who, event_type="message",
                                                   occurred_at=t0 + timedelta(seconds=i)))
                    for i, (who, text) in enumerate(said)], user_id=user_id, actor="seed")


def hits(searcher: Searcher, question: str, user_id: str) -> list[tuple[str, float]]:
    return [(h.memory.id, h.score) for h in searcher.search(question, user_id=user_id, limit=4)]


def test_a_question_naming_someone_is_embedded_without_the_name_only(mx_sqlite, user_id, embedder):
    seed_talk(mx_sqlite, user_id)
    recording = RecordingEmbedder(embedder)
    mx_sqlite.store.embedder = recording
    searcher = Searcher(mx_sqlite.store)
    found = hits(searcher, "Where did Jon fly last month?", user_id)  # the first search: nothing learnt before
    assert recording.texts == ["Where did fly last month?"]
    recording.texts.clear()
    assert hits(searcher, "Where did Jon fly last month?", user_id) == found  # the same ranking again
    searcher.close()


def test_only_the_users_own_actors_are_names(mx_sqlite, user_id):
    seed_talk(mx_sqlite, user_id)
    other = user_id + "-other"
    mx_sqlite.store.apply([InsertOp(memory=EpisodicMemory(user_id=other, summary="Ciao!", actor="Rome",
                                                          event_type="message"))], user_id=other, actor="seed")
    on, off = Searcher(mx_sqlite.store, name_legs=True), Searcher(mx_sqlite.store, name_legs=False)
    for question in ["Who was in Rome in the spring?", "Did anyone like Paris?"]:  # no actor of this user
        assert hits(on, question, user_id) == hits(off, question, user_id)
    assert hits(on, "Where did Jon fly?", user_id) != hits(off, "Where did Jon fly?", user_id)
    for s in (on, off):
        s.close()


def test_a_joined_question_reads_the_users_actors_once_and_names_them_in_each_half(mx_sqlite, user_id, embedder):
    seed_talk(mx_sqlite, user_id)
    recording = RecordingEmbedder(embedder)
    mx_sqlite.store.embedder = recording
    store = mx_sqlite.store
    asked: list[str] = []
    plain = store.actors
    store.actors = lambda *, user_id: asked.append(user_id) or plain(user_id=user_id)  # type: ignore[method-assign]
    searcher = Searcher(store)
    hits(searcher, "Where did Jon fly, and when did Gina move?", user_id)
    assert asked == [user_id]
    assert sorted(recording.texts) == ["Where did fly", "when did move"]  # each half without its name
    searcher.close()
