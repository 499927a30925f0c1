"""Pure ranking helpers."""

from mirix_py.text.words import query_terms

from mirix_py.store.sqlite_fulltext import PROBE_SLOTS, fts_rowid, user_rowid_range, user_token
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


def test_two_ingestions_returning_ties_in_other_orders_give_one_ranking():
    from mirix_py.store.search import settle_ties

    # the same rows under other ids and index layouts: equal scores come back in any order
    first = [("top", 3.0), ("x", 1.7), ("y", 1.7), ("z", 1.7), ("low", 1.2)]
    second = [("top", 3.0), ("z", 1.7), ("x", 1.7), ("y", 1.7), ("low", 1.2)]
    keys = {"x": (False, 2, "b"), "y": (False, 1, "c"), "z": (False, 2, "a")}
    assert settle_ties(first, keys, 3) == settle_ties(second, keys, 3) == [("top", 3.0), ("y", 1.7), ("z", 1.7)]


def test_a_true_neighbour_returned_late_by_the_index_takes_its_place():
    from mirix_py.store.search import settle_ties

    # an approximate index found "c" only when asked for more: its score puts it back in the top 2
    assert settle_ties([("a", 0.9), ("b", 0.5), ("c", 0.7)], {}, 2) == [("a", 0.9), ("c", 0.7)]


def test_only_ties_at_or_above_the_cut_need_keys():
    from mirix_py.store.search import tied_ids

    scored = [("a", 5.0), ("b", 4.0), ("c", 4.0), ("d", 3.0), ("e", 2.0), ("f", 2.0)]
    assert tied_ids(scored, 1) == set()
    assert tied_ids(scored, 2) == {"b", "c"}   # the k-th (b) ties with c, just past the cut
    assert tied_ids(scored, 4) == {"b", "c"}   # e and f tie below the cut: never compared
    assert tied_ids([], 3) == set()


def test_a_tied_group_reaching_the_end_of_the_fetch_asks_for_more():
    from mirix_py.store.search import cut_is_open

    tail = [("a", 2.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)]
    assert cut_is_open(tail, 2, fetched=4)                  # d may have tied company past the fetch
    assert not cut_is_open(tail[:3] + [("d", 0.5)], 2, fetched=4)
    assert not cut_is_open(tail[:3], 2, fetched=4)          # fewer came back: that was all of them


def test_tie_key_puts_earlier_first_and_timeless_last():
    from datetime import datetime

    from mirix_py.store.search import tie_key

    early, late = datetime(2023, 5, 1), datetime(2023, 6, 1)
    keys = sorted([tie_key(None, "a"), tie_key(late, "a"), tie_key(early, "z"), tie_key(early, "b")])
    assert keys == [tie_key(early, "b"), tie_key(early, "z"), tie_key(late, "a"), tie_key(None, "a")]
