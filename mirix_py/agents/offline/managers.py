"""Offline memory managers: deterministic rules in the shape of the LLM flow.

`route()` plays the meta memory manager (which memory types does this batch touch?), and each
`*_ops()` function plays one memory manager, turning the batch into typed operations
(insert / update / merge / delete) that the store applies in one transaction per manager.
The vault runs first and its secrets are redacted from what every other manager sees.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Sequence

from mirix_py.agents.offline.rules import (
    classify_resource, extract_facts, extract_procedure, extract_self_statements, find_secrets, redact,
)
from mirix_py.ops import InsertOp, Op, UpdateOp
from mirix_py.records import (
    CoreMemory, EpisodicMemory, InputKind, InputRecord, KnowledgeVaultMemory, MemoryType, ProceduralMemory,
    ResourceMemory, SemanticMemory,
)

EPISODE_SUMMARY_CHARS = 600


@dataclass(frozen=True)
class BatchMessage:
    """One message of a batch, after redaction, with everything a manager needs."""

    input_id: str
    kind: InputKind
    role: str
    speaker: str
    text: str
    occurred_at: datetime
    source_ids: tuple[str, ...]
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass
class PreparedBatch:
    user_id: str
    messages: list[BatchMessage]
    vault_ops: list[Op] = field(default_factory=list)


def vault_id(input_id: str, message_index: int, offset: int) -> str:
    return f"kv_{uuid.uuid5(uuid.NAMESPACE_URL, f'{input_id}/{message_index}/{offset}').hex}"


def prepare_batch(user_id: str, inputs: Sequence[InputRecord]) -> PreparedBatch:
    """Flatten inputs into messages; move secrets into vault inserts and redact them everywhere else."""
    batch = PreparedBatch(user_id=user_id, messages=[])
    for record in inputs:
        for index, message in enumerate(record.messages):
            occurred_at = message.occurred_at or record.occurred_at
            sources = tuple(s for s in (record.id, record.source_id, message.id) if s)
            text = message.content
            matches = find_secrets(text)
            if matches:
                # ids derived from the input: processing the same input again yields the same ids
                ids = {m: vault_id(record.id, index, m.start) for m in matches}
                for match, memory_id in ids.items():
                    batch.vault_ops.append(InsertOp(memory=KnowledgeVaultMemory(
                        id=memory_id, user_id=user_id, entry_type=match.entry_type, source=message.speaker,
                        sensitivity=match.sensitivity, secret_value=match.value, caption=match.caption,
                        occurred_at=occurred_at, source_ids=list(sources),
                    )))
                text = redact(text, matches, lambda m: f"[vault:{ids[m]}]")
            batch.messages.append(BatchMessage(
                input_id=record.id, kind=record.kind, role=message.role, speaker=message.speaker, text=text,
                occurred_at=occurred_at, source_ids=sources, metadata=dict(record.metadata),
            ))
    return batch


def route(batch: PreparedBatch) -> list[MemoryType]:
    """The offline meta memory manager: which managers have something to do."""
    chosen: list[MemoryType] = []
    if batch.vault_ops:
        chosen.append(MemoryType.knowledge_vault)
    if batch.messages:
        chosen.append(MemoryType.episodic)
    checks = [
        (MemoryType.core, lambda m: m.role == "user" and bool(extract_self_statements(m.text))),
        (MemoryType.semantic, lambda m: bool(extract_facts(m.text, m.speaker))),
        (MemoryType.procedural, lambda m: extract_procedure(m.text) is not None),
        (MemoryType.resource, lambda m: classify_resource(m.text, kind=m.kind.value) is not None),
    ]
    for memory_type, fires in checks:
        if any(fires(m) for m in batch.messages):
            chosen.append(memory_type)
    return chosen


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _screen_label(m: BatchMessage) -> str:
    app = m.metadata.get("app") or "screen"
    window = m.metadata.get("window_title")
    return f"{app} — {window}" if window else app


def episodic_ops(batch: PreparedBatch) -> list[Op]:
    """One event per message; a document or screenshot is one event that points at its resource."""
    ops: list[Op] = []
    for m in batch.messages:
        if m.kind is InputKind.screenshot:
            event_type, summary = "screen_activity", f"Viewed {_screen_label(m)}: {_short(m.text, 300)}"
        elif m.kind is InputKind.document:
            draft = classify_resource(m.text, kind="document")
            title = draft.title if draft else _short(m.text, 80)
            event_type, summary = "document", f"Added document: {title}"
        else:
            event_type, summary = "message", _short(m.text, EPISODE_SUMMARY_CHARS)
        long = m.kind is InputKind.messages or m.kind is InputKind.text
        details = "full text kept as a resource" if long and len(m.text) > EPISODE_SUMMARY_CHARS else ""
        ops.append(InsertOp(memory=EpisodicMemory(
            user_id=batch.user_id, event_type=event_type, summary=summary, details=details,
            actor=m.speaker, occurred_at=m.occurred_at, source_ids=list(m.source_ids),
        )))
    return ops


CoreLookup = Callable[[str], CoreMemory | None]


def core_ops(batch: PreparedBatch, current_block: CoreLookup) -> list[Op]:
    """Append self-statements to the `human` block; when it would overflow, keep the newest lines."""
    new_lines: list[str] = []
    sources: list[str] = []
    for m in batch.messages:
        if m.role != "user":
            continue
        for fact in extract_self_statements(m.text):
            new_lines.append(f"{m.speaker}: {fact}" if m.speaker not in ("user", "") else fact)
            sources.extend(m.source_ids)
    if not new_lines:
        return []
    block = current_block("human")
    old_lines = [ln for ln in (block.value.splitlines() if block else []) if ln.strip()]
    lines = list(dict.fromkeys([*old_lines, *new_lines]))
    if block is not None and lines == old_lines:
        return []
    limit = block.limit if block else CoreMemory.model_fields["limit"].default
    while lines and len("\n".join(lines)) > limit:
        lines.pop(0)  # rewrite: the oldest facts make room for the newest
    value = "\n".join(lines)
    if block is None:
        return [InsertOp(memory=CoreMemory(user_id=batch.user_id, label="human", value=value, source_ids=sources))]
    return [UpdateOp(memory_id=block.id, fields={"value": value}, add_source_ids=sources)]


SemanticLookup = Callable[[str], SemanticMemory | None]


def semantic_ops(batch: PreparedBatch, find_by_name: SemanticLookup) -> list[Op]:
    """One semantic memory per named thing; a new fact about a known name updates it in place."""
    drafts: dict[str, dict] = {}  # casefolded name -> what to write for it
    for m in batch.messages:
        for fact in extract_facts(m.text, m.speaker):
            key = fact.name.casefold()
            entry = drafts.get(key)
            if entry is None:
                existing = find_by_name(fact.name)
                entry = drafts[key] = {"existing": existing, "name": fact.name, "first": m, "sources": [],
                                       "facts": [] if existing is None else [existing.summary, *filter(None, existing.details.split("; "))],
                                       "new": False}
            if fact.summary not in entry["facts"]:
                entry["facts"].append(fact.summary)
                entry["sources"].extend(m.source_ids)
                entry["new"] = True
    ops: list[Op] = []
    for entry in drafts.values():
        if not entry["new"]:
            continue
        summary, *rest = entry["facts"]
        existing = entry["existing"]
        if existing is None:
            first = entry["first"]
            ops.append(InsertOp(memory=SemanticMemory(
                user_id=batch.user_id, name=entry["name"], summary=summary, details="; ".join(rest),
                source=first.speaker, occurred_at=first.occurred_at, source_ids=list(dict.fromkeys(entry["sources"])),
            )))
        else:
            ops.append(UpdateOp(memory_id=existing.id, fields={"details": "; ".join(rest)},
                                add_source_ids=list(dict.fromkeys(entry["sources"]))))
    return ops


def procedural_ops(batch: PreparedBatch) -> list[Op]:
    ops: list[Op] = []
    for m in batch.messages:
        draft = extract_procedure(m.text)
        if draft is not None:
            ops.append(InsertOp(memory=ProceduralMemory(
                user_id=batch.user_id, entry_type=draft.entry_type, summary=draft.summary, steps=list(draft.steps),
                occurred_at=m.occurred_at, source_ids=list(m.source_ids),
            )))
    return ops


def resource_ops(batch: PreparedBatch) -> list[Op]:
    ops: list[Op] = []
    for m in batch.messages:
        draft = classify_resource(m.text, kind=m.kind.value)
        if draft is not None:
            title = f"Screenshot of {_screen_label(m)}" if m.kind is InputKind.screenshot else draft.title
            ops.append(InsertOp(memory=ResourceMemory(
                user_id=batch.user_id, title=title, summary=draft.summary, resource_type=draft.resource_type,
                content=draft.content, occurred_at=m.occurred_at, source_ids=list(m.source_ids),
            )))
    return ops
