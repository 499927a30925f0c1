"""PostgreSQL's BM25 postings: the triggers keep them equal to the memory rows through every kind of
write, and a search over them gives Okapi BM25 as computed from each memory's tsvector."""

from __future__ import annotations

import math
import random
import re
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from mirix_py.tools.ops import DeleteOp, InsertOp, UpdateOp
from mirix_py.records import EpisodicMemory, SemanticMemory
from mirix_py.store import pg_postings
from mirix_py.store.fulltext import Filters
from mirix_py.store.pg_fulltext import PostgresFullText, query_lexemes
from mirix_py.store.near import NEAR_WEIGHT

USER = "user-postings"
WORDS = ["walk", "park", "dog", "morning", "friend", "lake", "kayak", "violin", "sourdough", "octopus"]
BASE = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)


def _postings(conn) -> list[tuple]:
    return sorted(tuple(r) for r in conn.execute(text(f"SELECT key, doc, tf, dl, occurred_at FROM {pg_postings.TABLE}")))


def _expected(conn) -> list[tuple]:
    """The postings of the memory rows as they are now, computed afresh."""
    return sorted(tuple(r) for r in conn.execute(text(pg_postings._postings_of("memory"))))


@pytest.fixture
def pg(tmp_path, pg_schema_url):
    from mirix_py.engine import Mirix

    with Mirix(tmp_path / "data", embedder=None, database_url=pg_schema_url) as mx:
        yield mx


def _seed(mx, n: int = 300, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    ops = []
    for i in range(n):
        words = rng.sample(WORDS, 3) + (rng.sample(WORDS, 1) * rng.randrange(3))  # some words said twice or more
        when = BASE + timedelta(hours=i)
        memory = (EpisodicMemory(user_id=USER, summary=f"note {i}: " + " ".join(words), actor="me", occurred_at=when,
                                 source_ids=[f"in_{i // 10}"])  # inputs of ten: episodes with neighbours
                  if i % 5 else SemanticMemory(user_id=USER, name=f"thing {i}", summary=" ".join(words)))
        ops.append(InsertOp(memory=memory))
    return [c.memory_id for c in mx.store.apply(ops, user_id=USER, actor="seed")]


def test_postings_follow_inserts_updates_and_deletes(pg):
    ids = _seed(pg, 60)
    with pg.store.engine.connect() as conn:
        assert len(_postings(conn)) > 60 * 3
        assert _postings(conn) == _expected(conn)
    store = pg.store
    store.apply([UpdateOp(memory_id=ids[1], fields={"summary": "kayak kayak on the lake"})], user_id=USER, actor="t")
    store.apply([UpdateOp(memory_id=ids[2], fields={"occurred_at": BASE - timedelta(days=30)})], user_id=USER, actor="t")
    store.apply([DeleteOp(memory_id=ids[3])], user_id=USER, actor="t")
    pg.add("My octopus Otto likes the park.", user_id=USER)
    with store.engine.connect() as conn:
        assert _postings(conn) == _expected(conn)
    pg.delete_user(USER)
    with store.engine.connect() as conn:
        assert _postings(conn) == []


def _reference(conn, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
    """Okapi BM25 from each memory's tsvectors, in Python: a lexeme's count in the memory's own words
    plus NEAR_WEIGHT times its count in its neighbours' words, a memory's length its tokens in both
    (repeats included, as FTS5 counts them), df among the memories searched (the user's, of the
    types asked for, in the window), N and avgdl over all of the user's memories."""
    counts: dict[tuple, float] = {}
    tokens: dict[str, int] = {}
    for column, weight in (("tsv", 1.0), ("near_tsv", NEAR_WEIGHT)):
        for memory_id, mtype, when, lexeme, count in conn.execute(text(
                f"SELECT m.id, m.memory_type, m.occurred_at, u.lexeme, coalesce(array_length(u.positions, 1), 1) "
                f"FROM memory m CROSS JOIN LATERAL unnest(m.{column}) u WHERE m.user_id = :u"),
                {"u": filters.user_id}).all():
            key = (memory_id, mtype, when, lexeme)
            counts[key] = counts.get(key, 0.0) + weight * count
            tokens[memory_id] = tokens.get(memory_id, 0) + count
    rows = [(memory_id, mtype, when, tokens[memory_id], lexeme, tf)
            for (memory_id, mtype, when, lexeme), tf in counts.items()]
    n = conn.execute(text("SELECT count(*) FROM memory WHERE user_id = :u"), {"u": filters.user_id}).scalar_one()
    avgdl = sum(tokens.values()) / n
    lexemes = set(query_lexemes(conn, query))
    kept = [r for r in rows if r[4] in lexemes
            and (not filters.memory_types or r[1] in filters.memory_types)
            and (filters.start is None or (r[2] is not None and r[2] >= filters.start))
            and (filters.end is None or (r[2] is not None and r[2] < filters.end))]
    df: dict[str, int] = {}
    for r in kept:
        df[r[4]] = df.get(r[4], 0) + 1
    scores: dict[str, float] = {}
    for memory_id, _, _, dl, lexeme, tf in kept:
        idf = math.log(1 + (n - df[lexeme] + 0.5) / (df[lexeme] + 0.5))
        scores[memory_id] = scores.get(memory_id, 0.0) + idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / float(avgdl)))
    return sorted(scores.items(), key=lambda kv: -kv[1])[:k]


QUERIES = ["kayak walk", "violin and a morning walk with the dog", "sourdough park friend", "octopus",
           "walk park", "lake lake morning", "thing"]


