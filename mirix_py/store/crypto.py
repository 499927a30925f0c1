"""Encryption at rest for vault secrets and the raw input log (Fernet from `cryptography`)."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from mirix_py.errors import MirixError
from mirix_py.store.private import private_dir


class VaultKeyError(RuntimeError):
    pass


class VaultKeyMismatch(VaultKeyError, MirixError):
    """The database's encrypted values were written under another vault key than this engine's
    (`store.opening.refuse_another_key`): every process on one database must share the key."""


def load_or_create_key(data_dir: Path, explicit: str | None = None) -> bytes:
    """Key from the argument, else MIRIX_VAULT_KEY, else `data_dir/vault.key` (created 0600)."""
    key = explicit or os.environ.get("MIRIX_VAULT_KEY")
    if key:
        return key.encode() if isinstance(key, str) else key
    path = Path(data_dir) / "vault.key"
    if path.exists():
        return path.read_bytes().strip()
    private_dir(path.parent)
    key_bytes = Fernet.generate_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key_bytes)
    return key_bytes


class Cipher:
    def __init__(self, key: bytes) -> None:
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError) as exc:
            raise VaultKeyError("vault key is not a valid Fernet key (32 url-safe base64 bytes)") from exc

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def opens(self, token: str) -> bool:
        """Whether this key decrypts `token` (written under it, and intact)."""
        try:
            self.decrypt(token)
        except (VaultKeyError, ValueError):  # ValueError: a token that is not even ASCII
            return False
        return True

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except InvalidToken as exc:
            raise VaultKeyError("cannot decrypt: wrong vault key or corrupted value") from exc
