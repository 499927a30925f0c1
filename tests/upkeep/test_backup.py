"""Backup while the engine is in use, restore into an empty data directory, key handled explicitly."""

from __future__ import annotations

import asyncio
import io
import json
import tarfile
import threading

import pytest
from cryptography.fernet import Fernet

from mirix_py.upkeep.backup import read_manifest
from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.settings import Settings

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



def _said(role: str, text: str) -> dict[str, str]:
    return {"role": role, "content": text}


def _session(mx, user_id: str, session_id: str = "chat-1"):
    """An OpenAI Agents session kept in `mx`'s data dir (the optional extra: skipped without it)."""
    pytest.importorskip("agents")
    from mirix_py.integrations.openai_agents import MirixSession

    return MirixSession(session_id, user_id=user_id, mx=mx, remember=False)


def _add_items(mx, user_id: str, *items: dict[str, str], session_id: str = "chat-1") -> None:
    asyncio.run(_session(mx, user_id, session_id).add_items(list(items)))


def _items(mx, user_id: str, session_id: str = "chat-1") -> list:
    return asyncio.run(_session(mx, user_id, session_id).get_items())


def test_agent_sessions_are_backed_up_encrypted_and_restored(mx, user_id, tmp_path, embedder):
    _add_items(mx, user_id, _said("user", f"My locker code is {SECRET}."), _said("assistant", "Noted."))
    _add_items(mx, "bob", _said("user", "I like tea."))
    manifest = mx.backup(tmp_path / "b.tar.gz")
    assert manifest["counts"]["agent_sessions"] == 3
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        assert "agent_sessions.jsonl" in tar.getnames()
        raw = b"".join(tar.extractfile(m).read() for m in tar.getmembers())
    assert SECRET.encode() not in raw  # encrypted, as the data dir keeps them

    with pytest.raises(InvalidInput, match="does not open the backup"):
        Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "wrong", vault_key=Fernet.generate_key().decode(),
                      embedder=embedder)
    assert not (tmp_path / "wrong").exists()
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "restored", vault_key=key, embedder=embedder) as copy:
        assert _items(copy, user_id) == [_said("user", f"My locker code is {SECRET}."), _said("assistant", "Noted.")]
        assert _items(copy, "bob") == [_said("user", "I like tea.")]
        _add_items(copy, user_id, _said("user", "And my bike is blue."))  # after the restored ones
        assert [i["content"] for i in _items(copy, user_id)][-2:] == ["Noted.", "And my bike is blue."]
        assert copy.doctor().clean


def test_a_data_dir_without_agent_sessions_backs_up_and_restores(mx, user_id, tmp_path, embedder):
    mx.add("Tom lives in Rome.", user_id=user_id)
    manifest = mx.backup(tmp_path / "b.tar.gz")
    assert "agent_sessions" not in manifest["counts"]
    assert "agent_sessions.jsonl" not in tarfile.open(tmp_path / "b.tar.gz").getnames()
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "restored", vault_key=key, embedder=embedder) as copy:
        assert copy.search("Tom Rome", user_id=user_id, method="bm25")
        assert _items(copy, user_id) == []


def _as_older_backup(src, dest) -> None:
    """`src` as a backup made before agent sessions were backed up: no member, no count."""
    with tarfile.open(src) as new, tarfile.open(dest, "w:gz") as old:
        for member in new.getmembers():
            data = new.extractfile(member).read()
            if member.name == "agent_sessions.jsonl":
                continue
            if member.name == "manifest.json":
                manifest = json.loads(data)
                del manifest["counts"]["agent_sessions"]
                data = json.dumps(manifest).encode()
                member.size = len(data)
            old.addfile(member, io.BytesIO(data))


def test_an_older_backup_without_agent_sessions_restores(mx, user_id, tmp_path, embedder):
    mx.add("Tom lives in Rome.", user_id=user_id)
    _add_items(mx, user_id, _said("user", "Hi."))
    mx.backup(tmp_path / "new.tar.gz")
    _as_older_backup(tmp_path / "new.tar.gz", tmp_path / "old.tar.gz")
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix.restore(tmp_path / "old.tar.gz", tmp_path / "restored", vault_key=key, embedder=embedder) as copy:
        assert copy.search("Tom Rome", user_id=user_id, method="bm25")
        assert _items(copy, user_id) == []


def test_restore_refuses_a_data_dir_that_keeps_agent_sessions(mx, user_id, tmp_path, embedder):
    mx.add("Tom lives in Rome.", user_id=user_id)
    _add_items(mx, user_id, _said("user", "Hi."))
    mx.backup(tmp_path / "b.tar.gz")
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    target = Settings(data_dir=tmp_path / "target", vault_key=key)
    with Mirix(settings=target, embedder=embedder) as kept:  # no memory, but a session
        _add_items(kept, "bob", _said("user", "Yo."), session_id="chat-9")
    with pytest.raises(InvalidInput, match="holds data"):
        Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "target", vault_key=key, embedder=embedder)
    with Mirix(settings=target, embedder=embedder) as kept:
        assert kept.list(user_id=user_id) == [] and _items(kept, user_id) == []
        assert _items(kept, "bob", "chat-9") == [_said("user", "Yo.")]
