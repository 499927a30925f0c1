"""What the vector index keeps of deleted vectors (`VectorIndex.purge`): after `delete_user` and an
erasing `delete`, no file of an embedded Chroma holds the deleted vectors, their memory ids or the
deleted user's id (Chroma left them in free pages of `chroma.sqlite3`, in its log and in the graph
folders of dropped collections, and a vector tells its text to whoever guesses it), while every other
memory is still found by search."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mirix_py.engine import Mirix
from mirix_py.store import chroma_files
from mirix_py.store.vectors import ChromaVectorIndex, VectorItem, collection_name, rebuilding_name

ALICE, BOB = "alice@example.com", "bob"


def holding(folder: Path, needles: dict[str, bytes]) -> dict[str, list[str]]:
    """Each file under `folder` (relative path) -> the names of the needles its bytes hold, for those holding any."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        names = [name for name, needle in needles.items() if needle in raw]
        if names:
            found[str(path.relative_to(folder))] = names
    return found


def vector_bytes(vector) -> bytes:
    """A vector as Chroma stores it: float32, in the machine's byte order."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def memory_needles(mx: Mirix, user_id: str, memory_ids: list[str]) -> dict[str, bytes]:
    """The ids of these memories and the bytes of those with a stored vector, named."""
    vectors = mx.store.vectors.get(user_id, memory_ids)
    assert vectors  # a vector to look for
    return {**{f"id {m}": m.encode() for m in memory_ids},
            **{f"vector {m}": vector_bytes(v) for m, v in vectors.items()}}


def found_by_search(mx: Mirix, query: str, user_id: str, memory_id: str) -> bool:
    return any(h.memory.id == memory_id for h in mx.search(query, user_id=user_id, method="embedding"))


# ------------------------------------------------------------------ through the engine, embedded defaults


def test_delete_user_leaves_no_byte_of_their_vectors_ids_or_user_id_in_the_data_dir(tmp_path, embedder):
    data = tmp_path / "data"
    with Mirix(data, embedder=embedder) as mx:
        mx.add([{"role": "user", "name": "Alice", "content": "The biopsy of my left lung came back malignant."},
                {"role": "user", "name": "Alice", "content": "I am hiding my diagnosis from my employer."}],
               user_id=ALICE)
        mx.add("I like hiking in the mountains with my dog Rex.", user_id=BOB)
        alice = memory_needles(mx, ALICE, [m.id for m in mx.list(user_id=ALICE)])
        bob_turn = next(m.id for m in mx.list(user_id=BOB) if m.id.startswith("epi_"))
        bob = memory_needles(mx, BOB, [bob_turn])
        mx.delete_user(ALICE)
    with Mirix(data, embedder=embedder) as mx:  # opened again: Chroma reads its log and graphs back
        assert found_by_search(mx, "walking my dog in the hills", BOB, bob_turn)
    assert holding(data, {"user id": ALICE.encode(), **alice}) == {}
    assert set(holding(data, bob)["chroma/chroma.sqlite3"]) == set(bob)  # what stays is still there to find


def test_an_erased_memorys_vector_leaves_the_data_dir_and_its_id_every_chroma_file(tmp_path, embedder):
    """The erased turn's id stays in `mirix.db`, in its history event (emptied): only the vector index
    is looked at for the id."""
    data = tmp_path / "data"
    with Mirix(data, embedder=embedder) as mx:
        erased = mx.add("My oncologist says the biopsy came back malignant.", user_id="kim")
        kept = mx.add("I like hiking in the mountains with my dog Rex.", user_id="kim")
        other = mx.add("My sister lives by the harbour in Quixhaven.", user_id=BOB)
        erased_id, kept_id, other_id = (next(c.memory_id for c in r.changes if c.memory_type.value == "episodic")
                                        for r in (erased, kept, other))
        gone = memory_needles(mx, "kim", [erased_id])
        staying = memory_needles(mx, "kim", [kept_id])
        mx.delete(erased_id, user_id="kim", erase=True)
        assert mx.store.vectors.get("kim", [erased_id]) == {}
    with Mirix(data, embedder=embedder) as mx:
        assert found_by_search(mx, "walking my dog in the hills", "kim", kept_id)
        assert found_by_search(mx, "my sister's town by the sea", BOB, other_id)
    assert holding(data / "chroma", gone) == {}
    assert holding(data, {k: v for k, v in gone.items() if k.startswith("vector")}) == {}
    # what stays is still there: its id (its vector may be in the rebuilt graph only, written to disk
    # whole, `vectors.FILL_SYNC_THRESHOLD`, as a unit row, not these bytes: the search above finds it)
    assert {k for k in staying if not k.startswith("vector")} <= set(holding(data, staying)["chroma/chroma.sqlite3"])


def test_every_layout_still_finds_the_other_users_memories_after_an_erase_and_a_delete_user(mx):
    """A Chroma server and pgvector purge nothing (their files are not the engine's, or wait for
    PostgreSQL's VACUUM); on every layout the other user's memories are found as before."""
    erased = mx.add("My oncologist says the biopsy came back malignant.", user_id=ALICE)
    kept = mx.add("I keep bees on the roof of the barn.", user_id=ALICE)
    other = mx.add("I like hiking in the mountains with my dog Rex.", user_id=BOB)
    erased_id, kept_id, other_id = (next(c.memory_id for c in r.changes if c.memory_type.value == "episodic")
                                    for r in (erased, kept, other))
    mx.delete(erased_id, user_id=ALICE, erase=True)
    assert found_by_search(mx, "beehives on the roof", ALICE, kept_id)
    assert found_by_search(mx, "walking my dog in the hills", BOB, other_id)
    mx.delete_user(ALICE)
    assert mx.search("beehives on the roof", user_id=ALICE, method="embedding") == []
    assert found_by_search(mx, "walking my dog in the hills", BOB, other_id)
    assert mx.doctor().clean, mx.doctor().summary()


# ------------------------------------------------------------------ the index, with a graph on disk


def unit_vectors(n: int, seed: int) -> np.ndarray:
    """Vectors whose float32 bytes Chroma stores unchanged in its graph too: 256 components of ±1/16 and
    128 zeros have length exactly 1, so cosine's normalisation leaves every bit as it was."""
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-0.0625, 0.0625], dtype=np.float32), size=(n, 256))
    return np.concatenate([signs, np.zeros((n, 128), dtype=np.float32)], axis=1)


