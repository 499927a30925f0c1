"""The search-latency benchmark's vector cache: keyed per text, so vectors made from other texts
(the generator or `embedding_text` changed) are recomputed, never served."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import search_latency as S  # noqa: E402


class CountingEmbedder:
    """Vector = (length of the text, 1.0, ...); counts the texts it embeds."""

    name, dim = "counting", 4

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts):
        self.embedded += list(texts)
        return [[float(len(t)), 1.0, 0.0, 0.0] for t in texts]


def test_a_prefix_reuses_the_cache_and_a_longer_pool_computes_only_the_tail(tmp_path):
    emb = CountingEmbedder()
    texts = [f"text {i}" for i in range(10)]
    S.pool_vectors(texts[:6], emb, tmp_path, seed=1)
    emb.embedded.clear()
    short, info = S.pool_vectors(texts[:4], emb, tmp_path, seed=1)
    assert emb.embedded == [] and info["cached"] == 4 and short.shape == (4, 4)
    full, info = S.pool_vectors(texts, emb, tmp_path, seed=1)
    assert emb.embedded == texts[6:] and (info["cached"], info["computed"]) == (6, 4)
    assert full[:, 0].tolist() == [float(len(t)) for t in texts]


def test_vectors_of_changed_texts_are_recomputed_from_the_first_change(tmp_path):
    emb = CountingEmbedder()
    S.pool_vectors(["a", "b", "c", "d"], emb, tmp_path, seed=1)
    emb.embedded.clear()
    changed = ["a", "b", "[2023-01-01 09:00] c", "d"]
    vectors, info = S.pool_vectors(changed, emb, tmp_path, seed=1)
    assert emb.embedded == changed[2:] and info["stale_rows_dropped"] == 2
    assert vectors[:, 0].tolist() == [float(len(t)) for t in changed]


def test_a_cache_without_keys_is_not_trusted(tmp_path):
    """Caches written before the keys existed hold vectors of dated episode texts."""
    emb = CountingEmbedder()
    S.pool_vectors(["a", "b"], emb, tmp_path, seed=1)
    (keys,) = tmp_path.glob("*.keys.npy")
    keys.unlink()
    emb.embedded.clear()
    vectors, info = S.pool_vectors(["a", "b"], emb, tmp_path, seed=1)
    assert emb.embedded == ["a", "b"] and info["cached"] == 0


def test_the_store_embeds_exactly_the_pool_texts(tmp_path):
    """Inserting the pool through the store asks the embedder only for texts the table holds (an
    episode is embedded without its date); the benchmark failed when it keyed on the search text."""
    from mirix_py.engine import Mirix
    from mirix_py.tools.ops import InsertOp

    pool = S.pool_records(20, seed=7)
    assert {kind for kind, *_ in pool} == {"episodic", "semantic"}
    texts = [S.to_memory(r, "u").embedding_text() for r in pool]
    inner = CountingEmbedder()
    lookup = S.LookupEmbedder(inner, {t: i for i, t in enumerate(texts)}, np.ones((20, 4), dtype=np.float32))
    mx = Mirix(data_dir=tmp_path / "data", embedder=lookup)
    try:
        mx.store.apply([InsertOp(memory=S.to_memory(r, "u")) for r in pool], user_id="u", actor="test")
        assert sum(mx.store.count(user_id="u").values()) == 20
    finally:
        mx.close()
    assert lookup.misses == 0 and inner.embedded == []