@pytest.mark.parametrize("k", [3, 10, 60])
@pytest.mark.parametrize("window", ["none", "types", "time", "both"])
def test_scores_are_bm25_of_the_tsvectors(pg, k, window):
    _seed(pg)
    with pg.store.engine.connect() as conn:  # the neighbours' words are there to be counted
        assert conn.execute(text("SELECT count(*) FROM memory WHERE near IS NOT NULL")).scalar_one() > 200
    filters = Filters(user_id=USER,
                      memory_types=["episodic"] if window in ("types", "both") else None,
                      start=BASE + timedelta(hours=40) if window in ("time", "both") else None,
                      end=BASE + timedelta(hours=220) if window in ("time", "both") else None)
    index = PostgresFullText()
    with pg.store.engine.connect() as conn:
        for q in QUERIES:
            got, want = index.search(conn, q, filters, k), _reference(conn, q, filters, k)
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9), q
            above = {i for i, s in want if s > want[-1][1] + 1e-9} if want else set()
            assert above <= {i for i, _ in got}, q  # equal scores at the cut may come in another order


def test_a_write_through_the_index_refreshes_the_cached_counts(pg):
    _seed(pg, 40)
    index = pg.store.fulltext
    with pg.store.engine.connect() as conn:
        before = dict(index.search(conn, "octopus", Filters(user_id=USER), 100))
    pg.store.apply([InsertOp(memory=EpisodicMemory(user_id=USER, summary="octopus octopus octopus", actor="me"))],
                   user_id=USER, actor="t")
    with pg.store.engine.connect() as conn:
        after = index.search(conn, "octopus", Filters(user_id=USER), 100)
        want = _reference(conn, "octopus", Filters(user_id=USER), 100)
    assert [s for _, s in after] == pytest.approx([s for _, s in want], rel=1e-9)  # counts as of now, not cached
    assert len(after) == len(before) + 1


def test_another_users_memories_leave_a_users_scores_unchanged(pg):
    """Document counts are the user's own: another user writing the same words, many times over,
    changes neither the scores nor the order of this user's hits."""
    _seed(pg, 60)
    filters = Filters(user_id=USER)
    with pg.store.engine.connect() as conn:
        before = {q: pg.store.fulltext.search(conn, q, filters, 20) for q in QUERIES}
    other = "user-postings-other"
    pg.store.apply([InsertOp(memory=EpisodicMemory(user_id=other, summary=f"octopus walk {i} kayak lake", actor="x"))
                    for i in range(200)], user_id=other, actor="t")
    with pg.store.engine.connect() as conn:
        after = {q: pg.store.fulltext.search(conn, q, filters, 20) for q in QUERIES}
        assert pg.store.fulltext.search(conn, "octopus", Filters(user_id=other), 5)  # the other user's are there
    assert after == before


def test_rebuild_restores_the_postings(pg):
    _seed(pg, 30)
    with pg.store.engine.begin() as conn:
        conn.execute(text(f"DELETE FROM {pg_postings.TABLE}"))
        assert pg.store.fulltext.rebuild(conn) == 30
        assert _postings(conn) == _expected(conn)


def test_the_tsvectors_are_made_of_the_text_a_query_is_folded_to(pg):
    """`mirix_fts_text`, which the tsvectors are generated of, gives in SQL what `indexed_text` gives
    in Python for the lowered text (a query's terms are lowered and folded in Python) with the
    diacritics FTS5 folds taken off (`unaccented`), whatever the database's locale (this one's is C:
    its to_tsvector lowers ASCII only and takes every other character for a letter, so what parts
    words beyond ASCII, `SEPARATORS`, is made a space)."""
    from mirix_py.text.words import SEPARATORS, indexed_text, unaccented

    texts = ["我的女儿在上海学习钢琴。", "我正在学习用Python写程序。", "昨日新しいパソコンを買った。", "ｱｲｳ", "저는 서울에서 일해요.",
             "İstanbul İZMİR", "Schillerstraße STRAẞE", "nai\u0308ve", "Ёлка", "Ελλάδας ΑΘΗΝΑΣ", "Ångström Москва", "𠀀𠀁",
             "Caroline: I went to a LGBTQ support group yesterday — it was so powerful 🎉.",
             "मैं कल दिल्ली में अपने दोस्त से मिला।", "நான் நேற்று சென்னையில் என் நண்பரை சந்தித்தேன்.", "Hôm qua tôi ăn PHỞ ở Hà Nội",
             "Plus \u2066isolate\u2069 and \u202eevil\u202c", "ذَهَبْتُ إِلَى الْمَكْتَبَةِ", "من می\u200cخواهم", "моло\u0301ко", "ἈΡΕΤῊ ᾠδή",
             "I ran 🏃\u200d♀\ufe0f, Caroline’s", "ฉันไปตลาดกับแม่เมื่อวานนี้ ณ กรุงเทพฯ ๒๕๖๘", "ທ່ານໝໍບອກໃຫ້ຂ້ອຍດື່ມນ້ຳຫຼາຍໆ",
             "ខ្ញុំទៅផ្សារ។ ភ្នំពេញ", "သမီးကစန္ဒယားသင်တယ်။", "学钢琴 ไปTokyo ตลาด", "\u0e48ก\u0e48\u0e49",
             "أحمد إسلام آمن ٱلله مسؤول رئيس", "\u0627\u0654\u062d\u0645\u062f أَحْمَد"]
    with pg.store.engine.connect() as conn:
        got = conn.execute(text(f"SELECT {pg_postings.TEXT_FUNCTION}(t) FROM unnest(CAST(:ts AS text[])) "
                                "WITH ORDINALITY AS u(t, n) ORDER BY n"), {"ts": texts}).scalars().all()
    assert got == [re.sub(f"[{SEPARATORS}]", " ", unaccented(indexed_text(t.lower()))) for t in texts]
