"""Sessions: each input's episodes as one BM25 document, kept exact by every write, and the hybrid
search leg that ranks a session's turns together."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text as sql

from mirix_py.engine import Mirix
from mirix_py.tools.ops import InsertOp
from mirix_py.records import EpisodicMemory, SemanticMemory
from mirix_py.settings import Settings
from mirix_py.store.search import Searcher, session_leg, top_sessions
from mirix_py.store.sessions import input_of

T0 = datetime(2023, 5, 1, 10, 0, tzinfo=timezone.utc)
CAMPING = [("Ann", "We went camping at the lake last weekend."), ("Bob", "Did you catch anything there?"),
           ("Ann", "Yes, two trout and a pike!")]
BAKERY = [("Ann", "My sister opened a bakery downtown."), ("Bob", "Does she sell croissants?")]


def add(mx: Mirix, turns, start: datetime, user_id: str = "ann") -> str:
    messages = [{"role": "user", "name": who, "content": text, "occurred_at": start + timedelta(minutes=i)}
                for i, (who, text) in enumerate(turns)]
    result = mx.add(messages, user_id=user_id, occurred_at=start)
    assert result.status.value == "processed"
    return result.input_ids[0]


def sessions_of(mx: Mirix) -> dict[str, str]:
    with mx.engine.connect() as conn:
        return dict(conn.execute(sql("SELECT input_id, text FROM memory_session")).all())


def episode(mx: Mirix, words: str, user_id: str = "ann") -> EpisodicMemory:
    return next(m for m in mx.list(user_id=user_id, memory_types=["episodic"]) if words in m.search_text())


# ------------------------------------------------------------------ pure parts


def test_an_episode_belongs_to_the_input_its_sources_name():
    assert input_of("episodic", ["in_1", "chat-7", "D1:3"]) == "in_1"  # the offline rules: input first
    assert input_of("episodic", ["D1:3", "in_1"]) == "in_1"  # a model cites messages, the input comes last
    assert input_of("episodic", ["D1:3"]) == "D1:3"  # a batch of several inputs: the cited message
    assert input_of("episodic", ["x" * 300]) is None  # wider than the column: no session


def test_other_types_and_unsourced_episodes_have_no_session():
    assert input_of("semantic", ["in_1"]) is None
    assert input_of("episodic", []) is None


def test_the_leg_goes_session_by_session_in_the_fused_order_then_in_time():
    members = {"s1": ["a", "b", "c"], "s2": ["d", "e"]}
    assert session_leg(["s2", "s1"], members, fused=["c", "e", "x", "a"]) == ["e", "d", "c", "a", "b"]
    assert session_leg([], members, fused=["c"]) == []
    assert session_leg(["s3"], members, fused=["c"]) == []  # a session with nothing listed adds nothing


def test_equal_session_scores_go_by_id_not_by_index_order():
    assert top_sessions([("b", 2.0), ("a", 2.0), ("c", 3.0), ("d", 1.0)], 3) == ["c", "a", "b"]


# ------------------------------------------------------------------ the index, on both SQL backends


@pytest.fixture
def store(tmp_path, backend):
    mx = Mirix(tmp_path / "data", embedder=None, database_url=backend)
    yield mx
    mx.close()


def test_each_input_is_one_document_of_its_episodes(store):
    camping = add(store, CAMPING, T0)
    bakery = add(store, BAKERY, T0 + timedelta(days=3))
    texts = sessions_of(store)
    assert set(texts) == {camping, bakery}
    assert texts[camping].splitlines() == [episode(store, w).search_text() for w in ("camping", "catch", "trout")]
    assert all(m.memory_type.value == "episodic" for m in store.list(user_id="ann") if input_of(
        m.memory_type.value, m.source_ids))
    with store.engine.connect() as conn:
        # "lake" and "trout" are said in two turns of one session: it ranks first as a whole
        assert [i for i, _ in store.store.sessions.search(conn, "trout at the lake", "ann", 5)] == [camping]
        assert store.store.sessions.search(conn, "trout at the lake", "bob", 5) == []


def test_deletes_updates_and_undo_keep_sessions_exact(store):
    camping = add(store, CAMPING, T0)
    bakery = add(store, BAKERY, T0 + timedelta(days=3))
    store.delete(episode(store, "trout").id, user_id="ann")
    assert "trout" not in sessions_of(store)[camping] and "camping" in sessions_of(store)[camping]
    catch = episode(store, "catch")
    store.update(catch.id, {"summary": "Did you catch any perch?"}, user_id="ann")
    assert "perch" in sessions_of(store)[camping]
    store.undo(bakery, user_id="ann")
    assert set(sessions_of(store)) == {camping}
    for m in store.list(user_id="ann", memory_types=["episodic"]):
        store.delete(m.id, user_id="ann")
    assert sessions_of(store) == {}


def test_deleting_a_user_leaves_the_others_sessions(store):
    add(store, CAMPING, T0)
    kept = add(store, BAKERY, T0, user_id="bob")
    store.delete_user("ann")
    assert set(sessions_of(store)) == {kept}
    with store.engine.connect() as conn:
        assert store.store.sessions.search(conn, "bakery croissants", "bob", 3)[0][0] == kept


def test_rebuild_gives_what_the_writes_kept(store):
    add(store, CAMPING, T0)
    add(store, BAKERY, T0 + timedelta(days=3))
    kept = sessions_of(store)
    with store.engine.begin() as conn:
        conn.execute(sql("UPDATE memory SET input_id = NULL"))
        assert store.store.sessions.rebuild(conn) == 2
    assert sessions_of(store) == kept
    with store.engine.connect() as conn:
        given = {r[0] for r in conn.execute(sql("SELECT id FROM memory WHERE input_id IS NOT NULL"))}
    assert given == {m.id for m in store.list(user_id="ann", memory_types=["episodic"])}


def test_restore_brings_the_sessions_back(tmp_path, embedder):
    with Mirix(tmp_path / "src", embedder=embedder) as mx:
        add(mx, CAMPING, T0)
        kept = sessions_of(mx)
        mx.backup(tmp_path / "b.tar.gz")
        key = (tmp_path / "src" / "vault.key").read_text()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "dst", vault_key=key, embedder=embedder) as copy:
        assert sessions_of(copy) == kept


# ------------------------------------------------------------------ the search leg


# other inputs that share the query's words one at a time
NEARBY = ["The river flooded the road near my office.", "My uncle sells fishing gear online.",
          "We crossed the river by ferry on our trip to Lisbon.", "A fishing documentary was on TV last night.",
          "The trip to the mountains got cancelled.", "My dad fixed the fence on Sunday."]


def seed_chats(mx: Mirix) -> Mirix:
    """Mel's fishing weekend (one input) among inputs about other things."""
    add(mx, [("Mel", "We spent the weekend fishing on the river with my dad."),
             ("Jon", "Nice, was the weather okay?"),
             ("Mel", "Cold, but he landed a huge salmon and cooked it that evening.")], T0, user_id="mel")
    for i, line in enumerate(NEARBY):
        add(mx, [("Mel", line), ("Jon", "Oh really? Tell me more.")], T0 + timedelta(days=2 + i), user_id="mel")
    mx.store.apply([InsertOp(memory=SemanticMemory(user_id="mel", name="Mel", summary="Mel likes fishing"))],
                   user_id="mel", actor="seed")
    return mx


