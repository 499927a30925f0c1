"""The last line before a memory is written: no secret in plain text, whoever wrote it.

The update flows redact what the secret rules find before any manager sees a batch, but memories
are also written by the API (`update`, `core_append`), by `import`, by a model's tool calls, from
metadata such as window titles. `SecretGuard.clean` looks at every text field of a memory about to
be written: a secret the rules find moves into a new vault entry (or points at the entry that
already holds it) and the text keeps `[vault:<id>]`; a value already in the user's vault (`known`,
e.g. one a model found and the rules did not) is replaced the same way. A vault entry's caption and
source get `[secret]` where any secret, its own included, was.

The detector is passed in (the engine gives it `secrets.detection.find_secrets`), so a test or
another detector can stand in for the rules.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from mirix_py.records import MASK, SECRET_REF, SECRET_WORD, KnowledgeVaultMemory, Memory, Sensitivity

PLACEHOLDER = SECRET_REF
CAPTION_PLACEHOLDER = SECRET_WORD
MIN_KNOWN_CHARS = 4  # shorter vault values ("123") are left to the rules: they would hit every count

# Fields that are not free text (enumerations, numbers): never rewritten.
_NOT_TEXT = frozenset({"label", "limit", "entry_type", "sensitivity", "secret_value", "memory_type"})
# Ids and timestamps: machine-made, never rewritten (a random hex id can hold a Luhn-valid digit run).
_NOT_GUARDED = frozenset({"id", "user_id", "source_ids", "created_at", "updated_at", "occurred_at"})
UNGUARDED_FIELDS = _NOT_TEXT | _NOT_GUARDED


def guarded_fields(dump: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a record's dump (a history event's `before` or `after`) that `SecretGuard.clean`
    keeps free of secrets: the only ones a scan for plaintext secrets should look at."""
    return {k: v for k, v in dump.items() if k not in UNGUARDED_FIELDS}


class Secret(Protocol):
    """One secret a detector found (read-only: the secret rules return frozen matches)."""

    @property
    def entry_type(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def sensitivity(self) -> str: ...
    @property
    def caption(self) -> str: ...


Detector = Callable[[str], Sequence[Secret]]


def known_pattern(values: Sequence[str]) -> re.Pattern[str] | None:
    """One regex for the vault's values as whole tokens, longest first."""
    usable = sorted({v for v in values if len(v.strip()) >= MIN_KNOWN_CHARS}, key=len, reverse=True)
    if not usable:
        return None
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(re.escape(v) for v in usable) + r")(?![A-Za-z0-9])")


@dataclass
class Known:
    """The user's vault values: value -> vault id (one of them when a value is stored twice)."""

    ids: dict[str, str] = field(default_factory=dict)
    # seeds the ids of new entries with the write they belong to: the same in both plans of one
    # write, new in the next, so a later secret in the same place never takes an id already used
    salt: str = ""
    _pattern: re.Pattern[str] | None = None
    _compiled_for: int = -1

    def add(self, value: str, vault_id: str) -> None:
        if value and value != MASK and value not in self.ids:
            self.ids[value] = vault_id

    def pattern(self) -> re.Pattern[str] | None:
        if self._compiled_for != len(self.ids):
            self._pattern, self._compiled_for = known_pattern(list(self.ids)), len(self.ids)
        return self._pattern