def items(prefix: str, vectors: np.ndarray) -> list[VectorItem]:
    return [VectorItem(f"{prefix}{i:032x}", v.tolist(), "episodic") for i, v in enumerate(vectors)]


def graph_folders(path: Path) -> list[Path]:
    return sorted(h.parent for h in path.glob("*/header.bin"))


@pytest.fixture
def two_users(tmp_path):
    """An embedded index: ada's 1,100 vectors (past Chroma's 1,000 writes, so her graph is on disk)
    with one deleted, and bob's 20 vectors in a collection since dropped."""
    path = tmp_path / "chroma"
    index = ChromaVectorIndex.embedded(path)
    ada, bob = items("epi_ada", unit_vectors(1100, seed=1)), items("epi_bob", unit_vectors(20, seed=2))
    for start in range(0, len(ada), 100):
        index.upsert("ada", ada[start:start + 100])
    index.upsert("bob", bob)
    index.delete("ada", [ada[7].id])
    index.drop_user("bob")
    yield path, index, ada, bob
    index.close()


def needles_of(vectors: list[VectorItem]) -> dict[str, bytes]:
    return {**{f"id {v.id}": v.id.encode() for v in vectors},
            **{f"vector {v.id}": vector_bytes(v.embedding) for v in vectors}}


def test_purge_takes_a_deleted_vector_out_of_the_graph_and_the_database_and_keeps_the_rest_searchable(two_users):
    path, index, ada, _ = two_users
    deleted = needles_of([ada[7]])
    assert holding(path, deleted)  # what Chroma leaves: the graph still holds the deleted element
    index.purge("ada")
    assert holding(path, deleted) == {}
    assert index.ids("ada") == {v.id for v in ada} - {ada[7].id}
    assert index.query("ada", ada[700].embedding, k=1)[0][0] == ada[700].id
    index.close()
    assert holding(path, deleted) == {}  # nothing written back on close
    reopened = ChromaVectorIndex.embedded(path)
    assert reopened.count("ada") == 1099
    assert reopened.query("ada", ada[1050].embedding, k=1)[0][0] == ada[1050].id
    assert reopened.users() == {"ada": collection_name("ada")}
    reopened.close()


