"""Embeddings started ahead of a write: the write takes them instead of embedding again, a text it
was not started for is embedded at the write, and a failed start loses nothing."""

from __future__ import annotations

import hashlib
import threading

import pytest

from mirix_py.engine import Mirix
from mirix_py.store.embeddings import EmbeddingsAhead


class CallLog:
    """A deterministic 16-d embedder that keeps every call's texts (and can be made to fail)."""

    name = "hash-16"
    dim = 16

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail
        self.threads: set[str] = set()

    def embed(self, texts):
        self.calls.append(list(texts))
        self.threads.add(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("embedder down")
        return [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:16]] for t in texts]


def test_started_texts_are_taken_not_embedded_again():
    log = CallLog()
    ahead = EmbeddingsAhead()
    assert ahead.start(["b", "a", "a", ""], log) == ["a", "b"]
    assert ahead.start(["a"], log) == []  # already under way
    got = ahead.take({"a", "c"})
    assert set(got) == {"a"} and got["a"] == log.embed(["a"])[0]
    assert ahead.take({"a"}) == {}  # taken once
    assert ahead.take({"b"}).keys() == {"b"}
    ahead.close()


def test_a_failed_start_gives_nothing_and_dropped_texts_are_forgotten(caplog):
    ahead = EmbeddingsAhead()
    ahead.start(["x"], CallLog(fail=True))
    assert ahead.take({"x"}) == {}
    assert "embedding ahead failed" in caplog.text
    ahead.start(["y"], CallLog())
    ahead.drop(["y"])
    assert ahead.take({"y"}) == {}
    ahead.close()


def test_an_add_embeds_each_episode_once_off_the_writing_thread(tmp_path):
    log = CallLog()
    with Mirix(tmp_path / "d", embedder=log) as mx:
        mx.add([{"role": "user", "content": "I planted tulips in the front garden."},
                {"role": "user", "content": "The roses by the fence need water."}], user_id="u")
        hits = mx.search("tulips front garden", user_id="u", method="embedding", limit=5)
        episodes = [m for m in mx.list(user_id="u") if m.memory_type.value == "episodic"]
    embedded = [t for call in log.calls for t in call]
    assert len(episodes) == 2
    for episode in episodes:
        assert embedded.count(episode.embedding_text()) == 1
    assert any(name.startswith("mirix-embed-ahead") for name in log.threads)
    assert {h.memory.id for h in hits} >= {e.id for e in episodes}


def test_an_embedder_that_fails_ahead_and_at_the_write_still_keeps_the_memories(tmp_path):
    log = CallLog(fail=True)
    with Mirix(tmp_path / "d", embedder=log) as mx:
        mx.add("I planted tulips in the front garden.", user_id="u")
        texts = [m.search_text() for m in mx.list(user_id="u")]
        report = mx.doctor()
    assert any("tulips" in t for t in texts)
    assert len(log.calls) >= 2  # ahead, then again at the write
    assert not report.clean  # saved without a vector, which doctor reports for repair


@pytest.mark.parametrize("closing_twice", [False, True])
def test_closing_stops_the_worker(closing_twice):
    ahead = EmbeddingsAhead()
    ahead.start(["a"], CallLog())
    ahead.close()
    if closing_twice:
        ahead.close()
    assert ahead.take({"a"}) == {}
