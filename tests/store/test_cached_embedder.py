"""Query embeddings kept by the searcher, and forgotten on request."""

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
    assert cached.embed_query("when did Jon fly?") == cached.embed_query("when did Jon fly?") == [17.0, 1.0]
    assert inner.texts == ["when did Jon fly?"]
    cached.clear()
    cached.embed_query("when did Jon fly?")
    assert inner.texts == ["when did Jon fly?"] * 2


def test_the_least_recently_used_query_is_dropped():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=2)
    for text in ("a", "b", "a", "c", "a", "b"):
        cached.embed_query(text)
    assert inner.texts == ["a", "b", "c", "b"]  # "b" was dropped for "c"; "a" stayed in use
