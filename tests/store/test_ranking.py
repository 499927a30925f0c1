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


def test_default_k_lets_a_strong_single_leg_match_beat_deep_consensus():
    from mirix_py.store.search import RRF_K

    fillers_a = [f"a{i}" for i in range(49)]
    fillers_b = [f"b{i}" for i in range(49)]
    lexical = ["exact", *fillers_a, "both"]   # "both" is 51st in each list
    semantic = [*fillers_b, "x", "both"]
    def order(k):
        return [i for i, _ in rrf_fuse([lexical, semantic], k=k)]

    assert order(RRF_K).index("exact") < order(RRF_K).index("both")
    assert order(60).index("both") < order(60).index("exact")  # what the paper's k=60 does
    assert RRF_K < 60


def test_rrf_ties_go_to_the_first_rankings_order_not_the_id():
    # "z" and "a" tie (2nd + 3rd each); "z" is higher in the first ranking, so it leads whatever the ids
    lexical, semantic = ["top", "z", "a"], ["top", "a", "z"]
    assert [i for i, _ in rrf_fuse([lexical, semantic])] == ["top", "z", "a"]
    assert [i for i, _ in rrf_fuse([semantic, lexical])] == ["top", "a", "z"]
    # an item missing from the first ranking ranks after one it holds, at equal score
    assert [i for i, _ in rrf_fuse([["b"], ["a"]])] == ["b", "a"]
