"""Query embeddings kept by the searcher for each user, and forgotten on request."""

from __future__ import annotations

from mirix_py.store.embeddings import CachedEmbedder


class CountingEmbedder:
    name, dim = "counting", 2

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += list(texts)
        return [[float(len(t)), 1.0] for t in texts]


def test_a_query_is_embedded_once_until_the_cache_is_cleared():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=2)
    first = cached.embed_query("when did Jon fly?", user_id="ada")
    assert first == cached.embed_query("when did Jon fly?", user_id="ada") == [17.0, 1.0]
    assert inner.texts == ["when did Jon fly?"]
    cached.clear()
    cached.embed_query("when did Jon fly?", user_id="ada")
    assert inner.texts == ["when did Jon fly?"] * 2


def test_the_least_recently_used_query_is_dropped():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=2)
    for text in ("a", "b", "a", "c", "a", "b"):
        cached.embed_query(text, user_id="ada")
    assert inner.texts == ["a", "b", "c", "b"]  # "b" was dropped for "c"; "a" stayed in use


def test_kept_texts_are_embedded_once_the_rest_in_one_batch():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=8)
    question = cached.embed_query("what does Ada like?", user_id="ada")
    first = cached.embed_kept(["what does Ada like?", "Ada: likes tea", "Ada: hikes", "Ada: likes tea"], user_id="ada")
    assert first == [question, [14.0, 1.0], [10.0, 1.0], [14.0, 1.0]]
    assert inner.texts == ["what does Ada like?", "Ada: likes tea", "Ada: hikes"]  # one batch, no repeat
    assert cached.embed_kept(["Ada: hikes", "Ada: likes tea"], user_id="ada") == [[10.0, 1.0], [14.0, 1.0]]
    assert len(inner.texts) == 3
    assert cached.embed_kept([], user_id="ada") == []


def test_kept_texts_are_dropped_least_recently_used_first():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=2)
    cached.embed_kept(["a", "b"], user_id="ada")
    cached.embed_kept(["a", "c"], user_id="ada")  # "b" goes
    cached.embed_kept(["a", "b"], user_id="ada")
    assert inner.texts == ["a", "b", "c", "b"]


def test_what_one_user_asked_is_embedded_again_for_another():
    """Another user's call finds nothing kept: a faster answer would tell them the words were asked."""
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=8)
    cached.embed_query("lawyer for a divorce", user_id="ada")
    cached.embed_kept(["lawyer for a divorce", "Ada: likes tea"], user_id="bob")
    assert inner.texts == ["lawyer for a divorce", "lawyer for a divorce", "Ada: likes tea"]
    cached.embed_kept(["lawyer for a divorce", "Ada: likes tea"], user_id="ada")
    assert inner.texts[3:] == ["Ada: likes tea"]  # ada's question was kept for ada; bob's line for bob only
    cached.embed_kept(["lawyer for a divorce", "Ada: likes tea"], user_id="bob")
    assert len(inner.texts) == 4


def test_the_size_bounds_the_vectors_kept_of_all_users_together():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=2)
    for user_id in ("ada", "bob", "cy"):
        cached.embed_query("hi", user_id=user_id)  # cy's drops ada's, the least recently used
    cached.embed_query("hi", user_id="cy")
    cached.embed_query("hi", user_id="ada")
    assert inner.texts == ["hi"] * 4
