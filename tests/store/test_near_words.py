"""An episode's full-text entry holds its neighbours' words (SQLite: a column of its FTS5 row;
PostgreSQL: `memory.near`, counted in the postings): a reply is found by the words of the question it
answers, and the words follow the rows through inserts, edits, deletes, rebuilds and restores."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import text

from mirix_py.tools.ops import InsertOp
from mirix_py.records import EpisodicMemory
from mirix_py.store.near import NEAR_AFTER, NEAR_BEFORE, near_texts, said_part

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)

TURNS = [
    ("Ana", "Did you ever find a drummer for the wedding band?"),
    ("Ben", "Yes! Priya said she would do it."),
    ("Ana", "That is wonderful news."),
    ("Ben", "We rehearse on Thursdays now."),
]


def test_near_texts_take_the_content_words_of_the_turns_around_without_their_dates():
    turns = [(f"m{i}", f"[1 March 2024, 09:0{i}] Sam{i}: the word{i} is a b") for i in range(7)]
    near = near_texts(turns)
    assert near["m3"] == " ".join(f"Sam{i} word{i}" for i in (0, 1, 2, 4, 5))
    assert near["m0"] == "Sam1 word1 Sam2 word2"
    assert near["m6"] == "Sam3 word3 Sam4 word4 Sam5 word5"
    assert (NEAR_BEFORE, NEAR_AFTER) == (3, 2)
    assert near_texts([("a", "[x] Ann: alone")]) == {"a": ""}
    assert near_texts(turns, before=1, after=0)["m1"] == "Sam0 word0"
    assert near_texts([("a", "[x] Ann: violin"), ("b", "[x] the, a, is")]) == {"a": "", "b": "Ann violin"}


def test_said_part_strips_only_the_leading_date():
    assert said_part("[8 May 2023, 13:56] Ada: it was [sic] fine") == "Ada: it was [sic] fine"
    assert said_part("Ada: no header") == "Ada: no header"


def _session(mx, user_id, input_id, turns, start=T0):
    ops = [InsertOp(memory=EpisodicMemory(user_id=user_id, actor=who, summary=said, source_ids=[input_id],
                                          occurred_at=start + timedelta(seconds=n)))
           for n, (who, said) in enumerate(turns)]
    return [c.memory_id for c in mx.store.apply(ops, user_id=user_id, actor="seed")]


def _near_of(mx, memory_id):
    where = "memory WHERE id" if mx.store.engine.dialect.name == "postgresql" else "memory_fts WHERE memory_id"
    with mx.store.engine.connect() as conn:
        return conn.execute(text(f"SELECT near FROM {where} = :i"), {"i": memory_id}).scalar_one()


def test_a_reply_is_found_by_the_words_of_the_question_it_answers(mx, user_id):
    ids = _session(mx, user_id, "in_wedding", TURNS)
    _session(mx, user_id, "in_other", [("Ana", "Priya sang at the karaoke night.")], start=T0 + timedelta(days=3))
    hits = mx.search("who is the drummer for the wedding band", user_id=user_id, method="bm25", limit=4)
    found = [h.memory.id for h in hits]
    assert found[0] == ids[0]  # the question itself holds the words
    assert ids[1] in found  # the answer, by its neighbours' words
    assert hits[found.index(ids[1])].score < hits[0].score  # weighed below a memory's own words


def test_turns_of_another_input_are_not_neighbours(mx, user_id):
    first = _session(mx, user_id, "in_a", [("Ana", "The violin teacher moved to Porto.")])
    second = _session(mx, user_id, "in_b", [("Ben", "Lunch was late today.")], start=T0 + timedelta(minutes=1))
    assert not _near_of(mx, first[0]) and not _near_of(mx, second[0])
    assert [h.memory.id for h in mx.search("violin teacher", user_id=user_id, method="bm25")] == first


def test_a_summary_of_several_turns_is_no_neighbour(mx, user_id):
    """A model's episode citing several turns of the input: its words stay out of the turns' rows."""
    turns = _session(mx, user_id, "in_a", [("Ana", "The violin teacher moved to Porto."),
                                           ("Ben", "Lunch was late today.")])
    before = [_near_of(mx, i) for i in turns]
    mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, actor="Ana", source_ids=["D1:1", "D1:2", "in_a"],
                                                   summary="Ana and Ben talk about a marathon in Lisbon",
                                                   occurred_at=T0 + timedelta(seconds=5)))],
                   user_id=user_id, actor="episodic_memory_manager")
    assert [_near_of(mx, i) for i in turns] == before and "Lisbon" not in " ".join(before)


def test_edits_and_deletes_refresh_the_neighbours_rows(mx, user_id):
    ids = _session(mx, user_id, "in_wedding", TURNS)
    assert "drummer" in _near_of(mx, ids[1])
    mx.update(ids[0], {"summary": "Did you ever find a cellist for the string quartet?"}, user_id=user_id)
    assert "cellist" in _near_of(mx, ids[1]) and "drummer" not in _near_of(mx, ids[1])
    mx.delete(ids[0], user_id=user_id)
    assert "cellist" not in _near_of(mx, ids[1])
    assert [h.memory.id for h in mx.search("cellist", user_id=user_id, method="bm25")] == []
    later = _session(mx, user_id, "in_wedding", [("Ana", "Bring the trombone on Thursday.")],
                     start=T0 + timedelta(minutes=5))
    assert "trombone" in _near_of(mx, ids[3])  # a turn added to the input later
    assert "rehearse" in _near_of(mx, later[0])


def test_rebuild_and_doctor_keep_the_neighbours_words(mx, user_id):
    ids = _session(mx, user_id, "in_wedding", TURNS)
    before = {i: _near_of(mx, i) for i in ids}
    with mx.store.engine.begin() as conn:
        mx.store.fulltext.rebuild(conn)
    assert {i: _near_of(mx, i) for i in ids} == before
    assert ids[1] in [h.memory.id for h in mx.search("drummer wedding band", user_id=user_id, method="bm25")]
    report = mx.doctor()
    assert report.clean


def test_a_restore_makes_the_neighbours_words_again(mx, user_id, tmp_path):
    from mirix_py.engine import Mirix

    ids = _session(mx, user_id, "in_wedding", TURNS)
    before = {i: _near_of(mx, i) for i in ids}
    mx.backup(tmp_path / "b.tar.gz")
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "restored", vault_key=key, embedder=None) as restored:
        assert {i: _near_of(restored, i) for i in ids} == before  # into SQLite, whatever the source
        found = [h.memory.id for h in restored.search("drummer wedding band", user_id=user_id, method="bm25")]
        assert ids[1] in found


def test_for_a_large_user_a_common_term_matches_own_words_only(mx_sqlite, user_id, monkeypatch):
    from mirix_py.store import sqlite_fulltext

    ids = _session(mx_sqlite, user_id, "in_wedding", TURNS)
    _session(mx_sqlite, user_id, "in_more", [("Ana", f"The band played song {n}.") for n in range(6)],
             start=T0 + timedelta(days=1))

    def found(query):
        return [h.memory.id for h in mx_sqlite.search(query, user_id=user_id, method="bm25", limit=20)]

    assert ids[1] in found("drummer") and ids[1] in found("band")  # by its neighbours' words
    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 1)  # every user counts as large
    monkeypatch.setattr(sqlite_fulltext, "NEAR_COMMON_SHARE", 0.5)  # "band" is in over half of the 10 rows
    mx_sqlite.store.fulltext._counts.clear()
    assert ids[1] in found("drummer")  # a rare term still matches the neighbours' words
    assert ids[1] not in found("band") and ids[0] in found("band")


def test_a_store_written_with_summaries_as_neighbours_is_renewed(mx, user_id):
    """What migration 0011 does for stores written before summaries were kept out of the turns' rows."""
    from mirix_py.store.near import renew

    turns = _session(mx, user_id, "in_a", [("Ana", "The violin teacher moved to Porto."),
                                           ("Ben", "Lunch was late today.")])
    [summary] = [c.memory_id for c in mx.store.apply(
        [InsertOp(memory=EpisodicMemory(user_id=user_id, actor="Ana", source_ids=["D1:1", "D1:2", "in_a"],
                                        summary="Ana and Ben talk about a marathon in Lisbon",
                                        occurred_at=T0 + timedelta(seconds=5)))],
        user_id=user_id, actor="episodic_memory_manager")]
    expected = {i: _near_of(mx, i) for i in [*turns, summary]}
    postgres = mx.store.engine.dialect.name == "postgresql"
    where = "memory SET near = :n WHERE id" if postgres else "memory_fts SET near = :n WHERE memory_id"
    with mx.store.engine.begin() as conn:  # the rows as the earlier version wrote them: the summary a turn
        for memory_id in [*turns, summary]:
            conn.execute(text(f"UPDATE {where} = :i"), {"n": "Lisbon marathon Porto", "i": memory_id})
    assert "Lisbon" in _near_of(mx, turns[0])
    with mx.store.engine.begin() as conn:
        assert renew(conn, mx.store.fulltext) == 1
    assert {i: _near_of(mx, i) for i in [*turns, summary]} == expected
    assert not _near_of(mx, summary) and "Lisbon" not in _near_of(mx, turns[0])
    assert [h.memory.id for h in mx.search("marathon Lisbon", user_id=user_id, method="bm25")] == [summary]
    with mx.store.engine.begin() as conn:
        assert renew(conn, mx.store.fulltext) == 1  # again: nothing changes
    assert {i: _near_of(mx, i) for i in [*turns, summary]} == expected


