"""A restore lands on the vector index an engine opening the database would use, and uses the backup's
pgvector vectors where they fit (`facade.maintenance.restore_into`, `store.vector_layout.settle`)."""

from __future__ import annotations

import hashlib
import os

import pytest
from recording_embedder import RecordingEmbedder

from mirix_py.engine import Mirix

PGVECTOR_URL = os.environ.get("MIRIX_TEST_PGVECTOR_URL")
TOM = "Tom lives in Rome"


@pytest.fixture
def new_database(new_pgvector_database):
    return new_pgvector_database


class TinyHashing:
    """Another embedder than MiniLM (another name and dimension), as a backup made before a change of model."""

    name, dim = "tiny-hashing", 8

    def embed(self, texts):
        return [[1.0 + b for b in hashlib.sha256(t.encode()).digest()[:self.dim]] for t in texts]


def _backup(tmp_path, database_url: str, embedder, user_id: str) -> tuple[str, int]:
    """A pgvector store's backup (its `memory_vector` rows in it): the vault key and how many vectors."""
    with Mirix(tmp_path / "src", embedder=embedder, database_url=database_url) as mx:
        mx.add([{"role": "user", "content": TOM + "."},
                {"role": "user", "content": "I planted tulips in the front garden."}], user_id=user_id)
        assert mx.describe()["vectors"] == "pgvector"
        stored = mx.store.vectors.count(user_id)
        assert mx.backup(tmp_path / "b.tar.gz")["counts"]["memory_vector"] == stored > 0
        return (mx.settings.data_dir / "vault.key").read_text().strip(), stored


def _top_by_vector(mx: Mirix, user_id: str) -> str:
    """The text of the first memory the vector leg alone finds for a question about Tom."""
    return mx.search("where does Tom live", user_id=user_id, method="embedding")[0].text


@pytest.mark.parametrize("vector_store", [None, "pgvector"], ids=["auto", "pgvector"])
def test_a_restore_into_a_new_database_of_a_pgvector_server_keeps_the_backups_vectors(
        tmp_path, pgvector_schema_url, new_database, embedder, user_id, vector_store, monkeypatch):
    key, stored = _backup(tmp_path, pgvector_schema_url, embedder, user_id)
    counting = RecordingEmbedder(embedder)
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "dst", vault_key=key, embedder=counting,
                       database_url=new_database, vector_store=vector_store) as copy:
        assert copy.describe()["vectors"] == "pgvector"  # as an engine opening a new database chooses
        assert copy.store.vectors.count(user_id) == stored
        assert counting.texts == []  # the backup's vectors, not embedded again
        assert not (tmp_path / "dst" / "chroma").exists()
        assert TOM in _top_by_vector(copy, user_id)
    monkeypatch.setenv("MIRIX_VAULT_KEY", key)  # every engine on one database shares its key
    with Mirix(tmp_path / "other", embedder=embedder, database_url=new_database) as other:  # one index for all
        assert other.describe()["vectors"] == "pgvector"
        assert TOM in _top_by_vector(other, user_id)


def test_a_restored_pgvector_backup_of_another_embedder_is_embedded_again_by_the_restore(
        tmp_path, pgvector_schema_url, new_database, embedder, user_id):
    """The open drops vectors of another dimension and replays only the restore's marks: the restore's
    doctor pass embeds those memories again, so the restored store's vector search finds them."""
    key, stored = _backup(tmp_path, pgvector_schema_url, TinyHashing(), user_id)
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "dst", vault_key=key, embedder=embedder,
                       database_url=new_database) as copy:
        assert copy.store.vectors.count(user_id) == stored
        assert TOM in _top_by_vector(copy, user_id)
        assert copy.doctor().clean


def test_a_restored_pgvector_backup_of_older_secret_vectors_embeds_them_again(
        tmp_path, pgvector_schema_url, new_database, embedder, user_id):
    """A backup made before secrets' references were embedded alike holds, for a memory referring to a
    secret, a vector of its older text; loaded as backed up, it is made again from the current text
    (migration 0019 marks such memories in an upgraded store; a restore loads into a new schema)."""
    from mirix_py.records import SECRET_REF
    from mirix_py.store.vectors import VectorItem

    with Mirix(tmp_path / "src", embedder=embedder, database_url=pgvector_schema_url) as mx:
        mx.add("The wifi password for the cabin is Tr0ub4dor&3x, keep it handy.", user_id=user_id)
        referring = [m for m in mx.list(user_id=user_id) if SECRET_REF.search(m._embedded())]
        for memory in referring:  # the vector an earlier version made: the reference as stored
            [old] = embedder.embed([memory._embedded()])
            mx.store.vectors.upsert(user_id, [VectorItem(memory.id, old, memory.memory_type.value)])
        mx.backup(tmp_path / "b.tar.gz")
        key = (mx.settings.data_dir / "vault.key").read_text().strip()
    assert {m.id[:3] for m in referring} == {"kv_", "epi"}
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "dst", vault_key=key, embedder=embedder,
                       database_url=new_database) as copy:
        stored = copy.store.vectors.get(user_id, [m.id for m in referring])
        for memory in referring:
            [now] = embedder.embed([copy.get(memory.id, user_id=user_id).embedding_text()])
            assert sum(a * b for a, b in zip(stored[memory.id], now)) > 0.999  # unit vectors: cosine
