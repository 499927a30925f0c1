"""A user past the exactly searched size whose vectors crowd one another (near-duplicate lines such as
"Note 17: I bought 17 pears."): Chroma's HNSW graph leaves some of them unreached by any query, and a
rebuild of the same vectors builds another such graph. `doctor --repair` ends clean, and every memory
is found by an embedding search of the text its vector was made from, in this engine and the next."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

import numpy as np
import pytest

from mirix_py.engine import Mirix
from mirix_py.records import EpisodicMemory
from mirix_py.store.kept_vectors import EXACT_QUERY_MAX
from mirix_py.tools.ops import InsertOp

MEMORIES = 2_600  # past EXACT_QUERY_MAX: searched through the graph
USER = "bo"


class CrowdedEmbedder:
    """Every text near one point: a unit centre and noise seeded by the text (the same text, the same
    vector), as alike as MiniLM's vectors of look-alike lines are to each other."""

    name = "crowded-384"
    dim = 384

    def __init__(self) -> None:
        centre = np.random.default_rng(7).normal(size=self.dim)
        self.centre = centre / np.linalg.norm(centre)

    def embed(self, texts):
        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            noise = np.random.default_rng(seed).normal(0, 0.05, self.dim)
            out.append((self.centre + noise).tolist())
        return out


def _missed_by_search(mx: Mirix) -> list[str]:
    """Memories an embedding search of their own embedded text does not return in its top 10."""
    return [m.id for m in mx.list(user_id=USER, limit=MEMORIES)
            if m.id not in [h.memory.id for h in mx.search(m.embedding_text(), user_id=USER, limit=10,
                                                           method="embedding")]]


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    data = tmp_path_factory.mktemp("crowded") / "data"
    at = datetime(2026, 12, 7, 18, 30, tzinfo=timezone.utc)
    with Mirix(data, embedder=CrowdedEmbedder()) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=USER, actor="Bo", occurred_at=at,
                                                       summary=f"Note {i}: I bought {i} pears."))
                        for i in range(MEMORIES)], user_id=USER, actor="seed")
        before = mx.doctor()
    return data, before


def test_a_crowded_users_graph_misses_vectors_and_repair_makes_every_one_found(crowded):
    data, before = crowded
    assert MEMORIES > EXACT_QUERY_MAX
    assert before.unreachable_vectors and not before.clean  # the graph as written misses some
    with Mirix(data, embedder=CrowdedEmbedder()) as mx:
        fixed = mx.doctor(repair=True)
        assert fixed.repaired["indexes_rebuilt"] == 1
        assert fixed.clean and fixed.unreachable_vectors == [], fixed.summary()
    with Mirix(data, embedder=CrowdedEmbedder()) as mx:  # the next engine opens the rebuilt graph from disk
        assert mx.doctor().clean
        assert _missed_by_search(mx) == []
        assert mx.store.vectors.count(USER) == MEMORIES
