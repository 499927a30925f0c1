"""A small user's vectors kept in memory and searched exactly: the same nearest in every process,
kept in step with the index's own writes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mirix_py.store.kept_vectors import KeptVectors, KeptVectorsCache
from mirix_py.store.vectors import ChromaVectorIndex, VectorItem, rebuilding_name


def exact_nearest(ids, embeddings, query, n):
    """The test's own full scan: cosine distance in float64, nearest first, equal distances by id."""
    matrix = np.asarray(embeddings, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
    distances = 1.0 - (matrix @ q) / np.where(norms > 0, norms, 1.0)
    order = sorted(range(len(ids)), key=lambda i: (float(distances[i]), ids[i]))[:n]
    return [ids[i] for i in order], [float(distances[i]) for i in order]


def _items(n: int, seed: int = 1, dim: int = 16) -> list[VectorItem]:
    rng = np.random.default_rng(seed)
    return [VectorItem(f"m{i:03d}", rng.normal(size=dim).tolist(), "episodic" if i % 3 else "semantic")
            for i in range(n)]


def test_nearest_is_the_exact_cosine_order_equal_ones_by_id_and_filters_by_type():
    kept = KeptVectors.of(["b", "a", "c", "z"], [[1, 0], [2, 0], [0, 1], [0, 0]], ["episodic", "semantic", "episodic", None])
    assert [i for i, _ in kept.nearest([1, 0], 3)] == ["a", "b", "c"]
    assert kept.nearest([1, 0], 2)[0][1] == pytest.approx(1.0)
    assert [i for i, _ in kept.nearest([1, 0], 5, ["episodic"])] == ["b", "c"]
    assert kept.nearest([1, 0], 5, ["resource"]) == [] and KeptVectors.of([], [], []).nearest([1, 0], 3) == []


def test_nearest_agrees_with_a_full_scan_whatever_k():
    items = _items(300)
    kept = KeptVectors.of([i.id for i in items], [i.embedding for i in items], [i.memory_type for i in items])
    query = items[7].embedding
    for k in (1, 10, 299, 400):
        ids, distances = exact_nearest([i.id for i in items], [i.embedding for i in items], query, k)
        found = kept.nearest(query, k)
        assert [i for i, _ in found] == ids
        assert [s for _, s in found] == pytest.approx([1.0 - d for d in distances], abs=1e-5)


def test_writes_replace_add_and_remove_vectors():
    kept = KeptVectors.of(["a", "b"], [[1, 0], [0, 1]], ["episodic", "episodic"])
    kept = kept.upserted(["b", "c", "c"], [[1, 0.1], [0, 1], [-1, 0]], ["semantic", "episodic", "episodic"])
    assert kept.ids == ("a", "b", "c") and kept.types == ("episodic", "semantic", "episodic")
    assert [i for i, _ in kept.nearest([-1, 0], 1)] == ["c"]  # a batch naming an id twice: its last vector
    kept = kept.without(["a", "x"])
    assert kept.ids == ("b", "c") and [i for i, _ in kept.nearest([1, 0], 3)] == ["b", "c"]
    assert len(kept.without(["b", "c"])) == 0 and len(KeptVectors.of([], [], []).upserted(["a"], [[1, 0]], [None])) == 1


def test_the_cache_forgets_the_least_recently_searched_and_too_large_users():
    cache = KeptVectorsCache(limit=3, total=4)
    two = KeptVectors.of(["a", "b"], [[1, 0], [0, 1]], [None, None])
    assert cache.keep("u1", two, cache.writes("u1")) and cache.keep("u2", two, cache.writes("u2"))
    cache.get("u1")  # u1 searched last: u2 goes when u3 comes
    cache.keep("u3", two, cache.writes("u3"))
    assert cache.get("u2") is None and cache.get("u1") is two and cache.get("u3") is two
    cache.upserted("u1", ["c", "d"], [[1, 1], [1, -1]], [None, None])  # four now: more than 3
    assert cache.get("u1") is None and cache.is_large("u1")
    cache.deleted("u1", ["d"])
    assert not cache.is_large("u1")  # counted again at its next search
    assert cache.keep("u1", two, cache.writes("u1")) and cache.get("u3") is two
    cache.deleted("u1", ["a"])  # one vector left of u1's: u1 and u3 hold 3
    assert len(cache.get("u1")) == 1 and cache.keep("u4", KeptVectors.of(["x"], [[1, 0]], [None]), cache.writes("u4"))
    assert all(cache.get(u) is not None for u in ("u1", "u3", "u4"))  # 4 vectors: none goes
    cache.forget()
    assert all(cache.get(u) is None for u in ("u1", "u3", "u4"))
    assert not cache.keep("u5", two, 0)  # a read not begun with `writes` is not kept


def test_vectors_read_while_a_write_ran_are_not_kept():
    cache = KeptVectorsCache()
    before = cache.writes("u")
    cache.upserted("u", ["a"], [[1, 0]], [None])  # a write between the read and `keep`
    assert not cache.keep("u", KeptVectors.of([], [], []), before) and cache.get("u") is None
    assert cache.keep("u", KeptVectors.of(["a"], [[1, 0]], [None]), cache.writes("u"))


def test_a_read_begun_before_its_user_was_dropped_is_not_kept():
    """A write, then the user dropped (a new opener, a rebuild, eviction), then a second read begun:
    the first read's stale vectors must not pass for the second's."""
    cache = KeptVectorsCache()
    stale = cache.writes("u")
    cache.upserted("u", ["a"], [[1, 0]], [None])
    cache.forget("u")
    fresh = cache.writes("u")
    assert not cache.keep("u", KeptVectors.of([], [], []), stale) and cache.get("u") is None
    assert cache.keep("u", KeptVectors.of(["a"], [[1, 0]], [None]), fresh) and len(cache.get("u")) == 1


def test_an_embedded_index_answers_a_small_user_exactly_and_in_step_with_its_writes(tmp_path):
    index = ChromaVectorIndex.embedded(tmp_path / "chroma")
    items = _items(200)
    index.upsert("u", items)
    query = items[11].embedding
    ids, _ = exact_nearest([i.id for i in items], [i.embedding for i in items], query, 30)
    assert [i for i, _ in index.query("u", query, 30)] == ids
    # written after the vectors were kept: a replaced vector, a new one, a deleted one
    index.upsert("u", [VectorItem("m011", (-np.asarray(query)).tolist(), "episodic"),
                       VectorItem("new", query, "semantic")])
    index.delete("u", [ids[1]])
    found = [i for i, _ in index.query("u", query, 5)]
    assert found[0] == "new" and "m011" not in found and ids[1] not in found
    assert [i for i, _ in index.query("u", query, 3, memory_types=["semantic"])][0] == "new"
    assert index.query("nobody", query, 3) == []
    index.drop_user("u")
    assert index.query("u", query, 3) == []
    index.close()


def test_a_large_user_is_searched_on_the_graph(tmp_path, monkeypatch):
    index = ChromaVectorIndex.embedded(tmp_path / "chroma")
    assert index._kept is not None
    monkeypatch.setattr(index._kept, "limit", 50)
    items = _items(80)
    index.upsert("u", items)
    assert index.query("u", items[3].embedding, 5)[0][0] == "m003"
    assert index._kept.is_large("u") and index._kept.get("u") is None
    index.close()


def test_two_processes_find_the_same_nearest_on_the_same_store(tmp_path):
    """An embedded Chroma builds a small collection's graph again, in another order, in each process
    that opens it (on these clustered vectors written in 12 batches, three processes searching the
    graph gave three different answers); the kept vectors answer the same in both, and exactly."""
    rng = np.random.default_rng(4)
    vectors = rng.normal(size=(600, 64)) + 3 * rng.normal(size=(20, 64))[rng.integers(0, 20, 600)]
    queries = rng.normal(size=(40, 64)) + 3 * rng.normal(size=(40, 64))
    path = tmp_path / "chroma"
    index = ChromaVectorIndex.embedded(path)
    for start in range(0, 600, 50):
        index.upsert("u", [VectorItem(f"m{i:03d}", vectors[i].tolist(), "episodic") for i in range(start, start + 50)])
    index.close()
    script = textwrap.dedent(f"""
        import json, sys
        from mirix_py.store.vectors import ChromaVectorIndex
        index = ChromaVectorIndex.embedded({str(path)!r})
        queries = json.loads(sys.stdin.read())
        print(json.dumps([[i for i, _ in index.query("u", q, 60)] for q in queries]))
        index.close()
    """)
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], input=json.dumps(queries.tolist()),
                                      capture_output=True, text=True, check=True).stdout) for _ in range(2)]
    ids = [f"m{i:03d}" for i in range(600)]
    assert runs[0] == runs[1] == [exact_nearest(ids, vectors, q, 60)[0] for q in queries]