def test_purge_after_a_dropped_collection_removes_its_folder_and_its_rows_free_pages(two_users):
    path, index, ada, bob = two_users
    folders = graph_folders(path)
    assert len(folders) == 2  # bob's folder outlived his collection
    assert holding(path, {"user id": b"bob", **needles_of(bob[:3])})
    index.purge("bob")
    assert graph_folders(path) == [f for f in folders if f.exists()] and len(graph_folders(path)) == 1
    assert holding(path, {"user": collection_name("bob").encode(), **needles_of(bob)}) == {}
    assert index.users() == {"ada": collection_name("ada")}
    assert index.query("ada", ada[3].embedding, k=1)[0][0] == ada[3].id  # ada's collection untouched


def test_a_rebuild_cut_short_leaves_the_old_collection_whole_and_the_next_one_or_drop_user_takes_it_away(
        tmp_path, monkeypatch):
    index = ChromaVectorIndex.embedded(tmp_path / "chroma")
    ada = items("epi_ada", unit_vectors(30, seed=3))
    index.upsert("ada", ada)
    opened = index._open_collection

    class Failing:
        def __init__(self, inner):
            self.inner = inner

        def add(self, **kwargs):
            raise OSError("killed while filling")

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(index, "_open_collection",
                        lambda name, user_id, create: Failing(opened(name, user_id, create)))
    with pytest.raises(OSError):
        index.rebuild("ada")
    monkeypatch.undo()
    assert index.ids("ada") == {v.id for v in ada}
    assert index.query("ada", ada[4].embedding, k=1)[0][0] == ada[4].id
    assert index.users() == {"ada": collection_name("ada")}  # the half-filled one is no user's
    assert index.rebuild("ada") == 30 and index.count("ada") == 30
    index.upsert("ada", ada[:2])
    index._open_collection(rebuilding_name("ada"), "ada", create=True).add(
        ids=["stray"], embeddings=[ada[0].embedding])  # as a crash would leave it
    index.drop_user("ada")
    assert [c.name for c in index._client.list_collections()] == []
    index.close()


def test_a_purge_that_cannot_vacuum_logs_what_stays_and_removes_no_folder(two_users, monkeypatch, caplog):
    """The deletion is committed before the purge: a failure is said, not raised, and no folder goes
    without the database naming the live ones."""
    path, index, ada, _ = two_users

    def failing(database):
        raise OSError("disk full")

    monkeypatch.setattr(chroma_files, "vacuum", failing)
    with caplog.at_level(logging.WARNING, logger="mirix_py.store.vectors"):
        index.purge("bob")
    assert "deleted vectors stay in" in caplog.text and "disk full" in caplog.text
    assert len(graph_folders(path)) == 2
    assert index.query("ada", ada[3].embedding, k=1)[0][0] == ada[3].id


def test_only_graph_folders_no_segment_names_are_removed_and_not_without_the_segments(tmp_path):
    chroma = tmp_path / "chroma"
    (chroma / "notes").mkdir(parents=True)
    (chroma / "0b6c1d3e-0000-4000-8000-000000000000").mkdir()
    (chroma / "7f1e2a3b-0000-4000-8000-000000000000").mkdir()
    (chroma / "7f1e2a3b-0000-4000-8000-000000000000" / "other.bin").write_bytes(b"not a graph file")
    with sqlite3.connect(chroma / "chroma.sqlite3") as db:
        db.execute("CREATE TABLE other (x)")
    db.close()
    with pytest.raises(OSError, match="no such table: segments"):
        chroma_files.purge_deleted(chroma)
    every = sorted(p.name for p in chroma.iterdir() if p.is_dir())
    assert len(every) == 3
    with sqlite3.connect(chroma / "chroma.sqlite3") as db:  # a database naming no segment
        db.execute("CREATE TABLE segments (id TEXT)")
    db.close()
    assert chroma_files.purge_deleted(chroma) == 1  # the empty graph folder only
    assert sorted(p.name for p in chroma.iterdir() if p.is_dir()) == ["7f1e2a3b-0000-4000-8000-000000000000", "notes"]
    assert chroma_files.purge_deleted(tmp_path / "nothing here") == 0