def rank_of(hits, words: str) -> int | None:
    return next((n for n, h in enumerate(hits) if words in h.text), None)


def searched(mx: Mirix, query: str, *, session_leg: bool, **kwargs):
    searcher = Searcher(mx.store, session_leg=session_leg)
    try:
        return searcher.search(query, user_id="mel", **kwargs)
    finally:
        searcher.close()


def test_a_turn_without_the_querys_words_ranks_through_its_session(mx_sqlite):
    chats = seed_chats(mx_sqlite)
    plain = searched(chats, "river fishing", session_leg=False, limit=12)
    hits = searched(chats, "river fishing", session_leg=True, limit=12)
    assert "fishing on the river" in hits[0].text
    # the reply that shares no word with the question moves up with its session
    before, after = rank_of(plain, "weather okay"), rank_of(hits, "weather okay")
    assert before is not None and after is not None and after < before


def test_the_leg_keeps_to_the_types_and_the_time_asked_for(mx):
    chats = seed_chats(mx)
    facts = searched(chats, "fishing trip on the river", session_leg=True, memory_types=["semantic"], limit=5)
    assert facts and all(h.memory.memory_type.value == "semantic" for h in facts)
    start, end = T0 + timedelta(days=1), T0 + timedelta(days=30)
    later = searched(chats, "fishing trip on the river", session_leg=True, limit=10, start=start, end=end)
    assert later and all(h.memory.occurred_at is not None and start <= h.memory.occurred_at < end for h in later)


def test_the_leg_is_off_unless_the_setting_turns_it_on(tmp_path, monkeypatch):
    assert not Settings(data_dir=tmp_path).session_leg
    monkeypatch.setenv("MIRIX_SESSION_LEG", "1")
    with Mirix(tmp_path / "on", embedder=None) as mx:
        assert mx.searcher.session_leg


def test_the_secrets_doctor_finds_and_clears_a_secret_in_a_session(tmp_path, embedder):
    """A secret an older version left in an episode is in its session's text too: found there, and
    gone from it (and from the database files) after the repair."""
    from mirix_py.store.memories import MemoryStore

    secret = "correct horse battery staple"
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        s = mx.store
        old = MemoryStore(s.engine, s.fulltext, s.cipher, s.vectors, s.embedder)  # no guard, as older versions
        old.apply([InsertOp(memory=EpisodicMemory(user_id="ann", summary=f"The passphrase for the backup drive is: "
                                                  f"{secret}", occurred_at=T0, source_ids=["in_old"]))],
                  user_id="ann", actor="old")
        assert secret in sessions_of(mx)["in_old"]
        assert "memory_session.text" in {f.place for f in mx.doctor_secrets().findings}
        assert mx.doctor_secrets(repair=True).clean
        assert secret not in sessions_of(mx)["in_old"] and "[vault:kv_" in sessions_of(mx)["in_old"]
    files = [p for p in (tmp_path / "data").glob("*") if p.is_file() and ".db" in p.name]
    assert files and not [p for p in files if secret.encode() in p.read_bytes()]
