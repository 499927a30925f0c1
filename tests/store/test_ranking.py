"""Pure ranking helpers."""

from mirix_py.store.fulltext import PROBE_SLOTS, fts_rowid, query_terms, user_rowid_range, user_token
from mirix_py.store.search import rrf_fuse


def test_rrf_rewards_agreement():
    fused = rrf_fuse([["a", "b", "c"], ["b", "c", "a"]], k=60)
    assert [i for i, _ in fused] == ["b", "a", "c"] or [i for i, _ in fused][0] == "b"
    scores = dict(fused)
    assert scores["b"] == 1 / 62 + 1 / 61


def test_rrf_includes_items_from_either_list():
    fused = dict(rrf_fuse([["a"], ["z"]]))
    assert set(fused) == {"a", "z"} and fused["a"] == fused["z"]


def test_query_terms_drop_stopwords_and_punctuation():
    assert query_terms("What did Caroline do at the LGBTQ support-group?") == [
        "caroline", "lgbtq", "support", "group"]
    assert query_terms("what is it") == ["what", "is", "it"]  # only stopwords: keep them
    assert query_terms("?!") == []


def test_fts_keys_are_stable_and_distinct():
    assert fts_rowid("u", "epi_1") == fts_rowid("u", "epi_1") != fts_rowid("u", "epi_2")
    assert user_token("a") != user_token("b") and user_token("a").isalnum()


def test_fts_rowids_sit_in_their_users_range():
    ranges = {u: user_rowid_range(u) for u in ("ada", "bob", "x" * 300)}
    assert len(set(ranges.values())) == 3
    for user, (low, high) in ranges.items():
        assert 0 <= low < high < 2 ** 63
        for mid in ("epi_1", "sem_2", "x"):
            assert low <= fts_rowid(user, mid) <= fts_rowid(user, mid) + PROBE_SLOTS - 1 <= high
