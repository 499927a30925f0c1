"""The Chroma vector index: a query with each stored vector finds it, and a rebuild keeps every
vector (the check and repair `doctor` runs for an index that lost a node)."""

from __future__ import annotations

import chromadb
import numpy as np
import pytest

from mirix_py.store import vectors
from mirix_py.store.vectors import ChromaVectorIndex, VectorItem, collection_name, exact_nearest, lost_in_results


def test_an_id_missing_from_its_own_results_is_lost_unless_the_top_k_are_all_ties():
    assert lost_in_results(["a", "b"], [["a", "c"], ["c", "d"]], [[0.0, 0.2], [0.1, 0.3]]) == ["b"]
    assert lost_in_results(["b"], [["c", "d"]], [[0.0, 0.0]]) == []  # k identical vectors: any may come back
    assert lost_in_results(["b"], [[]], [[]]) == ["b"]
    # a copy of the same vector found (HNSW among many copies returns some, not all): reached
    assert lost_in_results(["b"], [["c", "d", "e"]], [[0.0, 0.0, 0.3]]) == []


def test_every_vector_is_reached_and_a_rebuild_keeps_ids_vectors_and_types(tmp_path):
    index = ChromaVectorIndex(chromadb.PersistentClient(str(tmp_path / "chroma")))
    rng = np.random.default_rng(7)
    items = [VectorItem(f"m{i}", rng.normal(size=16).tolist(), "episodic" if i % 2 else "semantic")
             for i in range(300)]
    index.upsert("u", items)
    index.delete("u", [f"m{i}" for i in range(0, 300, 3)])
    index.upsert("u", [VectorItem(i.id, rng.normal(size=16).tolist(), i.memory_type) for i in items[1:300:5]])
    before_ids = index.ids("u")
    before = index.get("u", sorted(before_ids))
    assert index.unreachable("u") == []
    assert index.rebuild("u") == len(before_ids) > 150
    assert index.ids("u") == before_ids and index.users() == {"u": index.users()["u"]}
    after = index.get("u", sorted(before_ids))
    assert all(np.allclose(before[i], after[i]) for i in before_ids)
    assert index.unreachable("u") == []
    hits = index.query("u", after["m1"], 5, memory_types=["episodic"])
    assert hits[0][0] == "m1"
    assert index.unreachable("nobody") == [] and index.rebuild("nobody") == 0
    # only some ids: a deleted one is not stored, so nothing of it is lost
    assert index.unreachable("u", only=["m1", "m0"]) == [] and index.unreachable("u", only=[]) == []


def test_a_query_racing_the_first_write_of_a_collection_answers_instead_of_failing(tmp_path):
    """Embedded Chroma can raise "Error creating hnsw segment reader: Nothing found on disk" for a
    collection whose first vectors are still being written (a REST chat with remember=true got a 500):
    the query is tried once more, then gives no hits; any other error still raises."""
    index = ChromaVectorIndex(chromadb.PersistentClient(str(tmp_path / "chroma")))
    index.upsert("u", [VectorItem("m1", [1.0, 0.0], "episodic")])
    coll = index._collection("u", create=False)
    calls = []

    class Racing:
        def __init__(self, failures, message="Error executing plan: Internal error: Error creating hnsw segment "
                                                 "reader: Nothing found on disk"):
            self.failures, self.message = failures, message

        def query(self, **kw):
            calls.append(kw)
            if len(calls) <= self.failures:
                raise chromadb.errors.InternalError(self.message)
            return coll.query(**kw)

        def __getattr__(self, name):
            return getattr(coll, name)

    index._collections[collection_name("u")] = Racing(1)
    assert index.query("u", [1.0, 0.0], 3)[0][0] == "m1" and len(calls) == 2  # written by the second try
    calls.clear()
    index._collections[collection_name("u")] = Racing(5)
    # no hits from the graph twice, while the collection holds one: it is searched exactly
    assert [i for i, _ in index.query("u", [1.0, 0.0], 3)] == ["m1"] and len(calls) == 2
    index._collections[collection_name("u")] = Racing(5, "Error executing plan: something else")
    with pytest.raises(chromadb.errors.InternalError):
        index.query("u", [1.0, 0.0], 3)


def test_a_closed_embedded_index_lets_its_folder_be_deleted_and_made_again_in_the_same_process(tmp_path):
    """Chroma keeps one system a folder per process while a client holds it: an index kept open past
    `close` wrote a folder made again through the deleted one's database ("readonly database")."""
    import shutil

    path = tmp_path / "chroma"
    first = ChromaVectorIndex.embedded(path)
    first.upsert("u", [VectorItem("m1", [1.0, 0.0], "episodic")])
    first.close()  # `first` stays referenced, as a caller's variable keeps it
    assert first.query("u", [1.0, 0.0], 3)[0][0] == "m1"  # a later use opens it again
    first.close()
    shutil.rmtree(path)
    second = ChromaVectorIndex.embedded(path)
    second.upsert("u", [VectorItem("m2", [0.0, 1.0], "episodic")])
    assert second.ids("u") == {"m2"} and second.query("u", [0.0, 1.0], 3)[0][0] == "m2"
    second.close()


def test_exact_nearest_orders_by_cosine_distance_then_id():
    ids, distances = exact_nearest(["b", "a", "c", "z"], [[1, 0], [2, 0], [0, 1], [0, 0]], [1, 0], 3)
    assert ids == ["a", "b", "c"] and distances == pytest.approx([0.0, 0.0, 1.0])  # a zero vector: distance 1, "z" last
    assert exact_nearest([], [], [1, 0], 3) == ([], [])