def test_turns_a_caller_tagged_get_their_neighbours_words_when_renewed(mx, user_id):
    """A store written while tagged turns were taken for summaries held no neighbours' words for them."""
    from mirix_py.store.near import renew

    said = [("Ana", "Did you ever find a drummer for the wedding band?"), ("Ben", "Yes! Priya said she would do it.")]
    [input_id] = mx.add([{"role": "user", "name": who, "content": text, "id": f"D1:{n}"}
                         for n, (who, text) in enumerate(said, 1)], user_id=user_id, source_id="conv-1/session_1").input_ids
    turns = [m.id for m in mx.list(user_id=user_id, memory_types=["episodic"]) if input_id in m.source_ids]
    expected = {i: _near_of(mx, i) for i in turns}
    assert any("drummer" in (near or "") for near in expected.values())
    postgres = mx.store.engine.dialect.name == "postgresql"
    where = "memory SET near = NULL WHERE id" if postgres else "memory_fts SET near = NULL WHERE memory_id"
    with mx.store.engine.begin() as conn:
        for memory_id in turns:
            conn.execute(text(f"UPDATE {where} = :i"), {"i": memory_id})
    with mx.store.engine.begin() as conn:
        assert renew(conn, mx.store.fulltext) == 0
    assert {i: _near_of(mx, i) for i in turns} == expected


def test_turns_of_one_add_without_times_keep_the_order_said(mx, user_id):
    """Messages with no time of their own are a microsecond apart, in list order: neighbours' words and
    search context follow the order said, not the memories' random ids."""
    said = [f"Turn {n} mentions the word{n} marker." for n in range(8)]
    mx.add([{"role": "user", "content": text} for text in said], user_id=user_id)
    turns = sorted(mx.list(user_id=user_id, memory_types=["episodic"]), key=lambda m: m.occurred_at)
    assert [t.summary for t in turns] == said
    near = _near_of(mx, turns[4].id).split()
    assert [w for w in near if w.startswith("word")] == ["word1", "word2", "word3", "word5", "word6"]
    hits = mx.search("word4", user_id=user_id, method="bm25", limit=1, context=1)
    assert [h.memory.summary for h in hits] == [said[4], said[3], said[5]]
