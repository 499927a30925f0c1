"""PostgreSQL BM25 with common lexemes left out of the candidate scan: the same top k as scoring
every match, or the full query when that cannot be shown."""

from __future__ import annotations

import random

import pytest

from mirix_py.ops import InsertOp
from mirix_py.records import EpisodicMemory
from mirix_py.store.fulltext import Filters, PostgresFullText, TermStats, bm25_idf, common_terms_plan


def test_plan_splits_at_the_share_and_bounds_what_common_words_alone_can_score():
    stats = {"walk": TermStats(400, 1.5), "lake": TermStats(30, 2.0), "kayak": TermStats(5, 1.2),
             "zebra": TermStats(0, 0.0)}
    plan = common_terms_plan(stats, 1000, 0.05)
    assert plan is not None
    assert plan.rare == ("kayak", "lake") and plan.common == ("walk",)
    assert plan.bound == pytest.approx(bm25_idf(1000, 400) * 1.5)


@pytest.mark.parametrize("df", [{"walk": 400, "park": 300}, {"lake": 3, "kayak": 5}, {"walk": 400, "gone": 0}])
def test_no_plan_when_nothing_separates_the_lexemes(df):
    assert common_terms_plan({lx: TermStats(d, 1.0) for lx, d in df.items()}, 1000, 0.05) is None


WORDS = ["walk", "park", "dog", "morning", "friend"]  # in most texts: common
RARE = ["kayak", "violin", "sourdough", "octopus", "glacier", "tango", "marmalade", "lighthouse"]


@pytest.fixture
def pg_store(tmp_path, pg_schema_url):
    from mirix_py.engine import Mirix

    rng = random.Random(3)
    user = "user-common-terms"
    ops = []
    for i in range(400):
        words = rng.sample(WORDS, 2) + ([rng.choice(RARE)] if i % 4 == 0 else [])
        if i % 25 == 0:
            words += words[:1] * 3  # a common word said many times: a high score from it alone
        ops.append(InsertOp(memory=EpisodicMemory(user_id=user, summary=f"note {i}: " + " ".join(words), actor="me")))
    with Mirix(tmp_path / "data", embedder=None, database_url=pg_schema_url) as mx:
        mx.store.apply(ops, user_id=user, actor="seed")
        yield mx.store.engine, user


QUERIES = ["kayak walk", "violin and a morning walk with the dog", "sourdough park friend", "tango",
           "walk park", "glacier lighthouse morning", "marmalade dog dog walk"]


@pytest.mark.parametrize("k", [3, 10, 60])
def test_the_pruned_top_k_is_the_full_top_k(pg_store, k):
    engine, user = pg_store
    full, pruned = PostgresFullText(prune_min_docs=10**9), PostgresFullText(prune_min_docs=0)
    with engine.connect() as conn:
        for q in QUERIES:
            want = full.search(conn, q, Filters(user_id=user), k)
            got = pruned.search(conn, q, Filters(user_id=user), k)
            # equal scores come in either order (the search legs settle them by time and text)
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9), q
            assert _above_the_cut(got) == _above_the_cut(want), q


def _above_the_cut(scored):
    """The ids scoring more than the k-th: the same whichever of a tied group made the cut."""
    return {i for i, s in scored if s > scored[-1][1] + 1e-9} if scored else set()


def test_the_candidate_scan_is_narrowed_when_the_bound_allows_it(pg_store):
    engine, user = pg_store
    pruned = PostgresFullText(prune_min_docs=0)
    calls: list[tuple[str, ...]] = []
    scored = pruned._scored

    def spy(conn, filters, lexemes, picking, *args, **kwargs):
        calls.append(tuple(picking))
        return scored(conn, filters, lexemes, picking, *args, **kwargs)

    pruned._scored = spy
    with engine.connect() as conn:
        top = pruned.search(conn, "kayak walk", Filters(user_id=user), 3)
        assert calls == [("kayak",)]  # 'walk' only added to the scores of kayak's notes
        assert all(("kayak" in text) for text in _texts(conn, [i for i, _ in top]))
        calls.clear()
        pruned.search(conn, "kayak walk", Filters(user_id=user), 200)  # fewer kayak notes than k
        assert [set(c) for c in calls] == [{"kayak"}, {"kayak", "walk"}]


def _texts(conn, ids):
    from sqlalchemy import text

    return [conn.execute(text("SELECT text FROM memory WHERE id = :i"), {"i": i}).scalar() for i in ids]
