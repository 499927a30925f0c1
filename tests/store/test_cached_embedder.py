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


def test_kept_texts_are_embedded_once_the_rest_in_one_batch():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=8)
    question = cached.embed_query("what does Ada like?")
    first = cached.embed_kept(["what does Ada like?", "Ada: likes tea", "Ada: hikes", "Ada: likes tea"])
    assert first == [question, [14.0, 1.0], [10.0, 1.0], [14.0, 1.0]]
    assert inner.texts == ["what does Ada like?", "Ada: likes tea", "Ada: hikes"]  # one batch, no repeat
    assert cached.embed_kept(["Ada: hikes", "Ada: likes tea"]) == [[10.0, 1.0], [14.0, 1.0]]
    assert len(inner.texts) == 3
    assert cached.embed_kept([]) == []


def test_kept_texts_are_dropped_least_recently_used_first():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, size=2)
    cached.embed_kept(["a", "b"])
    cached.embed_kept(["a", "c"])  # "b" goes
    cached.embed_kept(["a", "b"])
    assert inner.texts == ["a", "b", "c", "b"]