def test_equal_vectors_score_equal_wherever_they_lie():
    """Six equal vectors: a matrix product scored the last two of them apart (in its last bit)."""
    vectors = np.tile(np.random.default_rng(2).normal(size=384), (6, 1))
    kept = KeptVectors.of([f"m{i}" for i in (5, 3, 1, 0, 4, 2)], vectors, [None] * 6)
    found = kept.nearest(vectors[0], 4)
    assert [i for i, _ in found] == ["m0", "m1", "m2", "m3"] and len({s for _, s in kept.nearest(vectors[0], 6)}) == 1


def test_searches_beside_writes_end_with_every_write_kept(tmp_path):
    """Searches running while another thread writes: each reads a whole state, and once the writes are
    done the kept vectors answer as an exact scan of what the collection holds."""
    import threading

    index = ChromaVectorIndex.embedded(tmp_path / "chroma")
    items = _items(400, seed=6)
    index.upsert("u", items[:100])
    errors: list[BaseException] = []

    def write():
        try:
            for start in range(100, 400, 20):
                index.upsert("u", items[start:start + 20])
                index.delete("u", [items[start - 100].id])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    while writer.is_alive():
        assert len(index.query("u", items[0].embedding, 10)) == 10
    writer.join()
    assert not errors
    held = sorted(index.ids("u"))
    stored = index.get("u", held)
    expected, _ = exact_nearest(held, [stored[i] for i in held], items[5].embedding, 50)
    assert [i for i, _ in index.query("u", items[5].embedding, 50)] == expected
    index.close()


