"""Backup while the engine is in use, restore into an empty data directory, key handled explicitly."""

from __future__ import annotations

import tarfile
import threading

import pytest

from mirix_py.upkeep.backup import read_manifest
from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput

SECRET = "Backup-Secret-9931x"


@pytest.fixture
def busy(mx, user_id):
    mx.add([{"role": "user", "content": f"My name is Ada. My password is {SECRET}"},
            {"role": "user", "content": "Tom lives in Rome."}], user_id=user_id)
    return mx


def test_backup_during_writes_then_restore(busy, user_id, tmp_path, embedder):
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set() and i < 40:
            busy.add(f"background note {i} about gardening", user_id=user_id)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        manifest = busy.backup(tmp_path / "b.tar.gz")
    finally:
        stop.set()
        thread.join()
    counts = manifest["counts"]
    assert counts["memory"] >= 5 and counts["input_log"] >= 1
    raw = b"".join(tarfile.open(tmp_path / "b.tar.gz").extractfile(m).read()
                   for m in tarfile.open(tmp_path / "b.tar.gz").getmembers())
    key = (busy.settings.data_dir / "vault.key").read_text().strip()
    assert SECRET.encode() not in raw and key.encode() not in raw

    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "restored", vault_key=key, embedder=embedder) as copy:
        assert sum(copy.stats()["memories"].values()) == counts["memory"]
        vault = copy.list(user_id=user_id, memory_types=["knowledge_vault"])[0]
        assert copy.get(vault.id, user_id=user_id, reveal=True).secret_value == SECRET
        assert copy.search("Tom Rome", user_id=user_id, method="bm25")
        assert copy.search("where does Tom live", user_id=user_id, method="embedding")
        assert copy.doctor().clean
        original = busy.list(user_id=user_id, limit=1000)
        restored_ids = {m.id for m in copy.list(user_id=user_id, limit=1000)}
        assert restored_ids <= {m.id for m in original}
        event = copy.history(vault.id, user_id=user_id)[0]
        assert event.operation.value == "insert"
        copy.add("after restore: new memories get fresh history ids", user_id=user_id)


def test_a_memory_that_expires_is_restored_with_its_expiry(mx, user_id, tmp_path, embedder):
    from datetime import timedelta

    from mirix_py.records import utcnow

    when = (utcnow() + timedelta(days=7)).replace(microsecond=0)
    mx.add("The door code this week is spring-lantern.", user_id=user_id, expires_at=when)
    expiring = {m.id: m.expires_at for m in mx.list(user_id=user_id)}
    mx.backup(tmp_path / "b.tar.gz")
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "r", vault_key=key, embedder=embedder) as restored:
        assert {m.id: m.expires_at for m in restored.list(user_id=user_id)} == expiring
        assert set(expiring.values()) == {when}


def test_restore_needs_the_right_key_and_an_empty_target(busy, tmp_path, embedder):
    from cryptography.fernet import Fernet

    busy.backup(tmp_path / "b.tar.gz")
    key = (busy.settings.data_dir / "vault.key").read_text().strip()
    with pytest.raises(InvalidInput, match="needs the vault key"):
        Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "r1", vault_key="", embedder=embedder)
    with pytest.raises(InvalidInput, match="does not open the backup"):
        Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "r2", vault_key=Fernet.generate_key().decode(), embedder=embedder)
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()
    with pytest.raises(InvalidInput, match="empty"):
        Mirix.restore(tmp_path / "b.tar.gz", busy.settings.data_dir, vault_key=key, embedder=embedder,
                      database_url=busy.settings.database_url)
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tarball")
    with pytest.raises(InvalidInput, match="not a mirix backup"):
        read_manifest(tmp_path / "junk.tar.gz")


def test_backup_and_restore_commands(tmp_path, monkeypatch, user_id):
    from typer.testing import CliRunner

    from mirix_py.cli.commands import app

    runner = CliRunner()
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "src"))
    runner.invoke(app, ["add", "Tom lives in Rome.", "--user", user_id, "--create"])
    out = runner.invoke(app, ["backup", str(tmp_path / "b.tar.gz")])
    assert out.exit_code == 0 and "not in the backup" in out.stdout
    monkeypatch.delenv("MIRIX_DATA_DIR")
    denied = runner.invoke(app, ["restore", str(tmp_path / "b.tar.gz"), "--data-dir", str(tmp_path / "dst")])
    assert denied.exit_code == 2 and "vault key" in denied.output
    ok = runner.invoke(app, ["restore", str(tmp_path / "b.tar.gz"), "--data-dir", str(tmp_path / "dst"),
                             "--vault-key-file", str(tmp_path / "src" / "vault.key")])
    assert ok.exit_code == 0, ok.output
    assert "restored" in ok.stdout


def test_pgvector_backup_holds_the_vectors_and_restores_them_without_embedding(tmp_path, pgvector_schema_url,
                                                                               more_pgvector_schemas, embedder, user_id):
    with Mirix(tmp_path / "src", embedder=embedder, database_url=pgvector_schema_url) as mx:
        mx.add([{"role": "user", "content": "Tom lives in Rome."},
                {"role": "user", "content": "I planted tulips in the front garden."}], user_id=user_id)
        stored = mx.store.vectors.count(user_id)
        manifest = mx.backup(tmp_path / "b.tar.gz")
        key = (mx.settings.data_dir / "vault.key").read_text().strip()
    assert manifest["counts"]["memory_vector"] == stored > 0

    class NoEmbedding:  # the query embedder for searches; restoring must not need it for the rows
        name, dim = embedder.name, embedder.dim
        texts: list[str] = []

        def embed(self, texts):
            self.texts += list(texts)
            return embedder.embed(texts)

    counting = NoEmbedding()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "dst", vault_key=key, embedder=counting,
                       database_url=more_pgvector_schemas()) as copy:
        assert copy.describe()["vectors"] == "pgvector"
        assert copy.store.vectors.count(user_id) == stored
        assert counting.texts == [] and copy.doctor().clean
        assert copy.search("where does Tom live", user_id=user_id, method="embedding")[0].text.endswith("Tom lives in Rome")
