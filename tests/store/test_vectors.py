"""The Chroma vector index: a query with each stored vector finds it, and a rebuild keeps every
vector (the check and repair `doctor` runs for an index that lost a node)."""

from __future__ import annotations

import chromadb
import numpy as np
import pytest

from mirix_py.store.vectors import ChromaVectorIndex, VectorItem, collection_name, lost_in_results


def test_an_id_missing_from_its_own_results_is_lost_unless_the_top_k_are_all_ties():
    assert lost_in_results(["a", "b"], [["a", "c"], ["c", "d"]], [[0.0, 0.2], [0.1, 0.3]]) == ["b"]
    assert lost_in_results(["b"], [["c", "d"]], [[0.0, 0.0]]) == []  # k identical vectors: any may come back
    assert lost_in_results(["b"], [[]], [[]]) == ["b"]


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

    index._collections[collection_name("u")] = Racing(1)
    assert index.query("u", [1.0, 0.0], 3)[0][0] == "m1" and len(calls) == 2  # written by the second try
    calls.clear()
    index._collections[collection_name("u")] = Racing(5)
    assert index.query("u", [1.0, 0.0], 3) == [] and len(calls) == 2
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