def test_a_read_that_races_a_delete_falls_back_to_the_graph_and_is_tried_again(tmp_path, monkeypatch):
    """Chroma's `get` of every vector can fail while another thread deletes ("Error finding id", seen in
    CI): that search walks the graph instead of failing, and the next one reads the vectors again."""
    import chromadb

    index = ChromaVectorIndex.embedded(tmp_path / "chroma")
    items = _items(50)
    index.upsert("u", items)
    coll = index._collection("u", create=False)
    get = coll.get
    failures = []

    def racing_get(**kw):
        if not failures:
            failures.append(kw)
            raise chromadb.errors.InternalError("Error executing plan: Internal error: Error finding id")
        return get(**kw)

    monkeypatch.setattr(coll, "get", racing_get, raising=False)
    assert index.query("u", items[4].embedding, 3)[0][0] == "m004" and index._kept.get("u") is None
    assert index.query("u", items[4].embedding, 3)[0][0] == "m004" and len(index._kept.get("u")) == 50
    index.close()


def test_two_indexes_of_one_folder_in_one_process_see_each_others_writes(tmp_path):
    """Chroma shares one system a folder per process: the second index sees the first one's writes,
    and so do the vectors it keeps."""
    first = ChromaVectorIndex.embedded(tmp_path / "chroma")
    second = ChromaVectorIndex.embedded(tmp_path / "chroma")
    items = _items(30)
    first.upsert("u", items[:20])
    assert second.query("u", items[3].embedding, 1)[0][0] == "m003"  # read and kept by the second
    first.upsert("u", items[20:])
    first.delete("u", ["m003"])
    assert second.query("u", items[25].embedding, 1)[0][0] == "m025"
    assert "m003" not in [i for i, _ in second.query("u", items[3].embedding, 30)]
    first.close()
    second.close()


def test_a_search_during_a_rebuild_does_not_leave_part_of_the_vectors_kept(tmp_path):
    """`rebuild` fills a new collection a thousand at a time while searches read the old one; a search
    between two of those writes reads all of the old one, and the new one is read whole afterwards."""
    index = ChromaVectorIndex.embedded(tmp_path / "chroma")
    rng = np.random.default_rng(3)
    items = [VectorItem(f"m{i:04d}", rng.normal(size=8).tolist(), "episodic") for i in range(1500)]
    index.upsert("u", items)
    opened = index._open_collection

    class SearchAfterFirstWrite:
        """The collection `rebuild` fills, with a search right after its first thousand are written."""

        def __init__(self, coll):
            self.coll, self.searched = coll, False

        def add(self, **kwargs):
            self.coll.add(**kwargs)
            if not self.searched:
                self.searched = True
                assert len(index.query("u", items[0].embedding, 1500)) == 1500  # the old collection, whole

        def __getattr__(self, name):
            return getattr(self.coll, name)

    fresh: list = []

    def open_collection(name, user_id, create):
        coll = opened(name, user_id, create)
        if name == rebuilding_name(user_id) and not fresh:  # the collection `rebuild` fills
            fresh.append(SearchAfterFirstWrite(coll))
            return fresh[0]
        return coll

    index._open_collection = open_collection
    assert index.rebuild("u") == 1500 and fresh and fresh[0].searched
    index._open_collection = opened
    last = items[-1]
    assert index.query("u", last.embedding, 1)[0][0] == last.id
    assert len(index.query("u", last.embedding, 2000)) == 1500
    index.close()
