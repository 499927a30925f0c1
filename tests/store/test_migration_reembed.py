"""Migration 0019: a store written before secrets' references were embedded alike (`[secret]`,
`MemoryBase.embedding_text`) holds, for each memory whose text refers to a secret, a vector of the old
text. Opened by this version, those memories get the vector of their current text (through the vector
outbox), quietly; every other vector stays as it was."""

from __future__ import annotations

import logging
import math

from sqlalchemy import text

from mirix_py.engine import Mirix
from mirix_py.records import SECRET_REF, SemanticMemory
from mirix_py.store import vector_outbox
from mirix_py.store.vectors import VectorItem
from mirix_py.tools.ops import InsertOp

BEFORE = "0018_input_source_index"  # the schema before 0019


def _cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _insert(mx: Mirix, user_id: str, summary: str) -> str:
    memory = SemanticMemory(user_id=user_id, name="Ann", summary=summary)
    [change] = mx.store.apply([InsertOp(memory=memory)], user_id=user_id, actor="test")
    return change.memory_id


def _as_written_before(mx: Mirix, user_id: str, embedder, plain_id: str) -> dict[str, list[float]]:
    """Give each memory referring to a secret the vector the earlier version made (its text with the
    reference as stored), the plain memory a vector no embedding of its text would give (to see that it
    is left alone), and put the schema back before 0019. The vectors written, by memory id."""
    written: dict[str, list[float]] = {}
    for memory in mx.list(user_id=user_id, limit=100):
        if memory.id == plain_id:
            [written[memory.id]] = embedder.embed(["a lighthouse keeper paints seagulls at dawn"])
        elif SECRET_REF.search(memory._embedded()):  # the text embedded before references were written alike
            [written[memory.id]] = embedder.embed([memory._embedded()])
        else:
            continue
        mx.store.vectors.upsert(user_id, [VectorItem(memory.id, written[memory.id], memory.memory_type.value)])
    with mx.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": BEFORE})
    return written


def test_vectors_of_the_old_text_are_made_again_at_open(tmp_path, embedder, layout, user_id, caplog):
    with Mirix(tmp_path / "data", embedder=embedder, **layout) as mx:
        mx.add("The wifi password for the cabin is Tr0ub4dor&3x, keep it handy.", user_id=user_id)
        redacted_id = _insert(mx, user_id, "Ann's bank card PIN is [redacted:pin]")
        plain_id = _insert(mx, user_id, "Ann keeps bees on the roof of her cabin")
        written = _as_written_before(mx, user_id, embedder, plain_id)
        referring = sorted(set(written) - {plain_id})
        current = {i: embedder.embed([mx.get(i, user_id=user_id).embedding_text()])[0] for i in referring}
    assert redacted_id in referring
    assert {i[:3] for i in referring} == {"sem", "kv_", "epi"}  # the vault entry, the turn that held it
    assert all(_cosine(written[i], current[i]) < 0.99 for i in referring)  # the old vectors differ

    caplog.clear()
    caplog.set_level(logging.INFO, logger="mirix_py.store")
    with Mirix(tmp_path / "data", embedder=embedder, **layout) as mx:
        stored = mx.store.vectors.get(user_id, sorted(written))
        assert all(_cosine(stored[i], current[i]) > 0.999 for i in referring)
        assert _cosine(stored[plain_id], written[plain_id]) > 0.999  # not marked: left as it was
        assert vector_outbox.pending(mx.engine) == []
        assert mx.doctor().clean
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.name == "mirix_py.store"]
    assert any("made again" in r.getMessage() for r in caplog.records)