class LosingGraph:
    """A Chroma collection whose graph has lost `lost`: its queries never return it (as
    chroma-core/chroma#7758), while `get` and `count` still hold it."""

    def __init__(self, coll, lost: str) -> None:
        self.coll, self.lost = coll, lost

    def query(self, **kw):
        result = self.coll.query(**kw)
        keep = [n for n, i in enumerate(result["ids"][0]) if i != self.lost]
        return {key: [[value[0][n] for n in keep]] if value and key in ("ids", "distances", "metadatas") else value
                for key, value in result.items()}

    def __getattr__(self, name):
        return getattr(self.coll, name)


def _losing_index(tmp_path, n: int = 40):
    index = ChromaVectorIndex(chromadb.PersistentClient(str(tmp_path / "chroma")))
    rng = np.random.default_rng(3)
    items = [VectorItem(f"m{i}", rng.normal(size=8).tolist(), "episodic" if i % 2 else "semantic") for i in range(n)]
    index.upsert("u", items)
    name = collection_name("u")
    index._collections[name] = LosingGraph(index._collection("u", create=False), lost="m5")
    return index, items


def test_a_vector_the_graph_lost_is_still_found_when_a_query_asks_for_more_than_the_graph_returns(tmp_path, caplog):
    index, items = _losing_index(tmp_path)
    query = items[5].embedding
    ids, distances = exact_nearest([i.id for i in items], [i.embedding for i in items], query, 40)
    with caplog.at_level("WARNING", logger="mirix_py.store.vectors"):
        hits = index.query("u", query, 100)  # more than the 40 held: the graph returns 39
        again = index.query("u", query, 100)
    assert [i for i, _ in hits] == ids and hits[0][0] == "m5"
    assert [s for _, s in hits] == pytest.approx([1.0 - d for d in distances], abs=1e-5)
    assert again == hits
    assert sum("lost a node" in r.getMessage() for r in caplog.records) == 1  # once a user, not every search
    # by memory type too: the exact nearest, then those of the type
    typed = index.query("u", query, 30, memory_types=["episodic"])
    assert [i for i, _ in typed] == [i for i in ids if int(i[1:]) % 2][:30] and typed[0][0] == "m5"


def test_a_full_answer_from_the_graph_is_not_scanned_and_a_large_collection_is_not_scanned(tmp_path, monkeypatch):
    index, items = _losing_index(tmp_path)
    coll = index._collections[collection_name("u")]
    scans = []
    monkeypatch.setattr(type(coll), "get", lambda self, **kw: scans.append(kw) or self.coll.get(**kw), raising=False)
    assert len(index.query("u", items[0].embedding, 10)) == 10 and scans == []  # 10 back of 10 asked
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX", 20)
    hits = index.query("u", items[5].embedding, 100)  # 39 of 40: too large to scan here, left to `doctor`
    assert len(hits) == 39 and "m5" not in [i for i, _ in hits] and scans == []


def test_a_query_by_type_whose_filtered_query_comes_back_short_scans_that_type_exactly(tmp_path):
    # 8 episodic among 40: the 32 nearest hold fewer than 8 of them, so the filtered query runs, and
    # the graph returns 7 of the 8 it selects (m5 lost): the 8 come from an exact scan of the type
    index = ChromaVectorIndex(chromadb.PersistentClient(str(tmp_path / "chroma")))
    rng = np.random.default_rng(5)
    near = rng.normal(size=8)  # m5 and the semantic ones lie near it, the other episodic ones far off
    embeddings = [near if i == 5 else (near + 0.1 * rng.normal(size=8) if i >= 8 else -near + rng.normal(size=8))
                  for i in range(40)]
    items = [VectorItem(f"m{i}", v.tolist(), "episodic" if i < 8 else "semantic") for i, v in enumerate(embeddings)]
    index.upsert("u", items)
    graph = LosingGraph(index._collection("u", create=False), lost="m5")
    filtered = []
    graph.query = lambda **kw: filtered.append(kw.get("where")) or LosingGraph.query(graph, **kw)
    index._collections[collection_name("u")] = graph
    episodic = items[:8]
    ids, distances = exact_nearest([i.id for i in episodic], [i.embedding for i in episodic], items[5].embedding, 8)
    hits = index.query("u", items[5].embedding, 8, memory_types=["episodic"])
    assert filtered == [None, {"memory_type": {"$in": ["episodic"]}}]  # the nearest 32, then the filtered query
    assert [i for i, _ in hits] == ids and hits[0][0] == "m5"
    assert [s for _, s in hits] == pytest.approx([1.0 - d for d in distances], abs=1e-5)


def test_an_engine_reopens_a_collection_another_engine_dropped(tmp_path, embedder, pg_schema_url, chroma_url,
                                                              monkeypatch):
    """PostgreSQL and a Chroma server shared by two engines: after one deleted a user, the other kept
    a handle on the dropped collection, and its writes, searches and doctor for that user failed
    (`NotFoundError`) until it was restarted."""
    import uuid

    from cryptography.fernet import Fernet

    from mirix_py.engine import Mirix

    monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())  # engines of one deployment share it
    layout = {"database_url": pg_schema_url, "chroma_url": chroma_url.rstrip("/") + "/t_" + uuid.uuid4().hex[:12]}
    a = Mirix(tmp_path / "a", embedder=embedder, **layout)
    b = Mirix(tmp_path / "b", embedder=embedder, **layout)
    try:
        a.add("Ada paddles a red kayak on the fjord.", user_id="ada")
        assert a.search("kayak", user_id="ada", method="embedding")
        b.delete_user("ada")
        a.add("Ada keeps bees on the roof of the barn.", user_id="ada")
        assert "bees" in a.search("beehives on the roof", user_id="ada", method="embedding")[0].memory.search_text()
        assert a.doctor().clean, a.doctor().summary()
        assert b.doctor().clean, b.doctor().summary()
    finally:
        a.close()
        b.close()
