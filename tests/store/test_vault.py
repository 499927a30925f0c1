"""Vault secrets: encrypted at rest, never embedded or sent to Chroma, masked unless revealed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mirix_py.errors import InvalidInput
from mirix_py.tools.ops import InsertOp
from mirix_py.records import MASK, KnowledgeVaultMemory
from mirix_py.store.crypto import Cipher, VaultKeyError, load_or_create_key

SECRET = "zq7-PLANTED-Secret-4471x"


def _all_bytes(folder: Path) -> bytes:
    blob = b""
    for path in folder.rglob("*"):
        if path.is_file():
            blob += path.read_bytes()
    return blob


def test_planted_secret_is_nowhere_on_disk(tmp_path, embedder, user_id):
    from mirix_py.engine import Mirix

    data = tmp_path / "data"
    with Mirix(data, embedder=embedder) as mx:
        result = mx.add(f"my wifi password is {SECRET} and my api key is sk-proj-{SECRET}abcdef0123",
                        user_id=user_id)
        vault = mx.list(user_id=user_id, memory_types=["knowledge_vault"])
        assert {v.entry_type for v in vault} >= {"password", "api_key"}
        assert all(v.secret_value == MASK for v in vault)
        revealed = {mx.get(v.id, user_id=user_id, reveal=True).secret_value for v in vault}
        assert SECRET in revealed
        episode = mx.list(user_id=user_id, memory_types=["episodic"])[0]
        assert SECRET not in episode.summary and "[vault:kv_" in episode.summary
        assert result.status.value == "processed"
        mx.update(vault[0].id, user_id=user_id, caption="home wifi")  # history of an update too
        for hit in mx.search("wifi password", user_id=user_id, limit=20):
            assert SECRET not in hit.text and SECRET not in hit.memory.model_dump_json()
    sql_bytes = b"".join((data / name).read_bytes() for name in os.listdir(data) if name.startswith("mirix.db"))
    assert sql_bytes and SECRET.encode() not in sql_bytes
    chroma = _all_bytes(data / "chroma")
    assert chroma and SECRET.encode() not in chroma


def test_secret_update_and_masked_write_back(mx, user_id):
    (change,) = mx.store.apply([InsertOp(memory=KnowledgeVaultMemory(
        user_id=user_id, caption="bank PIN", secret_value="1234", sensitivity="high"))], user_id=user_id, actor="t")
    masked = mx.get(change.memory_id, user_id=user_id)
    mx.update(change.memory_id, user_id=user_id, secret_value=masked.secret_value, caption="bank card PIN")
    assert mx.get(change.memory_id, user_id=user_id, reveal=True).secret_value == "1234"
    mx.update(change.memory_id, user_id=user_id, secret_value="9876")
    assert mx.get(change.memory_id, user_id=user_id, reveal=True).secret_value == "9876"
    for event in mx.history(change.memory_id, user_id=user_id):
        # the states' content, not their random id or timestamps (which may hold "1234" by chance)
        after, before = (" ".join(str(v) for k, v in (state or {}).items()
                                  if k not in ("id", "created_at", "updated_at", "occurred_at"))
                         for state in (event.after, event.before))
        assert "1234" not in after and "9876" not in before
        assert all(state is None or state["secret_value"] == MASK for state in (event.before, event.after))


def test_key_file_is_private_and_reused(tmp_path, monkeypatch):
    monkeypatch.delenv("MIRIX_VAULT_KEY", raising=False)
    key = load_or_create_key(tmp_path)
    path = tmp_path / "vault.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_key(tmp_path) == key


def test_key_from_environment_wins(tmp_path, monkeypatch):
    from cryptography.fernet import Fernet

    env_key = Fernet.generate_key().decode()
    monkeypatch.setenv("MIRIX_VAULT_KEY", env_key)
    assert load_or_create_key(tmp_path) == env_key.encode()
    assert not (tmp_path / "vault.key").exists()


def test_wrong_key_is_a_clear_error():
    from cryptography.fernet import Fernet

    token = Cipher(Fernet.generate_key()).encrypt("x")
    with pytest.raises(VaultKeyError, match="wrong vault key"):
        Cipher(Fernet.generate_key()).decrypt(token)
    with pytest.raises(VaultKeyError):
        Cipher(b"not-a-key")


def test_input_log_is_encrypted_but_readable(mx, user_id):
    result = mx.add(f"remember {SECRET}", user_id=user_id)
    record = mx.input_status(result.input_ids[0])
    assert record.messages[0].content == f"remember {SECRET}"
    assert record.status.value == "processed"
    with pytest.raises(InvalidInput):
        mx.input_status("in_missing")
