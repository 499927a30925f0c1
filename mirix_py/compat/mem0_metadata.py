"""Secrets in mem0's `metadata`, moved into the user's vault before the metadata is kept.

mem0's metadata travels as the caller id of each input (`compat.mem0`): the input log's `source_id`
and every memory's `source_ids`, plain columns the engine's guard does not read (they hold ids). So
what the secret rules find in it is put in a vault entry first and the metadata keeps `[vault:<id>]`,
as a memory's text does. A value is read after its key (`password: Hunter2!xyz`): the key is often
what makes a value a secret.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

from sqlmodel import Session

from mirix_py.records import KnowledgeVaultMemory
from mirix_py.secrets.guard import Known, SecretGuard


class _Vaulting:
    """One metadata's cleaning: the guard, the user's vault values, what the entries are attributed
    to, and the new entries made so far."""

    def __init__(self, guard: SecretGuard, known: Known, user_id: str) -> None:
        self.guard = guard
        self.known = known
        # ids of new entries derive from the owner's id: a fresh one per call never reuses an entry id
        self.owner = SimpleNamespace(id=f"mem0-metadata/{uuid.uuid4().hex}", user_id=user_id,
                                     occurred_at=datetime.now(timezone.utc), source_ids=[], actor="mem0")
        self.new: list[KnowledgeVaultMemory] = []

    def text(self, text: str, where: str) -> str:
        return self.guard.clean_text(text, self.owner, where, self.known, self.new)

    def value(self, value: Any, key: str, where: str) -> Any:
        """A value under `key`, with placeholders; a number holding a secret becomes the placeholder's text."""
        if isinstance(value, dict):
            return self.mapping(value, where)
        if isinstance(value, list):
            return [self.value(v, key, f"{where}/{i}") for i, v in enumerate(value)]
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return value
        said = value if isinstance(value, str) else json.dumps(value)
        prefix = f"{key}: "
        cleaned = self.text(prefix + said, where)
        if cleaned == prefix + said:
            return value
        return cleaned[len(prefix):] if cleaned.startswith(prefix) else cleaned  # a secret across both: all kept

    def mapping(self, value: dict[Any, Any], where: str) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            key = self.text(k, f"{where}/{i}/key") if isinstance(k, str) else k
            out[key] = self.value(v, str(key), f"{where}/{i}")
        return out


def vaulted_metadata(store: Any, metadata: dict[str, Any], user_id: str) -> tuple[dict[str, Any],
                                                                                    list[KnowledgeVaultMemory]]:
    """`metadata` with `[vault:<id>]` where the secret rules (or the user's vault values) found a
    secret, and the vault entries to insert for those the vault does not hold yet."""
    guard: SecretGuard | None = store.guard
    if guard is None or not metadata:
        return metadata, []
    with Session(store.engine) as session:
        known = store.known_secrets(session, user_id)
    vaulting = _Vaulting(guard, known, user_id)
    return vaulting.mapping(metadata, "metadata"), vaulting.new