class SecretGuard:
    """`detect` must be a pure function of the text: its results are kept for the last
    `cache_size` texts. A memory's text fields repeat one another (an episode's summary, details and
    search text hold the same turn), so LoCoMo's 2,760 turns asked the detector 11,115 times for
    2,851 distinct texts."""

    def __init__(self, detect: Detector, *, cache_size: int = 4096) -> None:
        self.detect = detect
        self._cache: OrderedDict[str, tuple[Secret, ...]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _detect(self, text: str) -> tuple[Secret, ...]:
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        found = tuple(self.detect(text))
        with self._lock:
            self._cache[text] = found
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return found

    def matches(self, text: str) -> list[Secret]:
        """The detector's matches, without any that touch a placeholder already in the text."""
        if not text:
            return []
        spans = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)]
        found = self._detect(text)
        return [m for m in found if not any(m.start < e and s < m.end for s, e in spans)]

    def clean(self, memory: Memory, known: Known) -> tuple[Memory, list[KnowledgeVaultMemory]]:
        """`memory` with placeholders where its texts held secrets, and the vault entries to insert
        for secrets not stored yet (`known` gains them, so a value repeated later reuses the entry)."""
        if isinstance(memory, KnowledgeVaultMemory):
            return self._clean_vault(memory, known), []
        new: list[KnowledgeVaultMemory] = []
        changes: dict[str, object] = {}
        for name, value in guarded_fields(memory.model_dump()).items():
            cleaned = self._clean_field(value, memory, name, known, new)
            if cleaned != value:
                changes[name] = cleaned
        if not changes:
            return memory, new
        return memory.model_copy(update=changes), new

    def _clean_field(self, value: Any, memory: Memory, name: str, known: Known,
                     new: list[KnowledgeVaultMemory]) -> Any:
        """A field's value with placeholders: a text, each text of a list, and each text key of a
        mapping (a core block's `said` is keyed by its lines) with its text value."""
        if isinstance(value, str):
            return self.clean_text(value, memory, name, known, new)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [self.clean_text(v, memory, f"{name}/{i}", known, new) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {(self.clean_text(k, memory, f"{name}/{i}", known, new) if isinstance(k, str) else k):
                    (self.clean_text(v, memory, f"{name}/{i}/value", known, new) if isinstance(v, str) else v)
                    for i, (k, v) in enumerate(value.items())}
        return value

    def clean_text(self, text: str, memory: Any, where: str, known: Known,
                   new: list[KnowledgeVaultMemory]) -> str:
        """One text of `memory` (anything with `id`, `user_id`, `occurred_at`, `source_ids`; `where`
        names the text, so a new entry's id is the same in both plans of a write: `Known.salt`) with
        placeholders; new entries go to `new`."""
        if not text:
            return text
        out: list[str] = []
        cursor = 0
        for m in sorted(self.matches(text), key=lambda m: m.start):
            if m.start < cursor:
                continue
            vault_id = known.ids.get(m.value)
            if vault_id is None:
                vault_id = f"kv_{uuid.uuid5(uuid.NAMESPACE_URL, f'{known.salt}{memory.id}/{where}/{m.start}').hex}"
                new.append(KnowledgeVaultMemory(
                    id=vault_id, user_id=memory.user_id, entry_type=m.entry_type,
                    source=getattr(memory, "actor", "") or getattr(memory, "source", "") or "",
                    sensitivity=Sensitivity(m.sensitivity), secret_value=m.value, caption=m.caption,
                    occurred_at=memory.occurred_at, source_ids=list(memory.source_ids),
                ))
                known.add(m.value, vault_id)
            out += [text[cursor:m.start], f"[vault:{vault_id}]"]
            cursor = m.end
        out.append(text[cursor:])
        result = "".join(out)
        pattern = known.pattern()
        if pattern is not None:
            result = pattern.sub(lambda g: f"[vault:{known.ids[g.group()]}]", result)
        return result

    def _clean_vault(self, memory: KnowledgeVaultMemory, known: Known) -> KnowledgeVaultMemory:
        changes: dict[str, str] = {}
        for name in ("caption", "source"):
            text = getattr(memory, name)
            cleaned = self.caption_text(text, memory.secret_value, known)
            if cleaned != text:
                changes[name] = cleaned
        return memory.model_copy(update=changes) if changes else memory

    def caption_text(self, text: str, own_value: str, known: Known) -> str:
        """A vault entry's caption: `[secret]` for its own value, any detected secret and any known value."""
        if not text:
            return text
        if own_value and own_value != MASK and len(own_value.strip()) > 0:
            text = text.replace(own_value, CAPTION_PLACEHOLDER)
        out: list[str] = []
        cursor = 0
        for m in sorted(self.matches(text), key=lambda m: m.start):
            if m.start < cursor:
                continue
            out += [text[cursor:m.start], CAPTION_PLACEHOLDER]
            cursor = m.end
        out.append(text[cursor:])
        text = "".join(out)
        pattern = known.pattern()
        return pattern.sub(CAPTION_PLACEHOLDER, text) if pattern is not None else text


def known_from(pairs: Mapping[str, str] | Sequence[tuple[str, str]]) -> Known:
    known = Known()
    for value, vault_id in (pairs.items() if isinstance(pairs, Mapping) else pairs):
        known.add(value, vault_id)
    return known
