"""The store-free half of `mirix doctor --secrets`: what a finding is, which texts hold a secret,
placeholders in a logged record, and the scan of a data dir's raw files.

The store's half (`store.secret_scan`) walks its rows and indexes with these, and repairs them.
A finding names the place (table, column, row id, or file) and the kind of secret, never the secret.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from mirix_py.records import KnowledgeVaultMemory
from mirix_py.secrets.guard import MIN_KNOWN_CHARS, UNGUARDED_FIELDS, Known, SecretGuard


@dataclass(frozen=True)
class Finding:
    """Where a plaintext secret is: `place` ("memory.fields", "memory_history.before", "file", ...),
    `id` (row id, memory id or file path relative to the data dir) and the kind of secret."""

    place: str
    id: str
    entry_type: str
    user_id: str | None = None


@dataclass
class SecretReport:
    findings: list[Finding] = field(default_factory=list)
    payload_secrets: int = 0  # inputs whose encrypted text holds a secret (kept for retries)
    repaired: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.findings

    def summary(self) -> dict[str, Any]:
        by_place = Counter(f.place for f in self.findings)
        return {"clean": self.clean, "findings": len(self.findings), "by_place": dict(sorted(by_place.items())),
                "where": [f"{f.place} {f.id} ({f.entry_type})" for f in self.findings[:200]],
                "encrypted_inputs_holding_secrets": self.payload_secrets, "repaired": self.repaired}


# ---------------------------------------------------------------- texts


def kinds(guard: SecretGuard, text: str, known: Known) -> list[str]:
    """Kinds of secret in `text`: the rules' entry types, "vault value" for a known one."""
    found = [m.entry_type for m in guard.matches(text)]
    pattern = known.pattern()
    if pattern is not None and pattern.search(text):
        found.append("vault value")
    return found


def clean_record(guard: SecretGuard, value: Any, owner: Any, known: Known,
                 new: list[KnowledgeVaultMemory]) -> Any:
    """A history event's record with placeholders in the fields the guard cleans (ids and times kept)."""
    if not isinstance(value, dict):
        return clean_json(guard, value, owner, known, new)
    return {k: v if k in UNGUARDED_FIELDS else clean_json(guard, v, owner, known, new, f"/{k}")
            for k, v in value.items()}


def clean_json(guard: SecretGuard, value: Any, owner: Any, known: Known, new: list[KnowledgeVaultMemory],
               where: str = "") -> Any:
    """`value` (a JSON-like value) with placeholders in each of its strings; `where` names the place."""
    if isinstance(value, str):
        return guard.clean_text(value, owner, where, known, new)
    if isinstance(value, dict):
        return {clean_json(guard, k, owner, known, new, f"{where}/{i}"): clean_json(guard, v, owner, known, new, f"{where}/{k}")
                for i, (k, v) in enumerate(value.items())}
    if isinstance(value, list):
        return [clean_json(guard, v, owner, known, new, f"{where}/{i}") for i, v in enumerate(value)]
    return value


# ---------------------------------------------------------------- files


def database_files(data_dir: Path) -> list[Path]:
    """The files a data dir keeps text in: SQLite's (with -wal/-shm) and the embedded Chroma's."""
    files = [p for p in sorted(Path(data_dir).glob("*")) if p.is_file() and ".db" in p.name]
    chroma = Path(data_dir) / "chroma"
    if chroma.exists():
        files += [p for p in sorted(chroma.rglob("*")) if p.is_file()]
    return files


# Chroma's graph files hold float vectors, neighbour lists and labels, never a text the engine wrote
# there (vault values are never embedded; documents live in `chroma.sqlite3`). But Chroma writes them
# at their full preallocated capacity from uninitialised memory, so the unused part holds stale bytes
# of this process's heap: pieces of SQL, JSON and search texts (seen: "[28 November 2026, 03:42]
# user: login: ada / pass: [vault:kv_…]"). The engine zeroes them on close and `repair` does too
# (`store/chroma_files.py`); until then a 4-character value turns up there by chance, while a value of
# 16 characters or more found there is a real copy, and is reported.
BINARY_MIN_CHARS = 16


def holds_text(path: Path) -> bool:
    """SQLite database files (and their -wal, -shm, -journal) keep texts as UTF-8: every value is
    looked for; Chroma's other files only long ones (`BINARY_MIN_CHARS`)."""
    name = path.name
    return ".db" in name or name.startswith("chroma.sqlite3")


def _value_pattern(values: Iterable[str]) -> re.Pattern[bytes] | None:
    usable = sorted(set(values), key=len, reverse=True)
    if not usable:
        return None
    return re.compile(rb"(?<![A-Za-z0-9])(?:" + b"|".join(re.escape(v.encode()) for v in usable) + rb")(?![A-Za-z0-9])")


def scan_files(data_dir: Path, values: Iterable[str]) -> list[Finding]:
    """Whole-token occurrences of known secret values in the raw bytes of the database files: every
    value of `MIN_KNOWN_CHARS` or more in files that keep text, only values of `BINARY_MIN_CHARS` or
    more in Chroma's binary graph files (a shorter one turns up in their stale bytes by chance)."""
    values = {v for v in values if len(v.strip()) >= MIN_KNOWN_CHARS}
    text_pattern = _value_pattern(values)
    binary_pattern = _value_pattern(v for v in values if len(v.encode()) >= BINARY_MIN_CHARS)
    found: list[Finding] = []
    for path in database_files(data_dir):
        pattern = text_pattern if holds_text(path) else binary_pattern
        if pattern is None:
            continue
        try:
            blob = path.read_bytes()
        except OSError:
            continue
        count = len(pattern.findall(blob))
        if count:
            found.append(Finding("file", f"{path.relative_to(data_dir)} ({count} copies)", "vault value"))
    return found
